package state

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/aiwg/agent-loop/internal/crashpoint"
	"github.com/aiwg/agent-loop/internal/safefs"
)

// Registry limits (seed 003).
const (
	MaxConcurrentLoops = 4
	HeartbeatInterval  = 60 * time.Second
	StaleThreshold     = 300 * time.Second
	LockTimeout        = 5 * time.Second
)

// Registry is .aiwg/ralph/registry.json.
type Registry struct {
	Version            string    `json:"version"`
	MaxConcurrentLoops int       `json:"max_concurrent_loops"`
	ActiveLoops        []Entry   `json:"active_loops"`
	RegistryPath       string    `json:"registry_path"`
	LastUpdated        time.Time `json:"last_updated"`
}

// Entry is one active loop of the registry.
type Entry struct {
	LoopID             string    `json:"loop_id"`
	Status             Status    `json:"status"`
	Iteration          int       `json:"iteration"`
	Task               string    `json:"task"`
	CompletionCriteria string    `json:"completion_criteria"`
	StartedAt          time.Time `json:"started_at"`
	LastActive         time.Time `json:"last_active"`
	PID                *int      `json:"pid"`
	Owner              string    `json:"owner,omitempty"`
	WorkingDirectory   string    `json:"working_directory"`
	StateFile          string    `json:"state_file"`
	MaxIterations      int       `json:"max_iterations"`
	TimeoutMinutes     *int      `json:"timeout_minutes"`
}

// FullError is returned when a fifth loop would start.
type FullError struct{ Active []Entry }

func (e *FullError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Maximum concurrent loops (%d) reached\n\nActive loops:\n", MaxConcurrentLoops)
	for i, l := range e.Active {
		fmt.Fprintf(&b, "  %d. %s (%s, iteration %d) - %s\n", i+1, l.LoopID, l.Status, l.Iteration, l.Task)
	}
	b.WriteString("\nAbort one with: agent-loop abort <loop_id>")
	return b.String()
}

// LockError says the registry lock could not be taken in time.
type LockError struct{ Path string }

func (e *LockError) Error() string {
	return fmt.Sprintf("could not lock %s within %s: another agent-loop is updating the registry; retry, or remove the file if no agent-loop is running", e.Path, LockTimeout)
}

// Store is the registry of one repository.
type Store struct {
	Root string
	Now  func() time.Time
}

// NewStore returns the registry store of repository root.
func NewStore(root string) *Store { return &Store{Root: root, Now: time.Now} }

func (s *Store) now() time.Time { return s.Now().UTC().Truncate(time.Second) }

// Update runs fn on the registry under the file lock and writes the result.
func (s *Store) Update(fn func(*Registry) error) error {
	if err := os.MkdirAll(filepath.Join(s.Root, RootDir), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", RootDir, err)
	}
	lockPath := filepath.Join(s.Root, LockFile)
	fl := flock.New(lockPath)
	ctx, cancel := context.WithTimeout(context.Background(), LockTimeout)
	defer cancel()
	ok, err := fl.TryLockContext(ctx, 25*time.Millisecond)
	if err != nil || !ok {
		return &LockError{Path: lockPath}
	}
	defer fl.Unlock()
	crashpoint.Hit("registry-locked")
	// Writers hold the lock: a temporary registry file is a killed writer's.
	removeTemp(filepath.Join(s.Root, RootDir), filepath.Base(RegistryFile))
	reg, err := s.read()
	if err != nil {
		return err
	}
	if err := fn(reg); err != nil {
		return err
	}
	reg.LastUpdated = s.now()
	crashpoint.Hit("registry-write")
	return writeJSON(filepath.Join(s.Root, RegistryFile), reg)
}

// Read returns the registry without locking (a consistent snapshot: writes
// are atomic renames).
func (s *Store) Read() (*Registry, error) { return s.read() }

