package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/httpapi"
)

// nodeBundledPath is where the Code node looks for its runtime (rule 3 of
// spec/server.md section 1): SVC_NODE_BIN, else node-bundled beside the
// executable. PATH is never searched.
func nodeBundledPath(getenv func(string) string) string {
	if p := getenv("SVC_NODE_BIN"); p != "" {
		return p
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	name := "node-bundled"
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(filepath.Dir(exe), name)
}

// nodeBundledCheck returns the health check of the bundled runtime: it runs
// `<runtime> --version` and remembers the answer for a minute.
func nodeBundledCheck(getenv func(string) string) func(context.Context) httpapi.NodeBundled {
	var (
		mu      sync.Mutex
		last    httpapi.NodeBundled
		checked time.Time
	)
	return func(ctx context.Context) httpapi.NodeBundled {
		mu.Lock()
		defer mu.Unlock()
		if !checked.IsZero() && time.Since(checked) < time.Minute {
			return last
		}
		last, checked = probeNode(ctx, nodeBundledPath(getenv)), time.Now()
		return last
	}
}

func probeNode(ctx context.Context, path string) httpapi.NodeBundled {
	fail := httpapi.NodeBundled{Status: "error", Message: "the bundled Node.js runtime was not found or did not run"}
	if path == "" {
		return fail
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return fail
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	v := strings.TrimSpace(string(out))
	if err != nil || v == "" || len(v) > 64 {
		return fail
	}
	return httpapi.NodeBundled{Status: "ok", Version: v}
}
