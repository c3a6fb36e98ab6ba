package state

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/safefs"
)

// Layout (relative to the repository root), as the seeds lay it out.
const (
	RootDir      = ".aiwg/ralph"
	RegistryFile = ".aiwg/ralph/registry.json"
	LockFile     = ".aiwg/ralph/registry.lock"
	LegacyFile   = ".aiwg/ralph/current-loop.json"
	LoopsDir     = ".aiwg/ralph/loops"
)

// Size limits of the files the harness reads back: larger ones are
// refused unread (the loop directory is in the work tree, where the agent
// could have put anything).
const (
	MaxStateBytes     = 64 << 20 // state.json, analytics.json, a legacy loop file
	MaxRegistryBytes  = 16 << 20
	MaxControlBytes   = 4 << 10
	MaxCheckpointJSON = 64 << 20 // a checkpoint, uncompressed
)

// CorruptError says a state file cannot be read, and how to recover.
type CorruptError struct {
	Path string
	Err  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s is unreadable or corrupt (%v); to recover, restore it from the latest checkpoint "+
		"(`agent-loop status` lists them) or delete the loop directory to forget the loop", e.Path, e.Err)
}
func (e *CorruptError) Unwrap() error { return e.Err }

// NotFoundError says a loop id is unknown.
type NotFoundError struct {
	LoopID string
	Known  []string
}

func (e *NotFoundError) Error() string {
	if len(e.Known) == 0 {
		return fmt.Sprintf("unknown loop id %q: there are no loops in %s (start one with `agent-loop run`)", e.LoopID, LoopsDir)
	}
	return fmt.Sprintf("unknown loop id %q; known loops: %s", e.LoopID, strings.Join(e.Known, ", "))
}

// WriteFileAtomic writes data to path via a temporary file in the same
// directory, fsyncs it and renames it over path, then fsyncs the directory.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm, true)
}

// WriteFileReplace is WriteFileAtomic without the fsyncs: a reader, or a
// process killed at any moment, still sees the old file or the new one,
// whole; only an operating-system crash may lose it. It is for files the
// loop writes again before it uses them (the prompt, the last check's
// output), where two fsyncs per file are most of their cost.
func WriteFileReplace(path string, data []byte, perm os.FileMode) error {
	return writeFileAtomic(path, data, perm, false)
}

func writeFileAtomic(path string, data []byte, perm os.FileMode, durable bool) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	// The directory itself, never a symlink in its place; the temporary
	// file and the rename go through its fd.
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("writing %s: opening its directory: %w", path, err)
	}
	defer unix.Close(dfd)
	base := filepath.Base(path)
	var tmp string
	var fd int
	for i := 0; ; i++ {
		tmp = "." + base + tempMarker + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err = unix.Openat(dfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil || !errors.Is(err, unix.EEXIST) || i > 100 {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), filepath.Join(dir, tmp))
	ok := false
	defer func() {
		if !ok {
			f.Close()
			_ = unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	crashpoint.HitPath("mid-write", path)
	if err := f.Chmod(perm); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("syncing %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	crashpoint.HitPath("before-rename", path)
	if err := unix.Renameat(dfd, tmp, dfd, base); err != nil {
		return fmt.Errorf("renaming %s: %w", path, err)
	}
	ok = true
	if durable {
		_ = unix.Fsync(dfd)
	}
	return nil
}

// tempMarker is in the name of WriteFileAtomic's temporary files.
const tempMarker = ".tmp-"

// removeTemp removes the temporary files of base (WriteFileAtomic's
// ".<base>.tmp-*") in dir. A killed writer leaves its temporary file
// behind; call it only where no other writer of base can be busy.
func removeTemp(dir, base string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasPrefix(n, "."+base+tempMarker) {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding %s: %w", path, err)
	}
	return WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// Dir is one loop's directory: .aiwg/ralph/loops/<loop_id>.
type Dir struct {
	Root   string // repository root
	LoopID string
}

// NewDir returns the directory handle of loop id in repository root.
func NewDir(root, loopID string) Dir { return Dir{Root: root, LoopID: loopID} }

// Path is the absolute path of the loop directory.
func (d Dir) Path() string { return filepath.Join(d.Root, LoopsDir, d.LoopID) }

// Rel returns the repository-relative path of a file in the loop directory.
func (d Dir) Rel(parts ...string) string {
	return filepath.ToSlash(filepath.Join(append([]string{LoopsDir, d.LoopID}, parts...)...))
}

// File returns the absolute path of a file in the loop directory.
func (d Dir) File(parts ...string) string {
	return filepath.Join(append([]string{d.Path()}, parts...)...)
}

// StatePath is state.json.
func (d Dir) StatePath() string { return d.File("state.json") }

// Exists reports whether the loop has a state file.
func (d Dir) Exists() bool {
	fi, err := os.Lstat(d.StatePath())
	return err == nil && fi.Mode().IsRegular()
}

// RemoveTemp removes the temporary files that writes cut short by a crash
// left in the loop directory (its own state, checkpoints, analytics). Only
// the process that owns the loop may call it (a resume, after the crash was
// detected); the control file's are kept, `agent-loop pause` may be writing.
func (d Dir) RemoveTemp() {
	for _, sub := range []string{"", "checkpoints", "analytics"} {
		dir := d.File(sub)
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			n := e.Name()
			if e.Type().IsRegular() && strings.HasPrefix(n, ".") && strings.Contains(n, tempMarker) &&
				!strings.HasPrefix(n, "."+filepath.Base(d.ControlPath())+tempMarker) {
				_ = os.Remove(filepath.Join(dir, n))
			}
		}
	}
}

// Load reads state.json.
func (d Dir) Load() (*State, error) {
	b, err := safefs.ReadFile(d.StatePath(), MaxStateBytes)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{LoopID: d.LoopID, Known: ListLoopIDs(d.Root)}
		}
		return nil, &CorruptError{Path: d.StatePath(), Err: err}
	}
	var st State
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&st); err != nil {
		return nil, &CorruptError{Path: d.StatePath(), Err: err}
	}
	if st.LoopID != d.LoopID || !ValidLoopID(st.LoopID) || st.Status == "" {
		return nil, &CorruptError{Path: d.StatePath(), Err: fmt.Errorf("loop_id %q / status %q do not match the directory %s", st.LoopID, st.Status, d.LoopID)}
	}
	return &st, nil
}

