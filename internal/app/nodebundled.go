package app

import (
	"context"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/nodes/process"
)

// nodeBundledCheck returns the health check of the Code node's runtime
// (rule 3 of spec/server.md section 1: SVC_NODE_BIN, else node-bundled
// beside the executable, never PATH): it runs `<runtime> --version` and
// remembers the answer for a minute.
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
		last, checked = probeNode(ctx, getenv), time.Now()
		return last
	}
}

// probeNode finds the runtime the Code node would use and asks its
// version; any failure is the same generic message.
func probeNode(ctx context.Context, getenv func(string) string) httpapi.NodeBundled {
	fail := httpapi.NodeBundled{Status: "error", Message: "the bundled Node.js runtime was not found or did not run"}
	path, err := process.FindRuntime(getenv)
	if err != nil {
		return fail
	}
	v, err := process.RuntimeVersion(ctx, path)
	if err != nil {
		return fail
	}
	return httpapi.NodeBundled{Status: "ok", Version: v}
}
