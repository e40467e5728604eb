//go:build unix

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// shell runs Shell Command with a raw config and options.
func shell(t *testing.T, ctx context.Context, raw map[string]any, opts Options) (node.Result, error) {
	t.Helper()
	return nodetest.Run(ctx, ShellSpec(opts), raw, nodetest.New(nil))
}

// buildShell builds a Shell Command runner so a test can lower its limits.
func buildShell(t *testing.T, raw map[string]any, opts Options) *Shell {
	t.Helper()
	r, err := nodetest.Build(ShellSpec(opts), raw)
	if err != nil {
		t.Fatalf("Build(%v) error: %v", raw, err)
	}
	return r.(*Shell)
}

func TestShellSpec(t *testing.T) {
	t.Parallel()
	s := ShellSpec(Options{})
	if s.TypeID != "shell_command" || s.Enabled || s.EnableFlag != "--allow-shell" || s.Category != node.CategoryAction {
		t.Errorf("spec = %s enabled %v flag %q category %s; want shell_command, disabled, --allow-shell, core_action",
			s.TypeID, s.Enabled, s.EnableFlag, s.Category)
	}
	if len(s.Inputs) != 1 || s.Inputs[0].ID != "in" || len(s.Outputs) != 1 || s.Outputs[0].ID != "out" {
		t.Errorf("ports = %v, %v; want in, out", s.Inputs, s.Outputs)
	}
	reg, ok := node.Default().Lookup("shell_command")
	if !ok || reg.Enabled {
		t.Errorf("default registry: shell_command registered %v, enabled %v; want registered and disabled", ok, ok && reg.Enabled)
	}
	r := node.Default()
	if err := r.Replace(ShellSpec(Options{AllowEnvVars: []string{"SVC_X"}})); err != nil {
		t.Errorf("Replace(ShellSpec) error: %v", err)
	}
}

func TestShellConfig(t *testing.T) {
	t.Parallel()
	bad := []struct {
		raw   map[string]any
		field string
	}{
		{map[string]any{}, "command"},
		{map[string]any{"command": "  "}, "command"},
		{map[string]any{"command": "true", "timeout_secs": "soon"}, "timeout_secs"},
		{map[string]any{"command": "true", "env": "not json"}, "env"},
		{map[string]any{"command": "true", "env": []any{"A=1"}}, "env"},
		{map[string]any{"command": "true", "env": map[string]any{"A": map[string]any{"b": 1}}}, "env"},
		{map[string]any{"command": "true", "env": map[string]any{"A=B": "x"}}, "env"},
		{map[string]any{"command": "true", "env": map[string]any{"": "x"}}, "env"},
		{map[string]any{"command": "echo \x00"}, "command"},
	}
	for _, tt := range bad {
		_, err := nodetest.Build(ShellSpec(Options{}), tt.raw)
		nodetest.WantError(t, fmt.Sprintf("Build(%v)", tt.raw), err, node.CodeInvalidConfig, tt.field)
	}
	clamp := []struct {
		secs any
		want time.Duration
	}{
		{nil, 30 * time.Second},
		{"", 30 * time.Second},
		{0, time.Second},
		{-5, time.Second},
		{"2.5", 2500 * time.Millisecond},
		{1e9, 86400 * time.Second},
	}
	for _, tt := range clamp {
		s := buildShell(t, map[string]any{"command": "true", "timeout_secs": tt.secs}, Options{})
		if s.Timeout != tt.want {
			t.Errorf("timeout_secs %v: Timeout = %v; want %v", tt.secs, s.Timeout, tt.want)
		}
	}
}

func TestShellOutput(t *testing.T) {
	t.Parallel()
	res, err := shell(t, bounded(t), map[string]any{"command": "echo hi; printf 'é' >&2; echo done"}, fakeEnv(pathEnv()))
	out := output(t, res, err)
	want := map[string]any{"stdout": "hi\ndone\n", "stderr": "é", "exit_code": 0, "success": true, "truncated": false}
	for k, v := range want {
		if out[k] != v {
			t.Errorf("%s = %#v; want %#v", k, out[k], v)
		}
	}
}

