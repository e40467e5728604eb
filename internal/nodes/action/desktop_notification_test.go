package action

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// fakeNotifier writes a shell script standing in for notify-send and
// returns its path and the file where it records its arguments, one a line.
func fakeNotifier(t *testing.T, body string) (program, argv string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the notifier runs on Linux only")
	}
	dir := t.TempDir()
	argv = filepath.Join(dir, "argv")
	program = filepath.Join(dir, "notify-send")
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + argv + "'\n" + body + "\n"
	if err := os.WriteFile(program, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return program, argv
}

func readArgv(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the notifier did not run: %v", err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func TestNotificationSpec(t *testing.T) {
	t.Parallel()
	s := NotificationSpec(Options{})
	if s.TypeID != "desktop_notification" || s.Category != node.CategoryAction || !s.Enabled {
		t.Errorf("NotificationSpec() = %q in %q enabled %v; want desktop_notification in core_action, enabled", s.TypeID, s.Category, s.Enabled)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{node.OutPort}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if req := s.InputSchema()["required"]; !reflect.DeepEqual(req, []string{"title"}) {
		t.Errorf("required = %v; want [title]", req)
	}
	if _, ok := node.Default().Lookup("desktop_notification"); !ok {
		t.Errorf("desktop_notification is not registered")
	}
	if DefaultNotifyTimeout.Seconds() != 15 {
		t.Errorf("DefaultNotifyTimeout = %v; want 15s", DefaultNotifyTimeout)
	}
}

func TestNotificationArguments(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  map[string]any
		want []string
	}{
		{"title and body", map[string]any{"title": "Build done", "body": "all green"}, []string{"-u", "normal", "--", "Build done", "all green"}},
		{"no body", map[string]any{"title": "Only a title"}, []string{"-u", "normal", "--", "Only a title"}},
		{"blank body", map[string]any{"title": "T", "body": "  "}, []string{"-u", "normal", "--", "T"}},
		{"null body", map[string]any{"title": "T", "body": nil}, []string{"-u", "normal", "--", "T"}},
		{"low", map[string]any{"title": "T", "urgency": "low"}, []string{"-u", "low", "--", "T"}},
		{"critical in capitals", map[string]any{"title": "T", "urgency": "CRITICAL"}, []string{"-u", "critical", "--", "T"}},
		{"blank urgency", map[string]any{"title": "T", "urgency": ""}, []string{"-u", "normal", "--", "T"}},
		{"text that looks like options", map[string]any{"title": "-u", "body": "--help"}, []string{"-u", "normal", "--", "-u", "--help"}},
		{"quotes and dollars", map[string]any{"title": `it's "$HOME"`, "body": "`date`"}, []string{"-u", "normal", "--", `it's "$HOME"`, "`date`"}},
	}
	for _, tt := range tests {
		program, argv := fakeNotifier(t, "exit 0")
		env := nodetest.New(nil)
		res, err := nodetest.Run(t.Context(), NotificationSpec(Options{NotifySend: program}), tt.raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if got := readArgv(t, argv); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: notifier arguments = %q; want %q", tt.name, got, tt.want)
		}
		if want := map[string]any{"sent": true}; !reflect.DeepEqual(res.Output, want) || res.Port != "" {
			t.Errorf("%s: Result = %+v; want %v on the default port", tt.name, res, want)
		}
		if !env.Logged("notification sent") {
			t.Errorf("%s: log = %q; want a line saying the notification was sent", tt.name, env.Log())
		}
	}
}

func TestNotificationInvalidConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		raw         map[string]any
		code, field string
	}{
		{"missing title", map[string]any{}, CodeInvalidTitle, "title"},
		{"blank title", map[string]any{"title": "  "}, CodeInvalidTitle, "title"},
		{"null title", map[string]any{"title": nil}, CodeInvalidTitle, "title"},
		{"number title", map[string]any{"title": 5}, CodeInvalidTitle, "title"},
		{"object title", map[string]any{"title": map[string]any{"a": 1}}, CodeInvalidTitle, "title"},
		{"boolean body", map[string]any{"title": "T", "body": true}, CodeInvalidBody, "body"},
		{"array body", map[string]any{"title": "T", "body": []any{"a"}}, CodeInvalidBody, "body"},
		{"unknown urgency", map[string]any{"title": "T", "urgency": "urgent"}, CodeInvalidUrgency, "urgency"},
		{"urgency not text", map[string]any{"title": "T", "urgency": 2}, CodeInvalidUrgency, "urgency"},
	}
	for _, tt := range tests {
		program, argv := fakeNotifier(t, "exit 0")
		_, err := nodetest.Run(t.Context(), NotificationSpec(Options{NotifySend: program}), tt.raw, nodetest.New(nil))
		nodetest.WantError(t, tt.name, err, tt.code, tt.field)
		if _, err := os.Stat(argv); err == nil {
			t.Errorf("%s: the notifier ran", tt.name)
		}
	}
	// The plain constructor checks the same.
	for _, n := range []Notification{{Title: ""}, {Title: "T", Body: 1}, {Title: "T", Urgency: "loud"}} {
		if _, err := NewNotification(n, Options{}); err == nil {
			t.Errorf("NewNotification(%+v) succeeded; want an error", n)
		}
	}
}

