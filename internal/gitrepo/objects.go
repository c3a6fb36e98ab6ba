package gitrepo

// What the held-out check (internal/heldout) reads: the tree the last
// Stage wrote, and the object store that holds it with the starting
// commit.

// StagedTree returns the tree the last Stage wrote (loop.StagedTreer), ""
// when the index has changed since.
func (r *Repo) StagedTree() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.staged {
		return ""
	}
	return r.stagedTree
}

// ObjectEnv returns the environment that points a git command at the
// trusted object store holding the starting commit and the staged trees
// (heldout.Git's Env): the harness's private git directory, never the
// repository's .git/objects, which the agent can rewrite.
func (r *Repo) ObjectEnv() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p == nil {
		return []string{"GIT_DIR=" + r.gitDir, "GIT_NO_REPLACE_OBJECTS=1"}
	}
	return []string{"GIT_DIR=" + r.p.gitDir(), "GIT_OBJECT_DIRECTORY=" + r.p.objects(), "GIT_NO_REPLACE_OBJECTS=1"}
}
