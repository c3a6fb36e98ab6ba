package sandbox

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/aiwg/agent-loop/internal/safefs"
)

// The sandbox user. The image creates it (Dockerfile); a root run
// elsewhere creates it with useradd, or, where that fails, runs the
// sandbox under the bare uid with HOME, USER and LOGNAME set (programs that
// look the user up in /etc/passwd, such as Node's os.userInfo(), then
// fail). A second loop running as root on the same host takes the next
// slot: agentloop-1 (uid 47002), and so on.
const (
	UserName = "agentloop"
	BaseUID  = 47001
	// Slots is how many sandbox users root loops on one host can use at
	// once (the sweep ends every process of a user, so two loops never
	// share one).
	Slots = 16
)

// account is the sandbox user of one slot.
type account struct {
	name     string
	uid, gid int
	home     string
	passwd   bool   // has an /etc/passwd entry
	created  bool   // this run created it
	why      string // why there is no passwd entry
	lock     *os.File
}

func slotName(slot int) string {
	if slot == 0 {
		return UserName
	}
	return fmt.Sprintf("%s-%d", UserName, slot)
}

// slotLockDir holds one lock file per slot, shared by every root loop on
// the host whatever its private directory.
const slotLockDir = "/run/agent-loop"

// takeSlot locks the first free slot (the last one with fromEnd) and
// returns its account.
func takeSlot(forbidden map[int]bool, fromEnd bool) (*account, error) {
	dir := slotLockDir
	if fi, err := os.Stat("/run"); err != nil || !fi.IsDir() {
		dir = filepath.Join(os.TempDir(), "agent-loop-slots")
	}
	if err := privateDir(dir); err != nil {
		return nil, err
	}
	var busy []string
	for i := 0; i < Slots; i++ {
		slot := i
		if fromEnd {
			slot = Slots - 1 - i
		}
		name := slotName(slot)
		acc, err := lookupAccount(name, BaseUID+slot)
		if err != nil {
			busy = append(busy, fmt.Sprintf("%s: %v", name, err))
			continue
		}
		if forbidden[acc.uid] || forbidden[acc.gid] && acc.gid != acc.uid {
			busy = append(busy, fmt.Sprintf("%s: uid %d owns the work tree or a protected file", name, acc.uid))
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, "slot-"+strconv.Itoa(acc.uid)+".lock"), os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("locking the sandbox user %s: %w", name, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			busy = append(busy, name+": in use by another agent-loop")
			continue
		}
		acc.lock = f
		return acc, nil
	}
	return nil, fmt.Errorf("no sandbox user is free (%s); at most %d loops can run as root on one host at once", strings.Join(busy, "; "), Slots)
}

// lookupAccount finds name in /etc/passwd; when it is not there it creates
// it (uid and gid wantUID), or falls back to the bare uid.
func lookupAccount(name string, wantUID int) (*account, error) {
	if acc, ok, err := passwdEntry(name); err != nil || ok {
		return acc, err
	}
	// The uid must not be someone else's.
	if other, ok := passwdName(wantUID); ok {
		return nil, fmt.Errorf("uid %d belongs to %s", wantUID, other)
	}
	acc := &account{name: name, uid: wantUID, gid: wantUID, home: filepath.Join("/home", name)}
	if err := createAccount(acc); err != nil {
		acc.why = err.Error()
		return acc, nil
	}
	if got, ok, err := passwdEntry(name); err == nil && ok {
		got.created = true
		return got, nil
	}
	acc.why = "useradd made no entry"
	return acc, nil
}

func createAccount(acc *account) error {
	useradd, err := exec.LookPath("useradd")
	if err != nil {
		return errors.New("useradd is not installed")
	}
	id := strconv.Itoa(acc.uid)
	if groupadd, err := exec.LookPath("groupadd"); err == nil {
		// An existing group of that name is fine ("exit 9").
		_ = exec.Command(groupadd, "--gid", id, acc.name).Run()
	}
	out, err := exec.Command(useradd, "--uid", id, "--gid", id, "--no-create-home", "--home-dir", acc.home,
		"--shell", "/bin/sh", "--comment", "agent-loop sandbox", acc.name).CombinedOutput()
	if err != nil {
		return fmt.Errorf("useradd %s: %v: %s", acc.name, err, bytes.TrimSpace(out))
	}
	return nil
}

// passwdEntry reads name's entry from /etc/passwd.
func passwdEntry(name string) (*account, bool, error) {
	var found *account
	err := eachPasswd(func(f []string) bool {
		if f[0] != name {
			return true
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return true
		}
		found = &account{name: name, uid: uid, gid: gid, home: f[5], passwd: true}
		return false
	})
	if err != nil || found == nil {
		return nil, false, err
	}
	if found.uid == 0 || found.gid == 0 {
		return nil, false, fmt.Errorf("the sandbox user %s has uid %d gid %d in /etc/passwd: it must not be root", name, found.uid, found.gid)
	}
	if found.home == "" || found.home == "/" || found.home == "/nonexistent" {
		found.home = filepath.Join("/home", name)
	}
	return found, true, nil
}

// passwdName returns the name that has uid in /etc/passwd.
func passwdName(uid int) (string, bool) {
	name := ""
	_ = eachPasswd(func(f []string) bool {
		if f[2] == strconv.Itoa(uid) {
			name = f[0]
			return false
		}
		return true
	})
	return name, name != ""
}

func eachPasswd(fn func(fields []string) bool) error {
	b, err := safefs.ReadFile("/etc/passwd", 16<<20)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading /etc/passwd: %w", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) >= 7 && !fn(f) {
			break
		}
	}
	return nil
}
