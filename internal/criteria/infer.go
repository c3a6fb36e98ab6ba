package criteria

import (
	"context"
	"fmt"
)

// Infer proposes the completion criterion for a task in the repository at
// dir. It reads files only. The error is for a directory that cannot be read
// (or a cancelled context); every other problem (a malformed manifest, an
// unparseable workflow) is named in the rationale and the other layers go
// on.
func Infer(ctx context.Context, dir, task string) (Proposal, error) {
	return InferWith(ctx, dir, task, Options{})
}

// InferWithHint is Infer with the completion hint of a trigger phrase
// ("tests pass", "coverage is above 80%"), which refines the criterion class.
func InferWithHint(ctx context.Context, dir, task, hint string) (Proposal, error) {
	return InferWith(ctx, dir, task, Options{Hint: hint})
}

// Options refine Infer.
type Options struct {
	// Hint is the completion hint of a trigger phrase ("tests pass").
	Hint string
	// Host is the machine the check will run on (nil: this one, its PATH).
	Host Host
}

// InferWith is Infer with options.
func InferWith(ctx context.Context, dir, task string, opts Options) (Proposal, error) {
	r, err := openRepo(dir)
	if err != nil {
		return Proposal{}, err
	}
	defer r.close()
	return inferRepo(ctx, r, task, opts)
}

// inferRepo runs the layers on an open repository.
func inferRepo(ctx context.Context, r *repo, task string, opts Options) (Proposal, error) {
	hint := opts.Hint
	intent := classifyTask(task, hint)
	if intent.class == ClassRefused {
		return Proposal{
			Task:          task,
			Class:         ClassRefused,
			Workdir:       ".",
			Confidence:    ConfidenceHigh,
			Rationale:     []Finding{finding(LayerTaskVerb, "task", "refused: "+intent.refusal)},
			RefusalReason: intent.refusal,
		}, nil
	}
	if err := ctx.Err(); err != nil {
		return Proposal{}, fmt.Errorf("inferring the completion criterion: %w", err)
	}
	if opts.Host != nil {
		r.host = opts.Host
	}
	m := newManifests(r)
	m.host = r.host
	ev := &evidence{intent: intent, m: m, r: r}

	jobs := readCI(r)
	ev.hasCI = len(jobs) > 0
	ev.ci, ev.ciNotes = ciCandidates(jobs, m)
	if err := ctx.Err(); err != nil {
		return Proposal{}, fmt.Errorf("inferring the completion criterion: %w", err)
	}
	ev.context, ev.ctxFacts = contextCandidates(r, m)
	ev.aiwg, ev.aiwgFact = aiwgCandidates(r, m)

	// Manifests: the root, the directories CI and the context files work
	// in, and, when the root has none, the top-level directories that do.
	dirs := []string{"."}
	seen := map[string]bool{".": true}
	if ev.taskDir = taskDir(task, r); ev.taskDir != "" {
		dirs = append(dirs, ev.taskDir)
		seen[ev.taskDir] = true
	}
	for _, pool := range [][]candidate{ev.ci, ev.context, ev.aiwg} {
		for _, c := range pool {
			if !seen[c.workdir] {
				seen[c.workdir] = true
				dirs = append(dirs, c.workdir)
			}
		}
	}
	if !m.at(".").hasManifest() {
		for _, s := range r.subdirs(".") {
			if !seen[s] && m.at(s).hasManifest() {
				seen[s] = true
				dirs = append(dirs, s)
			}
		}
	}
	for _, d := range dirs {
		ev.manifest = append(ev.manifest, m.at(d).candidates...)
	}
	for i := range ev.manifest {
		ev.manifest[i].order = i
	}
	for _, pool := range [][]candidate{ev.ci, ev.context, ev.aiwg, ev.manifest} {
		checkRunnable(r, pool)
	}
	if err := ctx.Err(); err != nil {
		return Proposal{}, fmt.Errorf("inferring the completion criterion: %w", err)
	}
	return synthesize(task, ev), nil
}
