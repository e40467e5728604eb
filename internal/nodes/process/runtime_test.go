//go:build unix

package process

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node/nodetest"
)

// writeScript writes an executable shell script.
func writeScript(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestRuntimeBesideExecutable puts node-bundled beside the test binary. It
// is not parallel: the tests that expect no runtime there run after it.
func TestRuntimeBesideExecutable(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("os.Executable: %v", err)
	}
	bundled := filepath.Join(filepath.Dir(exe), RuntimeName())
	if _, err := os.Lstat(bundled); err == nil {
		t.Skipf("%s exists already", bundled)
	}
	if err := os.Symlink(nodePath(t), bundled); err != nil {
		t.Skipf("cannot write beside the test binary: %v", err)
	}
	t.Cleanup(func() { os.Remove(bundled) })

	got, err := FindRuntime(func(string) string { return "" })
	if err != nil || got != bundled {
		t.Fatalf("FindRuntime() = %q, %v; want %q", got, err, bundled)
	}
	// SVC_NODE_BIN comes first, and is never a fallback to node-bundled.
	if _, err := FindRuntime(func(string) string { return "/nonexistent/node" }); !errors.Is(err, ErrNoRuntime) {
		t.Errorf("FindRuntime with a missing SVC_NODE_BIN = %v; want ErrNoRuntime", err)
	}
	res, err := nodetest.Run(bounded(t), CodeSpec(fakeEnv(pathEnv())), map[string]any{"code": "output(process.version)"}, nodetest.New(nil))
	if out := output(t, res, err); !strings.HasPrefix(out["result"].(string), "v") {
		t.Errorf("result = %v; want the runtime's version", out["result"])
	}
}

// TestRuntimeNeverFromPATH puts a fake node first in PATH and checks that
// nothing runs it. It changes the environment, so it is not parallel.
func TestRuntimeNeverFromPATH(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	writeScript(t, filepath.Join(dir, "node"), "touch "+marker)
	writeScript(t, filepath.Join(dir, RuntimeName()), "touch "+marker)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, bin := range []string{"", "node", RuntimeName()} {
		t.Setenv("SVC_NODE_BIN", bin)
		_, err := nodetest.Run(bounded(t), CodeSpec(Options{}), map[string]any{"code": "output(1)"}, nodetest.New(nil))
		msg := errorMessage(t, err, CodeRuntimeNotFound)
		if bin == "" && (!strings.Contains(msg, "node-bundled") || !strings.Contains(msg, "SVC_NODE_BIN")) {
			t.Errorf("message %q; want it to name node-bundled and SVC_NODE_BIN", msg)
		}
		if bin != "" && !strings.Contains(msg, "SVC_NODE_BIN") {
			t.Errorf("SVC_NODE_BIN=%s: message %q; want it to name SVC_NODE_BIN", bin, msg)
		}
		// Options.NodeBin as a bare name is not searched for either.
		_, err = nodetest.Run(bounded(t), CodeSpec(Options{NodeBin: "node"}), map[string]any{"code": "output(1)"}, nodetest.New(nil))
		errorMessage(t, err, CodeRuntimeNotFound)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the node on PATH ran")
	}
}

func TestFindRuntime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "node")
	writeScript(t, exe, "echo v1.2.3")
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o644) //nolint:errcheck // checked by FindRuntime
	tests := []struct {
		env, want, err string
	}{
		{exe, exe, ""},
		{plain, "", "not executable"},
		{dir, "", "not a file"},
		{filepath.Join(dir, "missing"), "", "does not exist"},
		{"", "", "node-bundled"},
	}
	for _, tt := range tests {
		got, err := FindRuntime(func(k string) string {
			if k == "SVC_NODE_BIN" {
				return tt.env
			}
			return ""
		})
		if tt.err == "" {
			if err != nil || got != tt.want {
				t.Errorf("FindRuntime(SVC_NODE_BIN=%q) = %q, %v; want %q", tt.env, got, err, tt.want)
			}
			continue
		}
		if !errors.Is(err, ErrNoRuntime) || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("FindRuntime(SVC_NODE_BIN=%q) error = %v; want ErrNoRuntime saying %q", tt.env, err, tt.err)
		}
	}
}

func TestRuntimeNotFound(t *testing.T) {
	t.Parallel()
	_, err := nodetest.Run(bounded(t), CodeSpec(fakeEnv(pathEnv())), map[string]any{"code": "output(1)"}, nodetest.New(nil))
	msg := errorMessage(t, err, CodeRuntimeNotFound)
	if !strings.Contains(msg, "node-bundled") || !strings.Contains(msg, "SVC_NODE_BIN") {
		t.Errorf("message %q; want it to say where the runtime is looked for", msg)
	}
	// A runtime that does not start.
	bad := filepath.Join(t.TempDir(), "node")
	os.WriteFile(bad, []byte("\x7fELF garbage"), 0o755) //nolint:errcheck // checked by the run
	_, err = nodetest.Run(bounded(t), CodeSpec(Options{NodeBin: bad}), map[string]any{"code": "output(1)"}, nodetest.New(nil))
	errorMessage(t, err, CodeRuntimeNotFound)
}

func TestRuntimeVersion(t *testing.T) {
	t.Parallel()
	v, err := RuntimeVersion(bounded(t), nodePath(t))
	if err != nil || !strings.HasPrefix(v, "v") {
		t.Errorf("RuntimeVersion(node) = %q, %v; want v...", v, err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{
		"silent": "exit 0",
		"fails":  "echo v1; exit 1",
		"long":   "echo " + strings.Repeat("v", 100),
		"lines":  "echo v1; echo v2",
	} {
		p := filepath.Join(dir, name)
		writeScript(t, p, body)
		if v, err := RuntimeVersion(bounded(t), p); err == nil {
			t.Errorf("RuntimeVersion(%s) = %q; want an error", name, v)
		}
	}
	if _, err := RuntimeVersion(bounded(t), "node"); err == nil {
		t.Errorf("RuntimeVersion(node) with a relative path: no error; want one")
	}
}
