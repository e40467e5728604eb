package app

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestParseAPIDefaults(t *testing.T) {
	t.Parallel()
	c, err := parseAPI(nil, env(map[string]string{"HOME": "/home/u"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 7700 || c.Bind != "127.0.0.1" || c.MaxConcurrentRuns != 10 || c.MaxQueueWait != 30*time.Second ||
		c.TrustedProxyCount != -1 || c.DataDir != "/home/u/.local/share/svc" || c.Token != "" {
		t.Errorf("defaults = %+v", c)
	}
	c, _ = parseAPI(nil, env(map[string]string{"HOME": "/home/u", "XDG_DATA_HOME": "/xdg"}), io.Discard)
	if c.DataDir != "/xdg/svc" {
		t.Errorf("data dir with XDG_DATA_HOME = %s", c.DataDir)
	}
}

func TestParseAPIOptions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("k", 32)
	c, err := parseAPI([]string{
		"--port", "8080", "--token", long, "--allow-origin", "https://App.example.org", "--allow-origin", "http://localhost:3000/",
		"--allow-shell", "--allow-code", "--allow-database", "--allow-env-vars", "SVC_A, SVC_B_2", "--trusted-proxy-count", "1",
		"--max-concurrent-runs", "4", "--max-queue-wait-secs", "0", "--plugin-dir", dir, "--data-dir", dir, "--keychain",
		"--file-sandbox-dir", dir,
	}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port != 8080 || c.Token != long || strings.Join(c.AllowOrigins, " ") != "https://app.example.org http://localhost:3000" ||
		!c.AllowShell || !c.AllowCode || !c.AllowDatabase || strings.Join(c.AllowEnvVars, " ") != "SVC_A SVC_B_2" ||
		c.TrustedProxyCount != 1 || c.MaxConcurrentRuns != 4 || c.MaxQueueWait != 0 || !c.Keychain || c.FileSandboxDir != dir {
		t.Errorf("options = %+v", c)
	}
	if w := c.warnings(); len(w) != 1 || !strings.Contains(w[0], "DNS rebinding") {
		t.Errorf("warnings with a sandbox and the database on = %q", w)
	}
	if d := c.dangerous(); !d["shell_command"] || !d["code"] || !d["database"] {
		t.Errorf("dangerous = %v", d)
	}
}

func TestParseAPIToken(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 32)
	c, err := parseAPI(nil, env(map[string]string{"SVC_TOKEN": long, "HOME": "/h"}), io.Discard)
	if err != nil || c.Token != long {
		t.Errorf("SVC_TOKEN: %v, %v", c, err)
	}
	c, _ = parseAPI([]string{"--token", long + "flag"}, env(map[string]string{"SVC_TOKEN": long, "HOME": "/h"}), io.Discard)
	if c.Token != long+"flag" {
		t.Errorf("--token does not win over SVC_TOKEN")
	}
	c, _ = parseAPI(nil, env(map[string]string{"SVC_TOKEN": "   ", "HOME": "/h"}), io.Discard)
	if c.Token != "" {
		t.Errorf("a blank SVC_TOKEN counts as set")
	}
	for _, args := range [][]string{{"--token", "short"}} {
		if _, err := parseAPI(args, env(map[string]string{"HOME": "/h"}), io.Discard); err == nil || !strings.Contains(err.Error(), "32") {
			t.Errorf("%v: %v; want a refusal naming the 32-character minimum", args, err)
		}
	}
	if _, err := parseAPI(nil, env(map[string]string{"SVC_TOKEN": "short", "HOME": "/h"}), io.Discard); err == nil {
		t.Errorf("a short SVC_TOKEN is accepted")
	}
}

func TestParseAPIRejects(t *testing.T) {
	t.Parallel()
	file := t.TempDir() + "/f"
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--port", "70000"}, "--port"},
		{[]string{"--port", "x"}, "port"},
		{[]string{"--bind", "not an ip"}, "--bind"},
		{[]string{"--allow-origin", "example.org"}, "--allow-origin"},
		{[]string{"--allow-origin", "https://example.org/path"}, "--allow-origin"},
		{[]string{"--allow-env-vars", "PATH"}, "--allow-env-vars"},
		{[]string{"--trusted-proxy-count", "-2"}, "--trusted-proxy-count"},
		{[]string{"--max-concurrent-runs", "0"}, "--max-concurrent-runs"},
		{[]string{"--max-queue-wait-secs", "-1"}, "--max-queue-wait-secs"},
		{[]string{"--rate-limit", "-1"}, "--rate-limit"},
		{[]string{"--plugin-dir", "/does/not/exist"}, "--plugin-dir"},
		{[]string{"--file-sandbox-dir", file}, "--file-sandbox-dir"},
		{[]string{"--database-url", "mysql://x"}, "--database-url"},
		{[]string{"--database-url", "postgres://localhost/db"}, "not built yet"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		_, err := parseAPI(tc.args, env(map[string]string{"HOME": "/h"}), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("parseAPI(%v) = %v; want an error naming %s", tc.args, err, tc.flag)
		}
	}
}

func TestWarnings(t *testing.T) {
	t.Parallel()
	c, _ := parseAPI(nil, env(map[string]string{"HOME": "/h"}), io.Discard)
	if w := c.warnings(); len(w) != 1 || !strings.Contains(w[0], "--file-sandbox-dir") {
		t.Errorf("default warnings = %q", w)
	}
}

func TestProbeNode(t *testing.T) {
	t.Parallel()
	if got := probeNode(t.Context(), env(map[string]string{"SVC_NODE_BIN": "/does/not/exist"})); got.Status != "error" || got.Message == "" || got.Version != "" {
		t.Errorf("missing runtime = %+v", got)
	}
	node := "/usr/bin/node"
	if _, err := os.Stat(node); err != nil {
		t.Skip("no node binary on this machine")
	}
	if got := probeNode(t.Context(), env(map[string]string{"SVC_NODE_BIN": node})); got.Status != "ok" || !strings.HasPrefix(got.Version, "v") {
		t.Errorf("node runtime = %+v", got)
	}
	// PATH is never searched: without SVC_NODE_BIN the runtime must sit
	// beside the executable, and the test binary has none.
	if got := probeNode(t.Context(), env(map[string]string{"PATH": "/usr/bin"})); got.Status != "error" {
		t.Errorf("the runtime was found on PATH: %+v", got)
	}
}