// Save writes state.json atomically, stamping last_updated.
func (d Dir) Save(st *State, now time.Time) error {
	st.LastUpdated = now.UTC().Truncate(time.Second)
	st.normalize()
	return writeJSON(d.StatePath(), st)
}

// normalize gives the schema's arrays an empty value instead of null.
func (st *State) normalize() {
	if st.IterationHistory == nil {
		st.IterationHistory = []IterationEntry{}
	}
	if st.RegressionEvents == nil {
		st.RegressionEvents = []RegressionEvent{}
	}
	if st.ReinforcementHistory == nil {
		st.ReinforcementHistory = []ReinforcementChange{}
	}
	if st.RecoveryHistory == nil {
		st.RecoveryHistory = []Recovery{}
	}
	if st.DetectedPatterns == nil {
		st.DetectedPatterns = []DetectedPattern{}
	}
	if st.Progress.CompletionChecks == nil {
		st.Progress.CompletionChecks = []Check{}
	}
	if st.ReinforcementLevel == "" {
		st.ReinforcementLevel = "MINIMAL"
	}
	if st.Version == "" {
		st.Version = Version
	}
	for i := range st.IterationHistory {
		if st.IterationHistory[i].Artifacts == nil {
			st.IterationHistory[i].Artifacts = []Artifact{}
		}
	}
}

// Checkpoint is checkpoints/iteration-NNN.json.gz: enough to rebuild the
// iteration (prompt, agent exit and duration, check output tail, diff stat,
// commit, verdict).
type Checkpoint struct {
	LoopID    string          `json:"loop_id"`
	Iteration int             `json:"iteration"`
	CreatedAt time.Time       `json:"created_at"`
	Prompt    string          `json:"prompt"`
	Agent     json.RawMessage `json:"agent"`
	Check     json.RawMessage `json:"check"`
	Verdict   json.RawMessage `json:"verdict"`
	DiffStat  json.RawMessage `json:"diff_stat"`
	Commit    string          `json:"commit"`
	Entry     IterationEntry  `json:"iteration_entry"`
}

// CheckpointRel is the repository-relative path of iteration n's checkpoint.
func (d Dir) CheckpointRel(n int) string {
	return d.Rel("checkpoints", fmt.Sprintf("iteration-%03d.json.gz", n))
}

