//go:build unix

package process

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// fakeEnv returns Options whose programs inherit base (KEY=VALUE entries)
// instead of the test process's environment, and whose getenv reads base.
func fakeEnv(base []string, allow ...string) Options {
	return Options{
		AllowEnvVars: allow,
		environ:      func() []string { return base },
		getenv: func(k string) string {
			for _, kv := range base {
				if name, v, _ := strings.Cut(kv, "="); name == k {
					return v
				}
			}
			return ""
		},
	}
}

// pathEnv is a minimal environment for tests: PATH only.
func pathEnv(extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH")}, extra...)
}

// output asserts a successful result and returns its output object.
func output(t *testing.T, res node.Result, err error) map[string]any {
	t.Helper()
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	out, ok := res.Output.(map[string]any)
	if !ok {
		t.Fatalf("Output = %#v; want an object", res.Output)
	}
	return out
}

// errorMessage returns err's message after checking its code.
func errorMessage(t *testing.T, err error, code string) string {
	t.Helper()
	nodetest.WantError(t, "Run", err, code, "")
	if err == nil {
		return ""
	}
	return err.Error()
}

// bounded returns a context that ends the test's wait on a stuck program.
func bounded(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// readPid reads a process id a test command wrote to a file.
func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("read pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		t.Fatalf("pid file holds %q", b)
	}
	return pid
}

// alive reports whether pid runs (a zombie waiting to be reaped does not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// Without /proc (macOS) a zombie counts as alive until reaped.
		return runtime.GOOS != "linux" || !os.IsNotExist(err)
	}
	// The state follows the command name in parentheses.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// wantGone fails unless pid stops running within a few seconds (the kill
// is immediate; reaping by init may lag).
func wantGone(t *testing.T, pid int) {
	t.Helper()
	for range 100 {
		if !alive(pid) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // clean up after the failure
	t.Errorf("process %d still runs; want it killed with its group", pid)
}

// nodePath is the machine's Node.js, which tests use as the runtime.
func nodePath(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	return p
}

// codeOpts are Options that run the machine's Node.js with base as the
// server's environment.
func codeOpts(t *testing.T, base []string, allow ...string) Options {
	o := fakeEnv(append(base, "SVC_NODE_BIN="+nodePath(t)), allow...)
	return o
}

// killPid cleans up a process a test left running on purpose.
func killPid(pid int) { syscall.Kill(pid, syscall.SIGKILL) } //nolint:errcheck // it may be gone
