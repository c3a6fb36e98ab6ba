package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"time"

	"github.com/aiwg/agent-loop/internal/criteria/study"
	"github.com/aiwg/agent-loop/internal/process"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
)

const (
	defaultMirrors   = "/work/.mirror"
	defaultCheckouts = "/work/study-checkouts"
	defaultLabels    = "testdata/study/repos"
)

// usageError is bad input: exit 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: infer-study COMMAND [flags]

commands:
  validate   check every label file
  prepare    clone every labelled commit from the fetch mirrors into the checkouts directory
  eval       run agent-loop infer in each checkout and print accuracy and calibration
  compare    show what changed between two eval --json reports

run "infer-study COMMAND -h" for a command's flags`

// run is the whole program: it returns the exit code.
func run(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "validate":
		err = validateCmd(args[1:], stdout, stderr)
	case "prepare":
		err = prepareCmd(ctx, args[1:], stdout, stderr)
	case "eval":
		err = evalCmd(ctx, args[1:], stdout, stderr)
	case "compare":
		err = compareCmd(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintln(stdout, usage)
		return exitOK
	default:
		err = usagef("unknown command %q (valid: validate, prepare, eval, compare)", args[0])
	}
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	fmt.Fprintf(stderr, "infer-study: %v\n", err)
	var u usageError
	var l labelError
	if errors.As(err, &u) || errors.As(err, &l) {
		return exitUsage
	}
	return exitFailure
}

// labelError wraps invalid label files: exit 2, nothing run.
type labelError struct{ err error }

func (e labelError) Error() string { return "invalid labels:\n" + e.err.Error() }
func (e labelError) Unwrap() error { return e.err }

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	return nil
}

func loadLabels(dir string) ([]study.Label, error) {
	labels, err := study.LoadLabels(dir)
	if err != nil {
		if errors.Is(err, study.ErrNoLabels) {
			return nil, usageError{err.Error()}
		}
		return nil, labelError{err}
	}
	return labels, nil
}

func validateCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", stderr)
	labelsDir := fs.String("labels", defaultLabels, "`DIR` of label files")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("validate takes no arguments, got %q", fs.Args())
	}
	labels, err := loadLabels(*labelsDir)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	for _, l := range labels {
		counts[l.Ecosystem]++
	}
	fmt.Fprintf(stdout, "%d labels valid:", len(labels))
	for _, e := range study.Ecosystems {
		if counts[e] > 0 {
			fmt.Fprintf(stdout, " %s %d", e, counts[e])
		}
	}
	fmt.Fprintln(stdout)
	return nil
}

// outsideRepo refuses a checkouts directory inside this repository: the
// snapshots' files are not ours to keep next to our code.
func outsideRepo(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("checkouts directory %q: %v", dir, err)
	}
	if root, err := study.ModuleRoot("."); err == nil && study.Inside(root, abs) {
		return "", usagef("checkouts directory %s is inside the repository %s: use a directory outside it (default %s)", abs, root, defaultCheckouts)
	}
	return abs, nil
}

func prepareCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("prepare", stderr)
	labelsDir := fs.String("labels", defaultLabels, "`DIR` of label files")
	mirrors := fs.String("mirrors", defaultMirrors, "`DIR` of fetch mirrors, <owner>+<name>/repo")
	checkouts := fs.String("checkouts", defaultCheckouts, "`DIR` to clone the labelled commits into, outside this repository")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return usagef("prepare takes no arguments, got %q (use --checkouts DIR)", fs.Args())
	}
	dest, err := outsideRepo(*checkouts)
	if err != nil {
		return err
	}
	labels, err := loadLabels(*labelsDir)
	if err != nil {
		return err
	}
	prepared, err := study.Prepare(ctx, labels, study.PrepareOptions{
		Mirrors: *mirrors, Checkouts: dest, Env: process.SafeEnv(os.Environ()), Log: stdout,
	})
	states := map[string]int{}
	for _, p := range prepared {
		states[p.State]++
	}
	fmt.Fprintf(stdout, "\n%d labels: %d created, %d present, %d snapshots replaced by clones, %d present without commit check, %d failed\n", len(prepared),
		states[study.CheckoutCreated], states[study.CheckoutPresent], states[study.CheckoutReplaced], states[study.CheckoutUnproven], states[study.CheckoutFailed])
	if err != nil {
		return fmt.Errorf("some checkouts could not be prepared:\n%w", err)
	}
	return nil
}

