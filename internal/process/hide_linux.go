package process

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// prSetDumpable is PR_SET_DUMPABLE of prctl(2).
const prSetDumpable = 4

// HideSecrets keeps the harness's own secrets from the processes it starts.
// They run as the same user (in a container action, as root, like the
// harness, which is PID 1), so they could read /proc/<harness>/environ: the
// environment the harness was started with, GITHUB_TOKEN and INPUT_* among
// it, whatever SafeEnv leaves out of theirs. HideSecrets blanks, in that
// block, the values of every variable Denied withholds (the harness keeps
// its own copy: os.Getenv is unaffected), and marks the process not
// dumpable, so that a process without CAP_SYS_PTRACE can neither attach to
// it nor read its memory. It returns what it blanked.
func HideSecrets() ([]string, error) {
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0); errno != 0 {
		return nil, fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", errno)
	}
	start, end, err := environBounds()
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no procfs: nothing shows the block
	}
	if err != nil {
		return nil, err
	}
	if end <= start || end-start > 16<<20 {
		return nil, fmt.Errorf("reading /proc/self/stat: environment bounds %d..%d are not plausible", start, end)
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("opening /proc/self/mem: %w", err)
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return nil, fmt.Errorf("reading the environment block: %w", err)
	}
	var hidden []string
	off := 0
	for _, kv := range bytes.Split(block, []byte{0}) {
		if k, v, ok := bytes.Cut(kv, []byte("=")); ok && len(k) > 0 && len(v) > 0 && Denied(string(k)) {
			at := off + len(k) + 1
			if _, err := mem.WriteAt(make([]byte, len(v)), int64(start)+int64(at)); err != nil {
				return hidden, fmt.Errorf("blanking %s in the environment block: %w", k, err)
			}
			hidden = append(hidden, string(k))
		}
		off += len(kv) + 1
	}
	return hidden, nil
}

// environBounds reads env_start and env_end (fields 50 and 51) of
// /proc/self/stat.
func environBounds() (start, end uint64, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	// The command name (field 2) is in parentheses and may hold anything.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, errors.New("reading /proc/self/stat: no command name")
	}
	fields := strings.Fields(string(b[i+1:])) // fields 3...
	if len(fields) < 51-2 {
		return 0, 0, fmt.Errorf("reading /proc/self/stat: %d fields, want at least 51 (Linux 3.5 or newer)", len(fields)+2)
	}
	if start, err = strconv.ParseUint(fields[50-3], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("reading /proc/self/stat: env_start: %w", err)
	}
	if end, err = strconv.ParseUint(fields[51-3], 10, 64); err != nil {
		return 0, 0, fmt.Errorf("reading /proc/self/stat: env_end: %w", err)
	}
	return start, end, nil
}