func TestShellFailure(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		want    []string
		notWant []string
	}{
		{"echo fine; echo 'it broke' >&2; exit 3", []string{"exited with code 3", "it broke"}, []string{"fine"}},
		{"echo only stdout; exit 1", []string{"exited with code 1", "only stdout"}, nil},
		{"exit 2", []string{"exited with code 2"}, nil},
		{"kill -9 $$", []string{"killed by signal 9"}, nil},
		{"no-such-command-xyz", []string{"code 127", "not found"}, nil},
		{"seq 1 100000 >&2; exit 1", []string{"100000"}, []string{"\n1\n2\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			t.Parallel()
			_, err := shell(t, bounded(t), map[string]any{"command": tt.command}, fakeEnv(pathEnv()))
			msg := errorMessage(t, err, CodeCommandFailed)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q; want it to contain %q", msg, w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(msg, w) {
					t.Errorf("message %q; want it without %q", msg, w)
				}
			}
			if len(msg) > maxTail+200 {
				t.Errorf("message is %d bytes; want at most about %d", len(msg), maxTail)
			}
			var ne *node.Error
			if errors.As(err, &ne) && ne.Retry != node.NoRetry {
				t.Errorf("Retry = %v; want NoRetry", ne.Retry)
			}
		})
	}
}

func TestShellMasksSecrets(t *testing.T) {
	t.Parallel()
	secrets := []string{"hunter2", "abcdefghijklmnopqrstuv", "AKIAIOSFODNN7EXAMPLE", "ghp_0123456789abcdefghijABCDEFGHIJ",
		"sk-proj-abcdefghijklmnopqrstuvwx", "xoxb-123456789012-abcdefghij", "s3cr3t"}
	cmd := `echo "login password=hunter2" >&2
echo "Authorization: Bearer abcdefghijklmnopqrstuv" >&2
echo "key AKIAIOSFODNN7EXAMPLE" >&2
echo "GH ghp_0123456789abcdefghijABCDEFGHIJ and sk-proj-abcdefghijklmnopqrstuvwx" >&2
echo "slack xoxb-123456789012-abcdefghij" >&2
echo "db postgres://app:s3cr3t@db.local/x failed" >&2
exit 1`
	_, err := shell(t, bounded(t), map[string]any{"command": cmd}, fakeEnv(pathEnv()))
	msg := errorMessage(t, err, CodeCommandFailed)
	for _, s := range secrets {
		if strings.Contains(msg, s) {
			t.Errorf("message %q shows secret %q", msg, s)
		}
	}
	for _, w := range []string{"login password=****", "Bearer ****", "failed"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q; want it to contain %q", msg, w)
		}
	}
}

func TestShellCwd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	res, err := shell(t, bounded(t), map[string]any{"command": "pwd -P", "cwd": dir}, fakeEnv(pathEnv()))
	out := output(t, res, err)
	want, _ := filepath.EvalSymlinks(dir)
	if got := strings.TrimSpace(out["stdout"].(string)); got != want {
		t.Errorf("pwd = %q; want %q", got, want)
	}
	for _, cwd := range []string{filepath.Join(dir, "missing"), filepath.Join(dir, "file")} {
		os.WriteFile(filepath.Join(dir, "file"), nil, 0o600) //nolint:errcheck // checked by the run
		_, err := shell(t, bounded(t), map[string]any{"command": "true", "cwd": cwd}, fakeEnv(pathEnv()))
		nodetest.WantError(t, "cwd "+cwd, err, node.CodeInvalidConfig, "cwd")
	}
}

