package gitrepo

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// A FIFO where git expects a file (a .gitignore or .gitattributes the agent
// made with mkfifo) blocks git in open(2) until a writer appears: `git
// status`, `git add -A` and `git ls-files -o` then wait for ever. The
// watchdog looks at a git child that has run for a while; when one of its
// threads waits in open(2) for the partner of a FIFO inside the work tree,
// it opens that FIFO for writing and closes it at once, so git reads it as
// an empty file. It reads the path from the child's /proc/<pid>/syscall
// and memory (the harness is the child's parent). Anything it cannot read
// leaves the child to the context's deadline.

// fifoPoll is how often the watchdog looks.
const fifoPoll = 200 * time.Millisecond

// watchFIFOs unblocks the opens of FIFOs under root by pid and its
// descendants until done closes,
// calling found for each FIFO it opened.
func watchFIFOs(pid int, root string, done <-chan struct{}, found func(string)) {
	tick := time.NewTicker(fifoPoll)
	defer tick.Stop()
	seen := map[string]int{}
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		for _, t := range tasksOf(pid) {
			dir := "/proc/" + strconv.Itoa(t.pid) + "/task/" + strconv.Itoa(t.tid)
			if w, err := os.ReadFile(dir + "/wchan"); err != nil || !fifoWait(string(w)) {
				continue
			}
			p, ok := openingPath(t.pid, dir)
			if !ok || !within(p, root) {
				continue
			}
			fi, err := os.Lstat(p)
			if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
				continue
			}
			f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			f.Close()
			if seen[p]++; seen[p] == 1 {
				found(p)
			}
		}
	}
}

type task struct{ pid, tid int }

// tasksOf lists the threads of pid and of all its descendants (git runs
// pack-objects, remote helpers and filters as children).
func tasksOf(pid int) []task {
	var out []task
	queue := []int{pid}
	for n := 0; len(queue) > 0 && n < 256; n++ {
		p := queue[0]
		queue = queue[1:]
		tids, err := os.ReadDir("/proc/" + strconv.Itoa(p) + "/task")
		if err != nil {
			continue
		}
		for _, d := range tids {
			tid, err := strconv.Atoi(d.Name())
			if err != nil {
				continue
			}
			out = append(out, task{p, tid})
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p) + "/task/" + d.Name() + "/children")
			for _, c := range strings.Fields(string(b)) {
				if cp, err := strconv.Atoi(c); err == nil {
					queue = append(queue, cp)
				}
			}
		}
	}
	return out
}

// fifoWait reports whether a wchan is a FIFO open waiting for its partner.
func fifoWait(w string) bool {
	return w == "wait_for_partner" || w == "fifo_open" || w == "pipe_wait"
}

// openingPath returns the absolute path a task is opening, from its
// /proc/.../syscall (open or openat) and the child's memory.
func openingPath(pid int, task string) (string, bool) {
	b, err := os.ReadFile(task + "/syscall")
	if err != nil {
		return "", false
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "", false
	}
	nr, err := strconv.Atoi(f[0])
	if err != nil {
		return "", false
	}
	var dirfd, ptr uint64
	switch {
	case runtime.GOARCH == "amd64" && nr == 2: // open(path, ...)
		dirfd, ptr = uint64(0xffffff9c), parseHex(f[1])
	case (runtime.GOARCH == "amd64" && nr == 257) || (runtime.GOARCH == "arm64" && nr == 56): // openat(dirfd, path, ...)
		dirfd, ptr = parseHex(f[1]), parseHex(f[2])
	default:
		return "", false
	}
	if ptr == 0 {
		return "", false
	}
	mem, err := os.Open("/proc/" + strconv.Itoa(pid) + "/mem")
	if err != nil {
		return "", false
	}
	defer mem.Close()
	buf := make([]byte, 4096)
	n, _ := mem.ReadAt(buf, int64(ptr))
	i := bytes.IndexByte(buf[:n], 0)
	if i <= 0 {
		return "", false
	}
	path := string(buf[:i])
	if filepath.IsAbs(path) {
		return filepath.Clean(path), true
	}
	base := "/proc/" + strconv.Itoa(pid) + "/cwd"
	if uint32(dirfd) != 0xffffff9c {
		base = "/proc/" + strconv.Itoa(pid) + "/fd/" + strconv.FormatUint(dirfd, 10)
	}
	dir, err := os.Readlink(base)
	if err != nil {
		return "", false
	}
	return filepath.Join(dir, path), true
}

func parseHex(s string) uint64 {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	return v
}

// within reports whether p is root or below it.
func within(p, root string) bool {
	return p == root || strings.HasPrefix(p, root+string(filepath.Separator))
}
