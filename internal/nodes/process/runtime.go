package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// ErrNoRuntime is wrapped by FindRuntime's errors.
var ErrNoRuntime = errors.New("no Node.js runtime")

// RuntimeName is the file name of the bundled runtime, looked for beside the
// server's executable.
func RuntimeName() string {
	if runtime.GOOS == "windows" {
		return "node-bundled.exe"
	}
	return "node-bundled"
}

// FindRuntime returns the Node.js runtime the Code node runs (rule 3 of
// spec/server.md section 1): the path in SVC_NODE_BIN when it is set, else
// node-bundled in the directory of the server's executable. PATH is never
// searched: a relative SVC_NODE_BIN, even a bare name such as "node", is
// taken relative to the working directory. The file must exist, be a
// regular file and (outside Windows) be executable; otherwise the error
// wraps ErrNoRuntime and says where it looked.
func FindRuntime(getenv func(string) string) (string, error) {
	if p := getenv("SVC_NODE_BIN"); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("%w: SVC_NODE_BIN=%q: %v", ErrNoRuntime, p, err)
		}
		if err := runnable(abs); err != nil {
			return "", fmt.Errorf("%w: SVC_NODE_BIN=%q: %v", ErrNoRuntime, p, err)
		}
		return abs, nil
	}
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("%w: cannot find the server's executable: %v", ErrNoRuntime, err)
	}
	p := filepath.Join(filepath.Dir(exe), RuntimeName())
	if err := runnable(p); err != nil {
		return "", fmt.Errorf("%w: %v; put %s beside the server's executable or set SVC_NODE_BIN", ErrNoRuntime, err, RuntimeName())
	}
	return p, nil
}

func runnable(p string) error {
	st, err := os.Stat(p)
	switch {
	case err != nil:
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s does not exist", p)
		}
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a file", p)
	case runtime.GOOS != "windows" && st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", p)
	}
	return nil
}

// versionTimeout bounds RuntimeVersion.
const versionTimeout = 5 * time.Second

// RuntimeVersion runs `<path> --version` (at most 5 seconds, SVC_
// variables hidden, killed with its process group when it overruns) and
// returns what it printed, such as "v20.11.1". It fails when the runtime
// does not run, exits non-zero, or prints nothing or more than 64 bytes.
func RuntimeVersion(ctx context.Context, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", fmt.Errorf("runtime path %q is not absolute", path)
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.Command(path, "--version")
	cmd.Env = childEnv(os.Environ(), nil, nil)
	out := newCapture("stdout", 4<<10, false, 64<<10)
	errs := newCapture("stderr", 4<<10, false, 64<<10)
	ex, err := (&spawn{cmd: cmd, stdout: out, stderr: errs}).run(ctx)
	if err != nil {
		return "", fmt.Errorf("run %s --version: %w", path, err)
	}
	if ex.stopped != nil {
		return "", fmt.Errorf("run %s --version: %w", path, ex.stopped)
	}
	if code := exitCode(ex.state); code != 0 {
		return "", fmt.Errorf("%s --version exited with code %d", path, code)
	}
	v := strings.TrimSpace(out.text())
	if v == "" || len(v) > 64 || strings.ContainsAny(v, "\n\r") {
		return "", fmt.Errorf("%s --version printed %q, not a version", path, v)
	}
	return v, nil
}