func TestShellEnvironment(t *testing.T) {
	t.Parallel()
	base := pathEnv("HOME=/home/x", "KEEP=kept", "DROP=dropped", "SVC_TOKEN=secret-token", "SVC_ALLOWED=yes")
	cmd := `printf '%s|%s|%s|%s|%s|%s|%s|%s' "$FOO" "$NUM" "$FLAG" "$KEEP" "${DROP-unset}" "${SVC_TOKEN-unset}" "${SVC_ALLOWED-unset}" "${SVC_SET-unset}"`
	raw := map[string]any{"command": cmd, "env": map[string]any{
		"FOO": "bar baz", "NUM": 3, "FLAG": true, "DROP": nil, "SVC_SET": "explicit",
	}}
	tests := []struct {
		allow []string
		want  string
	}{
		{nil, "bar baz|3|true|kept|unset|unset|unset|explicit"},
		{[]string{"SVC_ALLOWED"}, "bar baz|3|true|kept|unset|unset|yes|explicit"},
	}
	for _, tt := range tests {
		res, err := shell(t, bounded(t), raw, fakeEnv(base, tt.allow...))
		out := output(t, res, err)
		if out["stdout"] != tt.want {
			t.Errorf("allow %v: stdout = %q; want %q", tt.allow, out["stdout"], tt.want)
		}
	}
	// The env field may be JSON text.
	res, err := shell(t, bounded(t), map[string]any{"command": `printf %s "$A"`, "env": `{"A": "from text"}`}, fakeEnv(pathEnv()))
	if out := output(t, res, err); out["stdout"] != "from text" {
		t.Errorf("env as text: stdout = %q; want %q", out["stdout"], "from text")
	}
}

func TestChildEnv(t *testing.T) {
	t.Parallel()
	v := "new"
	got := childEnv([]string{"A=1", "SVC_X=2", "SVC_Y=3", "A=dup", "B=4", "noequals", "svc_lower=5"},
		[]string{"SVC_Y"}, map[string]*string{"B": nil, "C": &v, "A": &v})
	want := []string{"A=new", "SVC_Y=3", "svc_lower=5", "C=new"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("childEnv = %q; want %q", got, want)
	}
}

func TestShellTimeoutKillsChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct{ name, command string }{
		// A child and a grandchild, both in the background.
		{"grandchild", `sh -c 'sleep 60 & echo $! > ` + dir + `/g1; wait' & sleep 60`},
		// The shell has exited; a child it left holds stdout open.
		{"holds stdout", `sleep 60 & echo $! > ` + dir + `/g2`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := shell(t, bounded(t), map[string]any{"command": tt.command, "timeout_secs": 1}, fakeEnv(pathEnv()))
			msg := errorMessage(t, err, CodeTimeout)
			if !strings.Contains(msg, "longer than 1s") {
				t.Errorf("message %q; want it to name the timeout", msg)
			}
			var ne *node.Error
			if errors.As(err, &ne) && ne.Retry != node.NoRetry {
				t.Errorf("Retry = %v; want NoRetry", ne.Retry)
			}
			wantGone(t, readPid(t, filepath.Join(dir, fmt.Sprintf("g%d", i+1))))
		})
	}
}

func TestShellBackgroundWithoutOutput(t *testing.T) {
	t.Parallel()
	// A child that does not hold the output is left running.
	pidFile := filepath.Join(t.TempDir(), "pid")
	res, err := shell(t, bounded(t), map[string]any{
		"command": `sleep 60 > /dev/null 2>&1 & echo $! > ` + pidFile + `; echo started`, "timeout_secs": 20,
	}, fakeEnv(pathEnv()))
	out := output(t, res, err)
	pid := readPid(t, pidFile)
	t.Cleanup(func() { killPid(pid) })
	if out["stdout"] != "started\n" || !alive(pid) {
		t.Errorf("stdout = %q, background child alive %v; want started and alive", out["stdout"], alive(pid))
	}
}

