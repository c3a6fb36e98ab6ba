package action

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aiwg/agent-loop/internal/criteria"
	ghforge "github.com/aiwg/agent-loop/internal/forge/github"
)

// trigger is what started the Action, read from the event payload.
type trigger struct {
	Event     string
	Task      string
	Hint      string
	Number    int // issue or pull request to talk on (0: none)
	IsPR      bool
	CommentID int64
	Actor     string
	// CheckActor: the actor's permission must be write, maintain or admin.
	CheckActor bool
	// HeadRef/HeadSHA: a pull request's head to work on (same repository).
	HeadRef string
	HeadSHA string
	BaseRef string
	Fork    bool
	// Key is stable for the same trigger (repository plus issue or pull
	// request, or the dispatch task), so a re-run finds its state.
	Key  string
	Slug string
	// Skip is non-empty when the event is not for agent-loop.
	Skip          string
	DefaultBranch string
}

// path reads a nested value of the event payload ("comment.user.login").
func path(m map[string]any, p string) any {
	var v any = m
	for _, k := range strings.Split(p, ".") {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

func pstr(m map[string]any, p string) string {
	s, _ := path(m, p).(string)
	return s
}

func pint(m map[string]any, p string) int64 {
	switch x := path(m, p).(type) {
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

// resolveTrigger decides what the event asks for.
func resolveTrigger(ctx context.Context, event string, ev map[string]any, repoFull, inputTask, phrase string, gh *ghforge.Client) (trigger, error) {
	t := trigger{Event: event, Task: strings.TrimSpace(inputTask), DefaultBranch: pstr(ev, "repository.default_branch")}
	switch event {
	case "issue_comment":
		if a := pstr(ev, "action"); a != "" && a != "created" {
			t.Skip = "comment " + a + ", not created"
			return t, nil
		}
		if pstr(ev, "comment.user.type") == "Bot" {
			t.Skip = "comment by a bot"
			return t, nil
		}
		body := pstr(ev, "comment.body")
		task, hint, ok := commentTask(body, phrase)
		if !ok {
			t.Skip = fmt.Sprintf("the comment does not start with %q or a trigger phrase", phrase)
			return t, nil
		}
		if t.Task == "" {
			t.Task = task
		}
		t.Hint = hint
		t.Number = int(pint(ev, "issue.number"))
		t.IsPR = path(ev, "issue.pull_request") != nil
		t.CommentID = pint(ev, "comment.id")
		t.Actor, t.CheckActor = pstr(ev, "comment.user.login"), true
		if t.IsPR && gh != nil {
			pr, err := gh.GetPR(ctx, t.Number)
			if err != nil {
				return t, fmt.Errorf("reading pull request #%d: %w", t.Number, err)
			}
			t.HeadRef, t.HeadSHA, t.BaseRef, t.Fork = pr.HeadRef, pr.HeadSHA, pr.BaseRef, !pr.SameRepo
		}
	case "issues":
		if a := pstr(ev, "action"); a != "labeled" && a != "opened" {
			t.Skip = "issue " + a
			return t, nil
		}
		label := pstr(ev, "label.name")
		if pstr(ev, "action") == "labeled" && label != "agent-loop" && label != strings.TrimPrefix(phrase, "/") {
			t.Skip = fmt.Sprintf("label %q is not agent-loop", label)
			return t, nil
		}
		if t.Task == "" {
			t.Task = strings.TrimSpace(pstr(ev, "issue.title") + "\n\n" + pstr(ev, "issue.body"))
		}
		t.Number = int(pint(ev, "issue.number"))
		t.Actor, t.CheckActor = pstr(ev, "sender.login"), true
	case "pull_request", "pull_request_target":
		t.Number = int(pint(ev, "pull_request.number"))
		t.IsPR = true
		t.HeadRef, t.HeadSHA = pstr(ev, "pull_request.head.ref"), pstr(ev, "pull_request.head.sha")
		t.BaseRef = pstr(ev, "pull_request.base.ref")
		t.Fork = !strings.EqualFold(pstr(ev, "pull_request.head.repo.full_name"), repoFull)
		t.Actor, t.CheckActor = pstr(ev, "sender.login"), true
		if t.Task == "" {
			t.Task = fmt.Sprintf("Make the checks of pull request #%d pass: %s", t.Number, pstr(ev, "pull_request.title"))
		}
	default: // workflow_dispatch, schedule, push, ...
		if t.Task == "" {
			t.Task = strings.TrimSpace(pstr(ev, "inputs.task"))
		}
	}
	switch {
	case t.Number > 0 && t.IsPR:
		t.Key, t.Slug = fmt.Sprintf("%s#pr-%d", repoFull, t.Number), fmt.Sprintf("pr %d", t.Number)
	case t.Number > 0:
		t.Key, t.Slug = fmt.Sprintf("%s#issue-%d", repoFull, t.Number), fmt.Sprintf("issue %d", t.Number)
	default:
		t.Key, t.Slug = fmt.Sprintf("%s#%s:%s", repoFull, event, t.Task), t.Task
	}
	return t, nil
}

// commentTask finds the trigger in a comment: a line starting with the
// trigger phrase ("/agent-loop fix the parser"), or one of seed 001's
// phrases ("ralph this: ...", "fix until green", ...).
func commentTask(body, phrase string) (task, hint string, ok bool) {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		if rest, ok := cutPrefixFold(line, phrase); ok {
			rest = strings.TrimSpace(rest)
			if tr, ok := criteria.ParseTrigger(rest); ok {
				return tr.Task, tr.Hint, true
			}
			if rest != "" {
				return rest, "", true
			}
			return "", "", false
		}
		if tr, ok := criteria.ParseTrigger(line); ok {
			return tr.Task, tr.Hint, true
		}
	}
	return "", "", false
}

// cutPrefixFold returns line without a leading phrase matched without
// regard to case. Case mapping can change a character's length in bytes
// ("\u212a", the Kelvin sign, lower-cases to "k"), so the prefix is found on
// line's own character boundaries, never at len(phrase).
func cutPrefixFold(line, phrase string) (string, bool) {
	if phrase == "" {
		return "", false
	}
	limit := len(phrase) * utf8.UTFMax
	for i := range line {
		if i > limit {
			break
		}
		if i > 0 && strings.EqualFold(line[:i], phrase) {
			return line[i:], true
		}
	}
	if len(line) <= limit && strings.EqualFold(line, phrase) {
		return "", true
	}
	return "", false
}