func TestNotificationFailure(t *testing.T) {
	t.Parallel()
	program, _ := fakeNotifier(t, "echo 'GDBus.Error: no notification daemon' >&2\nexit 1")
	_, err := nodetest.Run(t.Context(), NotificationSpec(Options{NotifySend: program}), map[string]any{"title": "T"}, nodetest.New(nil))
	ne := wantRetry(t, "exit 1", err, CodeNotifyError, node.NoRetry)
	if ne != nil && (!strings.Contains(ne.Message, "GDBus.Error: no notification daemon") || !strings.Contains(ne.Message, "exit status 1")) {
		t.Errorf("message %q; want the exit status and the stderr", ne.Message)
	}
}

// TestNotificationStopped checks the stop timeout with a notifier that
// sleeps in a child process, which is killed with it.
func TestNotificationStopped(t *testing.T) {
	t.Parallel()
	program, _ := fakeNotifier(t, "echo waiting for the bus >&2\nsleep 60\necho never >&2")
	opts := fast
	opts.NotifySend = program
	_, err := nodetest.Run(t.Context(), NotificationSpec(opts), map[string]any{"title": "T"}, nodetest.New(nil))
	ne := wantRetry(t, "stopped", err, CodeNotifyError, node.NoRetry)
	if ne != nil && (!strings.Contains(ne.Message, "did not finish within 200ms") || !strings.Contains(ne.Message, "waiting for the bus")) {
		t.Errorf("message %q; want the timeout and the stderr so far", ne.Message)
	}
}

func TestNotificationCancelled(t *testing.T) {
	t.Parallel()
	program, _ := fakeNotifier(t, "sleep 60")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := nodetest.Run(ctx, NotificationSpec(Options{NotifySend: program}), map[string]any{"title": "T"}, nodetest.New(nil))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v; want it to wrap context.Canceled", err)
	}
}

func TestNotificationMissingProgram(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the notifier runs on Linux only")
	}
	for _, program := range []string{"svc-no-such-notifier", filepath.Join(t.TempDir(), "missing")} {
		_, err := nodetest.Run(t.Context(), NotificationSpec(Options{NotifySend: program}), map[string]any{"title": "T"}, nodetest.New(nil))
		ne := wantRetry(t, program, err, CodeNotifyError, node.NoRetry)
		if ne != nil && !strings.Contains(ne.Message, program) {
			t.Errorf("message %q; want it to name %s", ne.Message, program)
		}
	}
}

// TestNotificationRealNotifySend runs the real notify-send with a session
// bus that does not exist, so it fails the same way on every machine: the
// node must report NOTIFY_ERROR with notify-send's own error output. It
// sets environment variables, so it does not run in parallel.
func TestNotificationRealNotifySend(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the notifier runs on Linux only")
	}
	if _, err := exec.LookPath(DefaultNotifySend); err != nil {
		t.Skip("notify-send is not installed (Debian package libnotify-bin)")
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path="+filepath.Join(t.TempDir(), "no-bus"))
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "")
	_, err := nodetest.Run(t.Context(), NotificationSpec(Options{}),
		map[string]any{"title": "svc test", "body": "this should not show", "urgency": "low"}, nodetest.New(nil))
	ne := wantRetry(t, "real notify-send", err, CodeNotifyError, node.NoRetry)
	if ne != nil && !strings.Contains(ne.Message, "notify-send failed (exit status 1): ") {
		t.Errorf("message %q; want notify-send's exit status and error output", ne.Message)
	}
	t.Logf("notify-send without a bus: %v", err)
}