func TestShellCancel(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(bounded(t))
	go func() {
		for {
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := shell(t, ctx, map[string]any{
		"command": `(sleep 60 & echo $! > ` + pidFile + `.tmp; mv ` + pidFile + `.tmp ` + pidFile + `; wait)`,
	}, fakeEnv(pathEnv()))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v; want context.Canceled", err)
	}
	wantGone(t, readPid(t, pidFile))
}

func TestShellKeepsFirst10MB(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n         int
		stream    string
		truncated bool
	}{
		{MaxKept, "stdout", false},
		{MaxKept + 1, "stdout", true},
		{MaxKept, "stderr", false},
		{MaxKept + 1, "stderr", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d", tt.stream, tt.n), func(t *testing.T) {
			t.Parallel()
			redirect := ""
			if tt.stream == "stderr" {
				redirect = " >&2"
			}
			cmd := fmt.Sprintf("head -c %d /dev/zero%s", tt.n, redirect)
			res, err := shell(t, bounded(t), map[string]any{"command": cmd}, fakeEnv(pathEnv()))
			out := output(t, res, err)
			got := out[tt.stream].(string)
			if len(got) != MaxKept || strings.Trim(got, "\x00") != "" {
				t.Errorf("%s holds %d bytes; want %d zero bytes", tt.stream, len(got), MaxKept)
			}
			if out["truncated"] != tt.truncated {
				t.Errorf("truncated = %v; want %v", out["truncated"], tt.truncated)
			}
		})
	}
}

func TestShellCutsAtCharacter(t *testing.T) {
	t.Parallel()
	s := buildShell(t, map[string]any{"command": "printf 'aé€'"}, fakeEnv(pathEnv()))
	for keep, want := range map[int]string{1: "a", 2: "a", 3: "aé", 4: "aé", 5: "aé", 6: "aé€"} {
		s.lim = limits{keep: keep}
		res, err := s.Run(bounded(t), nodetest.New(nil))
		out := output(t, res, err)
		if out["stdout"] != want || out["truncated"] != (keep < 6) {
			t.Errorf("keep %d: stdout = %q, truncated %v; want %q, %v", keep, out["stdout"], out["truncated"], want, keep < 6)
		}
	}
}

func TestShellOutputFlood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, command string
		flood         bool
	}{
		{"exactly 256 MB", fmt.Sprintf("head -c %d /dev/zero", MaxFlood), false},
		{"256 MB and one byte", fmt.Sprintf("head -c %d /dev/zero", MaxFlood+1), true},
		{"stderr", fmt.Sprintf("head -c %d /dev/zero >&2", MaxFlood+1), true},
		// A command that would never end is stopped.
		{"endless", "yes", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := shell(t, bounded(t), map[string]any{"command": tt.command}, fakeEnv(pathEnv()))
			if !tt.flood {
				out := output(t, res, err)
				if out["truncated"] != true || len(out["stdout"].(string)) != MaxKept {
					t.Errorf("truncated = %v, stdout %d bytes; want true, %d", out["truncated"], len(out["stdout"].(string)), MaxKept)
				}
				return
			}
			msg := errorMessage(t, err, node.CodeOutputFlood)
			if !strings.Contains(msg, "256 MB") {
				t.Errorf("message %q; want it to name 256 MB", msg)
			}
		})
	}
}

func TestShellOutputFloodLowered(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	s := buildShell(t, map[string]any{"command": `sh -c 'echo $$ > ` + pidFile + `; sleep 60' & while [ ! -s ` + pidFile + ` ]; do sleep 0.01; done; head -c 5000 /dev/zero >&2; sleep 60`},
		fakeEnv(pathEnv()))
	s.lim = limits{keep: 100, flood: 4096}
	_, err := s.Run(bounded(t), nodetest.New(nil))
	msg := errorMessage(t, err, node.CodeOutputFlood)
	if !strings.Contains(msg, "stderr") {
		t.Errorf("message %q; want it to name stderr", msg)
	}
	wantGone(t, readPid(t, pidFile))
}