// WriteCheckpoint writes iteration n's checkpoint atomically.
func (d Dir) WriteCheckpoint(cp *Checkpoint) (string, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	enc := json.NewEncoder(zw)
	enc.SetIndent("", " ")
	if err := enc.Encode(cp); err != nil {
		return "", fmt.Errorf("encoding checkpoint %d: %w", cp.Iteration, err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("compressing checkpoint %d: %w", cp.Iteration, err)
	}
	rel := d.CheckpointRel(cp.Iteration)
	crashpoint.Hit("checkpoint-write")
	return rel, WriteFileAtomic(filepath.Join(d.Root, rel), buf.Bytes(), 0o644)
}

// ReadCheckpoint reads iteration n's checkpoint.
func (d Dir) ReadCheckpoint(n int) (*Checkpoint, error) {
	path := filepath.Join(d.Root, d.CheckpointRel(n))
	f, err := safefs.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	var cp Checkpoint
	if err := json.NewDecoder(io.LimitReader(zr, MaxCheckpointJSON)).Decode(&cp); err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	return &cp, nil
}

// Analytics is analytics/analytics.json: per-iteration durations, tokens,
// cost and scores.
type Analytics struct {
	LoopID     string               `json:"loop_id"`
	UpdatedAt  time.Time            `json:"updated_at"`
	Iterations []IterationAnalytics `json:"iterations"`
	Totals     AnalyticsTotals      `json:"totals"`
}

// IterationAnalytics is one iteration's measurements.
type IterationAnalytics struct {
	Iteration      int       `json:"iteration"`
	StartedAt      time.Time `json:"started_at"`
	TotalSeconds   float64   `json:"total_seconds"`
	AgentSeconds   float64   `json:"agent_seconds"`
	CheckSeconds   float64   `json:"check_seconds"`
	HarnessSeconds float64   `json:"harness_seconds"`
	JudgeMillis    float64   `json:"judge_ms"`
	Tokens         int64     `json:"tokens"`
	InputTokens    int64     `json:"input_tokens"`
	OutputTokens   int64     `json:"output_tokens"`
	CostUSD        float64   `json:"cost_usd"`
	CostEstimated  bool      `json:"cost_estimated"`
	Score          float64   `json:"quality_score"`
	Passed         bool      `json:"check_passed"`
	Retries        int       `json:"rate_limit_retries"`
}

// AnalyticsTotals sums the iterations.
type AnalyticsTotals struct {
	Iterations     int     `json:"iterations"`
	TotalSeconds   float64 `json:"total_seconds"`
	AgentSeconds   float64 `json:"agent_seconds"`
	CheckSeconds   float64 `json:"check_seconds"`
	HarnessSeconds float64 `json:"harness_seconds"`
	Tokens         int64   `json:"tokens"`
	CostUSD        float64 `json:"cost_usd"`
}

// AnalyticsPath is analytics/analytics.json.
func (d Dir) AnalyticsPath() string { return d.File("analytics", "analytics.json") }

// LoadAnalytics reads analytics.json (empty when absent).
func (d Dir) LoadAnalytics() (*Analytics, error) {
	a := &Analytics{LoopID: d.LoopID}
	b, err := safefs.ReadFile(d.AnalyticsPath(), MaxStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return a, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, a); err != nil {
		return nil, &CorruptError{Path: d.AnalyticsPath(), Err: err}
	}
	return a, nil
}

// SaveAnalytics recomputes the totals and writes analytics.json.
func (d Dir) SaveAnalytics(a *Analytics, now time.Time) error {
	sort.Slice(a.Iterations, func(i, j int) bool { return a.Iterations[i].Iteration < a.Iterations[j].Iteration })
	var t AnalyticsTotals
	for _, it := range a.Iterations {
		t.Iterations++
		t.TotalSeconds += it.TotalSeconds
		t.AgentSeconds += it.AgentSeconds
		t.CheckSeconds += it.CheckSeconds
		t.HarnessSeconds += it.HarnessSeconds
		t.Tokens += it.Tokens
		t.CostUSD += it.CostUSD
	}
	a.Totals = t
	a.UpdatedAt = now.UTC().Truncate(time.Second)
	return writeJSON(d.AnalyticsPath(), a)
}

// LogPath is logs/iteration-NNN.log (n = 0 is the baseline check).
func (d Dir) LogPath(n int) string { return d.File("logs", fmt.Sprintf("iteration-%03d.log", n)) }

// LiveLogPath is logs/loop.log: everything the loop printed, followed by attach.
func (d Dir) LiveLogPath() string { return d.File("logs", "loop.log") }

// TranscriptPath is transcripts/iteration-NNN.jsonl (redacted).
func (d Dir) TranscriptPath(n int) string {
	return d.File("transcripts", fmt.Sprintf("iteration-%03d.jsonl", n))
}

// ReportPath is report.md.
func (d Dir) ReportPath() string { return d.File("report.md") }

// ProposalPath is inferred-completion.yaml.
func (d Dir) ProposalPath() string { return d.File("inferred-completion.yaml") }

// ControlPath is the file through which pause/abort reach a running loop.
func (d Dir) ControlPath() string { return d.File("control") }

// RequestControl asks a running loop to pause or abort.
func (d Dir) RequestControl(action string) error {
	return WriteFileAtomic(d.ControlPath(), []byte(action+"\n"), 0o644)
}

// TakeControl returns a pending control request ("pause", "abort" or "").
// The control file is in the work tree: a symlink, a FIFO (which would
// block a plain read for ever) or a file above MaxControlBytes in its
// place is no request.
func (d Dir) TakeControl() string {
	b, err := safefs.ReadFile(d.ControlPath(), MaxControlBytes)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// ClearControl removes a handled control request.
func (d Dir) ClearControl() { os.Remove(d.ControlPath()) }

// ListLoopIDs lists the loop directories that hold a state file.
func ListLoopIDs(root string) []string {
	ents, err := os.ReadDir(filepath.Join(root, LoopsDir))
	if err != nil {
		return nil
	}
	var ids []string
	for _, e := range ents {
		if e.IsDir() && ValidLoopID(e.Name()) && NewDir(root, e.Name()).Exists() {
			ids = append(ids, e.Name())
		}
	}
	sort.Strings(ids)
	return ids
}