func (s *Store) read() (*Registry, error) {
	path := filepath.Join(s.Root, RegistryFile)
	reg := &Registry{Version: Version, MaxConcurrentLoops: MaxConcurrentLoops, ActiveLoops: []Entry{}, RegistryPath: RegistryFile}
	b, err := safefs.ReadFile(path, MaxRegistryBytes)
	if errors.Is(err, os.ErrNotExist) {
		return reg, nil
	}
	if err != nil {
		return nil, &CorruptError{Path: path, Err: err}
	}
	if err := json.Unmarshal(b, reg); err != nil {
		return nil, &CorruptError{Path: path, Err: fmt.Errorf("%w (the registry can be rebuilt: delete it and run `agent-loop status --check-stale`)", err)}
	}
	if reg.ActiveLoops == nil {
		reg.ActiveLoops = []Entry{}
	}
	reg.Version, reg.MaxConcurrentLoops, reg.RegistryPath = Version, MaxConcurrentLoops, RegistryFile
	return reg, nil
}

// EntryFor builds the registry entry of a state.
func EntryFor(st *State, now time.Time) Entry {
	return Entry{
		LoopID: st.LoopID, Status: st.Status, Iteration: st.Iteration, Task: st.Task,
		CompletionCriteria: st.CompletionCriteria, StartedAt: st.StartedAt, LastActive: now.UTC().Truncate(time.Second),
		PID: st.PID, Owner: st.Owner, WorkingDirectory: st.WorkingDirectory,
		StateFile:     filepath.ToSlash(filepath.Join(LoopsDir, st.LoopID, "state.json")),
		MaxIterations: max(st.Configuration.MaxIterations, 1), TimeoutMinutes: st.Configuration.TimeoutMinutes,
	}
}

// Register adds a loop, refusing a fifth active loop with the list of the
// active ones.
func (s *Store) Register(st *State) error {
	return s.Update(func(r *Registry) error {
		for i, e := range r.ActiveLoops {
			if e.LoopID == st.LoopID {
				r.ActiveLoops[i] = EntryFor(st, s.now())
				return nil
			}
		}
		if len(r.ActiveLoops) >= MaxConcurrentLoops {
			return &FullError{Active: append([]Entry(nil), r.ActiveLoops...)}
		}
		r.ActiveLoops = append(r.ActiveLoops, EntryFor(st, s.now()))
		return nil
	})
}

// Sync writes a loop's current status into the registry (the heartbeat):
// an active status updates or adds its entry, a terminal one removes it.
func (s *Store) Sync(st *State) error {
	return s.Update(func(r *Registry) error {
		out := r.ActiveLoops[:0]
		found := false
		for _, e := range r.ActiveLoops {
			if e.LoopID == st.LoopID {
				found = true
				if st.Status.Active() {
					out = append(out, EntryFor(st, s.now()))
				}
				continue
			}
			out = append(out, e)
		}
		if !found && st.Status.Active() && len(out) < MaxConcurrentLoops {
			out = append(out, EntryFor(st, s.now()))
		}
		r.ActiveLoops = out
		return nil
	})
}

// Deregister removes a loop from the registry.
func (s *Store) Deregister(loopID string) error {
	return s.Update(func(r *Registry) error {
		out := r.ActiveLoops[:0]
		for _, e := range r.ActiveLoops {
			if e.LoopID != loopID {
				out = append(out, e)
			}
		}
		r.ActiveLoops = out
		return nil
	})
}

// SameTask returns the active loops whose task matches task (case and
// spacing ignored).
func (r *Registry) SameTask(task string) []Entry {
	norm := func(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }
	var out []Entry
	for _, e := range r.ActiveLoops {
		if norm(e.Task) == norm(task) {
			out = append(out, e)
		}
	}
	return out
}

// Sorted returns the entries sorted by start time.
func (r *Registry) Sorted() []Entry {
	out := append([]Entry(nil), r.ActiveLoops...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].StartedAt.Before(out[j].StartedAt) })
	return out
}

func shortHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:4])
}
