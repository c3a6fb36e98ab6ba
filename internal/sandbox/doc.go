// Package sandbox is the trust boundary between the harness and the code
// it runs for the agent: the agent CLI, the completion command, the setup
// command and everything they start. It follows OpenSSH's privilege
// separation: the untrusted side runs with nothing of the trusted side's
// in reach, and the trusted side ends all of it after every run.
//
// New sets the sandbox up for one loop and says which layers hold (Layers,
// String); Wrap turns an *exec.Cmd into one that runs inside it (through
// the trampoline: this binary re-executed under a hidden argv[0], see Main);
// Sweep ends every process the run left behind; Close gives the work tree
// back. process.Run calls Wrap and Sweep when its context carries the
// sandbox (process.WithJail).
//
// As root (the container Action, a root CLI run):
//   - the sandboxed code runs as a separate unprivileged user (agentloop,
//     uid 47001; another slot's uid when that one is busy), with no
//     capabilities (all of its uids are non-zero; the bounding set is
//     dropped), no_new_privs (setuid binaries give nothing back), in its
//     own session, in its own PID namespace where the kernel allows it;
//   - the work tree is handed to that user for the loop and given back to
//     its owner by Close; its root directory is sticky and root-owned, so
//     the agent can neither replace .git nor the harness's .aiwg seed
//     directory, both of which stay out of its reach;
//   - the harness's private directory (state, logs, credentials, trusted
//     git objects) is root-owned 0700; the workflow command files are
//     checked not to be the sandbox user's and lose their group and other
//     permission bits for the loop;
//   - after every run, every process of the sandbox user is killed with
//     kill(-1, SIGKILL) sent as that user, repeated until /proc shows none.
//
// Without root (a developer's CLI run) the same code path keeps what an
// unprivileged user can have: the harness's private directory outside
// everything the sandbox may write, a PID namespace (inside a user
// namespace) when the kernel allows one, otherwise a child-subreaper sweep
// of the harness's descendants (SIGSTOP, then SIGKILL, until none is
// left).
//
// In both modes Landlock, where the kernel has it, is a second layer: the
// sandboxed code may write only the work tree, its home and temporary
// directory, the agent CLIs' configuration directory and a few devices;
// on ABI 6 and newer it cannot signal, or connect to an abstract socket
// of, any process outside its domain; at any ABI it cannot ptrace one
// (nor read its /proc/<pid>/mem or environ).
//
// SECURITY.md in this directory says what holds in each mode, for the
// README's security section.
package sandbox
