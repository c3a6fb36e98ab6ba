package gitrepo

import (
	"context"
	"fmt"
)

// FetchBranch fetches refs/heads/<branch> from the remote into the trusted
// store (index-pack checks every object it receives) and returns its commit, without moving any local branch
// (StartBranch does that). A shallow clone (actions/checkout's default)
// fetches what it lacks. Without a remote, or when the remote has no such
// branch, the local branch's commit is returned; when neither exists it is
// an error.
func (r *Repo) FetchBranch(ctx context.Context, branch string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := validBranch(branch); err != nil {
		return "", err
	}
	if err := r.begin(ctx); err != nil {
		return "", err
	}
	ref := "refs/heads/" + branch
	if fetchURL, _, display, ok := r.remoteURLs(); ok {
		sha, err := r.fetchRef(ctx, fetchURL, display, ref)
		if err != nil {
			return "", err
		}
		if sha != "" {
			return sha, nil
		}
	}
	if sha := r.readPrivRef(ref); sha != "" {
		return sha, nil
	}
	sha, err := r.resolve(ctx, ref)
	if err != nil {
		return "", err
	}
	if sha == "" {
		return "", fmt.Errorf("branch %s exists neither on the remote nor locally", branch)
	}
	return sha, nil
}