func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	labelsDir := fs.String("labels", defaultLabels, "`DIR` of label files")
	bin := fs.String("bin", "", "agent-loop binary `PATH` (default: build ./cmd/agent-loop)")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound on each infer run (a `DURATION` such as 90s)")
	runRE := fs.String("run", "", "only repositories whose owner/name matches `REGEXP`")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	outFile := fs.String("out", "", "also write the JSON report to `FILE`")
	allowMissing := fs.Bool("allow-missing", false, "score the checkouts present instead of failing when some are missing")
	quiet := fs.Bool("quiet", false, "no progress lines on stderr")
	half := fs.String("half", "", "only the `odd` or `even` half of the labels (1-based, in the order validate lists them): develop on one, check on the other")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 1 {
		return usagef("eval takes at most one CHECKOUTS directory, got %q", fs.Args())
	}
	if *half != "" && *half != "odd" && *half != "even" {
		return usagef("--half %q: valid values are odd and even", *half)
	}
	if *timeout <= 0 {
		return usagef("--timeout %s: give a positive duration such as 2m", *timeout)
	}
	checkouts := defaultCheckouts
	if fs.NArg() == 1 {
		checkouts = fs.Arg(0)
	}
	if fi, err := os.Stat(checkouts); err != nil || !fi.IsDir() {
		return usagef("checkouts directory %s does not exist: run `.ci/infer-study prepare` first, or pass the directory", checkouts)
	}
	var filter *regexp.Regexp
	if *runRE != "" {
		re, err := regexp.Compile(*runRE)
		if err != nil {
			return usagef("--run %q: %v", *runRE, err)
		}
		filter = re
	}
	labels, err := loadLabels(*labelsDir)
	if err != nil {
		return err
	}
	if *half != "" {
		labels = study.Half(labels, *half == "odd")
	}
	if filter != nil {
		var kept []study.Label
		for _, l := range labels {
			if filter.MatchString(l.Repo) {
				kept = append(kept, l)
			}
		}
		if len(kept) == 0 {
			return usagef("--run %q matches no labelled repository", *runRE)
		}
		labels = kept
	}
	env := process.SafeEnv(os.Environ())
	if *bin == "" {
		root, err := study.ModuleRoot(".")
		if err != nil {
			return usagef("%v (or pass --bin)", err)
		}
		tmp, err := os.MkdirTemp("", "infer-study-")
		if err != nil {
			return fmt.Errorf("creating a directory for the agent-loop build: %w", err)
		}
		defer os.RemoveAll(tmp)
		if *bin, err = study.BuildAgentLoop(ctx, root, tmp, env); err != nil {
			return err
		}
	}
	progress := stderr
	if *quiet {
		progress = io.Discard
	}
	results := study.Evaluate(ctx, labels, study.EvalOptions{
		Bin: *bin, Checkouts: checkouts, Timeout: *timeout, Env: env, Progress: progress,
	})
	report := study.Summarise(results)
	report.Checkouts = checkouts
	report.Task = commonTask(labels)
	if *outFile != "" {
		if err := writeJSONFile(*outFile, report); err != nil {
			return err
		}
	}
	if *asJSON {
		err = report.WriteJSON(stdout)
	} else {
		err = report.WriteText(stdout)
	}
	if err != nil {
		return err
	}
	if report.Totals.Missing > 0 && !*allowMissing {
		return fmt.Errorf("%d labelled repositories have no checkout in %s, so the totals are partial: run `.ci/infer-study prepare`, or pass --allow-missing", report.Totals.Missing, checkouts)
	}
	return nil
}

// writeJSONFile writes the report to a temporary file and renames it, so a
// failed run never leaves half a report.
func writeJSONFile(name string, r study.Report) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), filepath.Base(name)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	defer os.Remove(tmp.Name())
	if err := r.WriteJSON(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), name); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

func commonTask(labels []study.Label) string {
	if len(labels) == 0 {
		return ""
	}
	t := labels[0].Task
	for _, l := range labels[1:] {
		if l.Task != t {
			return ""
		}
	}
	return t
}

func compareCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", stderr)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return usagef("compare takes two reports written by eval --json (OLD.json NEW.json), got %d arguments", fs.NArg())
	}
	var reports [2]study.Report
	for i, name := range fs.Args() {
		f, err := os.Open(name)
		if err != nil {
			return usagef("opening report %s: %v", name, err)
		}
		r, err := study.ReadReport(f)
		f.Close()
		if err != nil {
			return usagef("%s: %v", name, err)
		}
		reports[i] = r
	}
	study.Compare(stdout, reports[0], reports[1])
	return nil
}
