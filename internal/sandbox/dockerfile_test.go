package sandbox

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// The image creates the sandbox user the harness looks for: the name and
// fixed ids of this package, in the runtime stage (after the last FROM).
func TestDockerfileCreatesTheSandboxUser(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	last := regexp.MustCompile(`(?m)^FROM `).FindAllStringIndex(src, -1)
	if len(last) == 0 {
		t.Fatal("no FROM in the Dockerfile")
	}
	runtime := src[last[len(last)-1][0]:]
	id := strconv.Itoa(BaseUID)
	for _, re := range []string{
		`groupadd --gid ` + id + ` ` + UserName + `\b`,
		`useradd --uid ` + id + ` --gid ` + id + ` [^\n]*--home-dir /home/` + UserName + `\b[\s\S]*?` + UserName + `\s`,
	} {
		if !regexp.MustCompile(re).MatchString(runtime) {
			t.Errorf("the runtime stage of the Dockerfile does not match %q: it must create the sandbox user %s (uid and gid %d)", re, UserName, BaseUID)
		}
	}
	if regexp.MustCompile(`(?m)^USER `).MatchString(runtime) {
		t.Error("the runtime stage sets USER: the harness must run as root (GitHub runs container actions as root, and the sandbox needs it to drop to its user)")
	}
}
