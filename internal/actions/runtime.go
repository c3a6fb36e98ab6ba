package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/sethvargo/go-githubactions"
)

// Env looks up an environment variable; os.Getenv in production, a map in
// tests.
type Env func(string) string

// PostEntrypoint is the path the action's post step is started as
// (action.yml runs.post-entrypoint). The image makes it a symlink to
// /agent-loop, so the same binary runs and tells the two stages apart by
// argv[0] (IsPostInvocation).
const PostEntrypoint = "/agent-loop-post"

// StateMainStarted is the GITHUB_STATE key main saves as early as it can
// (Writer.MarkMainStarted). The runner exposes saved state to the post step
// only, as STATE_main_started, so its presence is a second sign of the post
// step besides argv[0].
const StateMainStarted = "main_started"

// Runtime is the container-action environment, read once.
type Runtime struct {
	getenv   Env
	action   *githubactions.Action
	context  *githubactions.GitHubContext
	event    map[string]any
	eventErr error
	post     bool
}

// NewRuntime reads the GitHub context (event name, repository, run id and
// attempt, actor, server/API/GraphQL URLs: GITHUB_SERVER_URL, GITHUB_API_URL
// and GITHUB_GRAPHQL_URL are honoured, so GHES works) and the event payload
// once. A malformed context variable is an error; an unreadable event file
// is not, it is reported by Event so commands that do not need the payload
// still run.
func NewRuntime(getenv Env, stdout io.Writer) (*Runtime, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if stdout == nil {
		stdout = io.Discard
	}
	// The toolkit would read GITHUB_EVENT_PATH itself and fail the whole
	// context on a bad payload with a message that does not name the file;
	// hide the variable from it and read the payload here instead.
	withoutEvent := func(key string) string {
		if key == "GITHUB_EVENT_PATH" {
			return ""
		}
		return getenv(key)
	}
	action := githubactions.New(
		githubactions.WithGetenv(withoutEvent),
		githubactions.WithWriter(stdout),
	)
	ghctx, err := action.Context()
	if err != nil {
		return nil, fmt.Errorf("reading the GitHub Actions context from GITHUB_* variables: %w", err)
	}
	r := &Runtime{getenv: getenv, action: action, context: ghctx}
	ghctx.EventPath = getenv("GITHUB_EVENT_PATH")
	r.event, r.eventErr = readEvent(ghctx.EventPath)
	if r.eventErr == nil {
		ghctx.Event = r.event
	}
	return r, nil
}

func readEvent(file string) (map[string]any, error) {
	if file == "" {
		return nil, errors.New("GITHUB_EVENT_PATH is not set: the event payload exists only inside a GitHub Actions job")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading the event payload %s (GITHUB_EVENT_PATH): %w", file, err)
	}
	var event map[string]any
	if err := json.Unmarshal(data, &event); err != nil {
		return nil, fmt.Errorf("decoding the event payload %s (GITHUB_EVENT_PATH) as a JSON object: %w", file, err)
	}
	if event == nil {
		return nil, fmt.Errorf("decoding the event payload %s (GITHUB_EVENT_PATH): the file holds null, want a JSON object", file)
	}
	return event, nil
}

// WithArgs records the process arguments (os.Args) so IsPost can recognise
// the post entrypoint. It returns r for chaining.
func (r *Runtime) WithArgs(args []string) *Runtime {
	r.post = IsPostInvocation(args)
	return r
}

// Input returns the action input name, read from INPUT_<NAME> (upper-cased,
// spaces turned into "_", hyphens kept: "max-iterations" is
// INPUT_MAX-ITERATIONS) and trimmed. An input that is not set is "".
func (r *Runtime) Input(name string) string {
	return r.action.GetInput(name)
}

// InputEnvName is the environment variable the runner passes input name in.
func InputEnvName(name string) string {
	return "INPUT_" + strings.ToUpper(strings.ReplaceAll(name, " ", "_"))
}

// Context returns the GitHub context read by NewRuntime. Its Event field is
// the decoded payload when Event succeeded, nil otherwise.
func (r *Runtime) Context() *githubactions.GitHubContext { return r.context }

// Event returns the decoded event payload (GITHUB_EVENT_PATH). The error
// names the file and says whether it could not be read or decoded.
func (r *Runtime) Event() (map[string]any, error) {
	return r.event, r.eventErr
}

// IsPost reports whether this process is the action's post step.
//
// The choice, and why: the runner starts the post step as
// `docker run --entrypoint "<post-entrypoint>" IMAGE <runs.args>`, so the
// post-entrypoint is one executable path (docker does not split it into
// words) and the arguments are the same as main's. The post step is
// therefore started as /agent-loop-post, a symlink to the binary, and
// recognised by argv[0] (pass os.Args with WithArgs). As a second signal,
// STATE_main_started is set: main saves it first thing
// (Writer.MarkMainStarted) and the runner passes saved state to post only
// (there is no pre step that could have saved it). Either signal suffices.
func (r *Runtime) IsPost() bool {
	return r.post || r.getenv("STATE_"+StateMainStarted) != ""
}

// IsPostInvocation reports whether args (os.Args) start the post step:
// argv[0] is the post entrypoint (by base name, so a relative invocation
// like ./agent-loop-post in a test counts too).
func IsPostInvocation(args []string) bool {
	if len(args) == 0 {
		return false
	}
	return path.Base(args[0]) == path.Base(PostEntrypoint)
}

// State returns the value main saved under name (STATE_<name>), "" when
// there is none.
func (r *Runtime) State(name string) string {
	return r.getenv("STATE_" + name)
}

// MaskSecretInputs masks (Writer.Mask) every input of names that is set
// (the secret inputs: spec.SecretInputs), and the Actions runtime tokens,
// before anything else is printed.
func (r *Runtime) MaskSecretInputs(w *Writer, names []string) {
	for _, name := range names {
		if v := r.Input(name); v != "" {
			w.Mask(v)
		}
	}
	if v := r.getenv("ACTIONS_RUNTIME_TOKEN"); v != "" {
		w.Mask(v)
	}
	if v := r.getenv("ACTIONS_ID_TOKEN_REQUEST_TOKEN"); v != "" {
		w.Mask(v)
	}
}
