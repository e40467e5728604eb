package mcpbridge_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/mcpbridge"
)

var (
	svcMCP     = mcpbridge.Program{Name: "svc-mcp"}
	svcOffline = mcpbridge.Program{Name: "svc-mcp-offline", Offline: true}
	onlineOnly = mcpbridge.Program{Name: "svc-mcp-online", OnlineOnly: true}
)

// runMain runs Main with an environment and a client that disconnects at
// once (empty stdin).
func runMain(t *testing.T, prog mcpbridge.Program, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	code = mcpbridge.Main(ctx, prog, args, func(k string) string { return env[k] }, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestStartupErrors checks every start-up error: exit code 2, a message on
// stderr, nothing on stdout.
func TestStartupErrors(t *testing.T) {
	t.Parallel()
	tok := map[string]string{"SVC_TOKEN": writeToken}
	with := func(m map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for a, b := range m {
			if a != k {
				out[a] = b
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		prog mcpbridge.Program
		env  map[string]string
		args []string
		want string
	}{
		{"URL without token", svcMCP, map[string]string{"SVC_URL": "http://127.0.0.1:7700"}, nil, "SVC_URL is set but SVC_TOKEN is not"},
		{"--url without token", svcMCP, nil, []string{"--url", "http://127.0.0.1:7700"}, "--url is set but SVC_TOKEN is not"},
		{"blank token", svcMCP, map[string]string{"SVC_URL": "http://127.0.0.1:7700", "SVC_TOKEN": "  "}, nil, "SVC_TOKEN is not"},
		{"token with a space", svcMCP, map[string]string{"SVC_URL": "http://127.0.0.1:7700", "SVC_TOKEN": "a b"}, nil, "cannot be sent in a header"},
		{"URL not valid", svcMCP, with(tok, "SVC_URL", "http://[::1"), nil, "SVC_URL is not a valid URL"},
		{"URL not http", svcMCP, with(tok, "SVC_URL", "ftp://example.com"), nil, "must be an http or https URL"},
		{"URL relative", svcMCP, with(tok, "SVC_URL", "localhost:7700"), nil, "must be an http or https URL"},
		{"URL with password", svcMCP, with(tok, "SVC_URL", "https://me:secret@example.com"), nil, "must not contain a username or password"},
		{"URL with username", svcMCP, tok, []string{"--url", "https://me@example.com"}, "--url must not contain a username or password"},
		{"URL without host", svcMCP, with(tok, "SVC_URL", "http://"), nil, "has no host"},
		{"URL with port only", svcMCP, with(tok, "SVC_URL", "http://:7700"), nil, "has no host"},
		{"URL with query", svcMCP, with(tok, "SVC_URL", "http://example.com/?a=1"), nil, "must not have a query"},
		{"timeout 0", svcMCP, nil, []string{"--timeout-secs", "0"}, "--timeout-secs must be 1 to 3600"},
		{"timeout 3601", svcMCP, nil, []string{"--timeout-secs=3601"}, "--timeout-secs must be 1 to 3600"},
		{"timeout not a number", svcMCP, nil, []string{"--timeout-secs", "x"}, "timeout-secs"},
		{"output 1023", svcMCP, nil, []string{"--max-output-bytes", "1023"}, "--max-output-bytes must be 1024 to 4194304"},
		{"output 4194305", svcMCP, nil, []string{"--max-output-bytes", "4194305"}, "--max-output-bytes must be 1024 to 4194304"},
		{"unknown flag", svcMCP, nil, []string{"--token", "x"}, "flag provided but not defined: -token"},
		{"argument", svcMCP, nil, []string{"serve"}, `unexpected argument "serve"`},
		{"offline build with --url", svcOffline, tok, []string{"--url", "http://127.0.0.1:7700"}, "svc-mcp-offline is always offline"},
		{"online-only build without URL", onlineOnly, tok, nil, "SVC_URL (or --url) is required: this build has no offline mode"},
	} {
		code, stdout, stderr := runMain(t, tc.prog, tc.env, tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr with %q", tc.name, code, stdout, stderr, tc.want)
		}
		if strings.Contains(stderr, "secret") {
			t.Errorf("%s: stderr %q shows the password", tc.name, stderr)
		}
	}
}

// TestStartup checks the mode selection and the plain-http warning of a
// bridge that starts (and ends when its client disconnects).
func TestStartup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		prog   mcpbridge.Program
		env    map[string]string
		args   []string
		log    string // in stderr
		noWarn bool
	}{
		{"offline", svcMCP, nil, nil, "mode=offline", true},
		{"out dir", svcMCP, map[string]string{"SVC_OUT_DIR": "/tmp/x"}, nil, "out_dir=/tmp/x", true},
		{"online", svcMCP, map[string]string{"SVC_URL": "http://127.0.0.1:7700", "SVC_TOKEN": writeToken}, nil, "mode=online", true},
		{"--url wins", svcMCP, map[string]string{"SVC_URL": "ftp://bad", "SVC_TOKEN": writeToken}, []string{"--url", "https://svc.example.com/"}, "url=https://svc.example.com", true},
		{"localhost", svcMCP, map[string]string{"SVC_URL": "http://LocalHost:7700", "SVC_TOKEN": writeToken}, nil, "mode=online", true},
		{"ipv6 loopback", svcMCP, map[string]string{"SVC_URL": "http://[::1]:7700", "SVC_TOKEN": writeToken}, nil, "mode=online", true},
		{"plain http", svcMCP, map[string]string{"SVC_URL": "http://svc.example.com:7700", "SVC_TOKEN": writeToken}, nil, "uses plain http to svc.example.com", false},
		{"plain http private", svcMCP, map[string]string{"SVC_URL": "http://10.0.0.5", "SVC_TOKEN": writeToken}, nil, "uses plain http to 10.0.0.5", false},
		{"offline build ignores SVC_URL", svcOffline, map[string]string{"SVC_URL": "http://127.0.0.1:7700"}, nil, "SVC_URL is set and ignored", false},
	} {
		code, stdout, stderr := runMain(t, tc.prog, tc.env, tc.args...)
		if code != 0 || stdout != "" || !strings.Contains(stderr, tc.log) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 0 and %q", tc.name, code, stdout, stderr, tc.log)
		}
		if warned := strings.Contains(stderr, "level=WARN"); warned == tc.noWarn {
			t.Errorf("%s: warning %v; stderr %q", tc.name, warned, stderr)
		}
	}
	code, stdout, _ := runMain(t, svcMCP, nil, "--version")
	if code != 0 || stdout != "svc-mcp "+engine.Version+"\n" {
		t.Errorf("--version: exit %d, %q", code, stdout)
	}
	code, stdout, _ = runMain(t, svcOffline, nil, "--help")
	if code != 0 || !strings.Contains(stdout, "usage: svc-mcp-offline") || !strings.Contains(stdout, "--max-output-bytes") {
		t.Errorf("--help: exit %d, %q", code, stdout)
	}
}
