//go:build unix

package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
	"github.com/svcrun/svc/internal/value"
)

// varsEnv is a nodetest.Env that lists its variables, as the engine's Env
// is asked to.
type varsEnv struct{ *nodetest.Env }

func (e varsEnv) Vars() map[string]any { return e.Env.Vars }

// runCode runs the Code node with a raw config, the machine's Node.js and
// base as the server's environment.
func runCode(t *testing.T, ctx context.Context, raw map[string]any, in any, base []string, allow ...string) (node.Result, error) {
	t.Helper()
	env := nodetest.New(in)
	return nodetest.Run(ctx, CodeSpec(codeOpts(t, base, allow...)), raw, env)
}

// buildCode builds a Code runner so a test can lower its limits.
func buildCode(t *testing.T, code string) *Code {
	t.Helper()
	r, err := nodetest.Build(CodeSpec(codeOpts(t, pathEnv())), map[string]any{"code": code})
	if err != nil {
		t.Fatalf("Build error: %v", err)
	}
	return r.(*Code)
}

func TestCodeSpec(t *testing.T) {
	t.Parallel()
	s := CodeSpec(Options{})
	if s.TypeID != "code" || s.Enabled || s.EnableFlag != "--allow-code" {
		t.Errorf("spec = %s enabled %v flag %q; want code, disabled, --allow-code", s.TypeID, s.Enabled, s.EnableFlag)
	}
	if len(s.Outputs) != 2 || s.Outputs[0].ID != "out" || s.Outputs[1].ID != "error" || s.DefaultOutput() != "out" {
		t.Errorf("outputs = %v; want out, error", s.Outputs)
	}
	if reg, ok := node.Default().Lookup("code"); !ok || reg.Enabled {
		t.Errorf("default registry: code registered %v; want registered and disabled", ok)
	}
}

func TestCodeConfig(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		raw   map[string]any
		field string
	}{
		{map[string]any{}, "code"},
		{map[string]any{"code": " \n "}, "code"},
		{map[string]any{"code": "output(1)", "timeout_secs": "ten"}, "timeout_secs"},
		{map[string]any{"code": "output(1)", "timeout_secs": true}, "timeout_secs"},
	} {
		_, err := nodetest.Build(CodeSpec(Options{}), tt.raw)
		nodetest.WantError(t, fmt.Sprintf("Build(%v)", tt.raw), err, node.CodeInvalidConfig, tt.field)
	}
	for secs, want := range map[any]time.Duration{nil: 10 * time.Second, 0: time.Second, 100: 60 * time.Second, "1.5": 1500 * time.Millisecond} {
		r, err := nodetest.Build(CodeSpec(Options{}), map[string]any{"code": "output(1)", "timeout_secs": secs})
		if err != nil {
			t.Fatalf("Build error: %v", err)
		}
		if got := r.(*Code).Timeout; got != want {
			t.Errorf("timeout_secs %v: Timeout = %v; want %v", secs, got, want)
		}
	}
}

func TestCodeOutput(t *testing.T) {
	t.Parallel()
	env := varsEnv{nodetest.New(map[string]any{"a": 1, "b": 2.5, "list": []any{"x"}})}
	env.Env.Vars["greeting"] = "hi"
	code := `console.log("hello", input.list[0]);
console.error("to stderr");
await new Promise((r) => setTimeout(r, 10));
output({sum: input.a + input.b, context, big: 2 ** 53 + 2, nested: {ok: true, none: null}});`
	r, err := nodetest.Build(CodeSpec(codeOpts(t, pathEnv())), map[string]any{"code": code})
	if err != nil {
		t.Fatalf("Build error: %v", err)
	}
	res, err := r.Run(bounded(t), env)
	out := output(t, res, err)
	want, _ := value.DecodeString(`{"sum": 3.5, "big": 9007199254740994, "nested": {"ok": true, "none": null},
		"context": {"workflow_id": "wf-1", "run_id": "run-1", "node_id": "n1", "vars": {"greeting": "hi"}}}`)
	if !value.Equal(out["result"], want) {
		t.Errorf("result = %v; want %v", value.Encode(out["result"]), value.Encode(want))
	}
	if out["stdout"] != "hello x\nto stderr\n" {
		t.Errorf("stdout = %q; want %q", out["stdout"], "hello x\nto stderr\n")
	}
	if d, ok := out["duration_ms"].(int); !ok || d < 10 {
		t.Errorf("duration_ms = %#v; want an int of at least 10", out["duration_ms"])
	}
	if out["truncated"] != false || out["_sandbox_partial"] != false {
		t.Errorf("truncated, _sandbox_partial = %v, %v; want false, false", out["truncated"], out["_sandbox_partial"])
	}
}

func TestCodeResults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, code string
		in         any
		want       string
	}{
		{"output wins over return", `output(1); return 2`, nil, `1`},
		{"last output wins", `output(1); output("two")`, nil, `"two"`},
		{"return without output", `return input * 2`, 21, `42`},
		{"nothing", `const x = 1`, nil, `null`},
		{"output undefined", `output(undefined)`, nil, `null`},
		{"output in a timer", `setTimeout(() => output("later"), 20)`, nil, `"later"`},
		{"dates and NaN", `output([new Date(0), NaN, Infinity])`, nil, `["1970-01-01T00:00:00.000Z", null, null]`},
		{"this and strict code", `'use strict'; output(typeof this)`, nil, `"undefined"`},
		{"require", `output(require("path").basename("/a/b.txt"))`, nil, `"b.txt"`},
		{"stdin is read", `output(require("fs").readFileSync(0, "utf8"))`, nil, `""`},
		{"large input", `output(input.length)`, strings.Repeat("x", 1<<20), `1048576`},
		{"unicode", `output(input + "€")`, "é", `"é€"`},
		{"wrapper hidden", `output([typeof payload, typeof send, typeof finish])`, nil, `["undefined", "undefined", "undefined"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := runCode(t, bounded(t), map[string]any{"code": tt.code}, tt.in, pathEnv())
			out := output(t, res, err)
			want, _ := value.DecodeString(tt.want)
			if !value.Equal(out["result"], want) {
				t.Errorf("result = %s; want %s", value.Encode(out["result"]), tt.want)
			}
		})
	}
}

func TestCodeErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, code, errCode string
		want                []string
	}{
		{"throw", `throw new Error("bad thing")`, CodeCodeError, []string{"Error: bad thing", "line 1"}},
		{"reference error line", "const a = 1;\n\nmissing()", CodeCodeError, []string{"ReferenceError: missing is not defined", "line 3"}},
		{"throw a string", `throw "plain"`, CodeCodeError, []string{"Uncaught: plain"}},
		{"syntax error", `output(1`, CodeCodeError, []string{"SyntaxError"}},
		{"rejected promise", `Promise.reject(new TypeError("nobody waits"))`, CodeCodeError, []string{"TypeError: nobody waits"}},
		{"error in a timer", `setTimeout(() => { throw new RangeError("late") }, 10)`, CodeCodeError, []string{"RangeError: late"}},
		{"error after output", `output(1); setTimeout(() => { throw new Error("after") }, 10)`, CodeCodeError, []string{"after"}},
		{"secret in message", `throw new Error("password=hunter2")`, CodeCodeError, []string{"password=****"}},
		{"unserialisable", `output(10n)`, CodeCodeError, []string{"cannot be converted to JSON", "BigInt"}},
		{"circular", `const a = {}; a.a = a; output(a)`, CodeCodeError, []string{"circular"}},
		{"process.exit", `output(1); process.exit(0)`, CodeNoResult, []string{"process.exit()"}},
		{"process.exit with code", `console.log("bye"); process.exit(3)`, CodeNoResult, []string{"code 3", "bye"}},
		{"await never settles", `await new Promise(() => {})`, CodeNoResult, []string{"still waiting"}},
		{"killed", `process.kill(process.pid, "SIGKILL")`, CodeNoResult, []string{"signal 9"}},
		{"closes the result channel", `require("fs").closeSync(3)`, CodeNoResult, []string{"process.exit()"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := runCode(t, bounded(t), map[string]any{"code": tt.code}, nil, pathEnv())
			msg := errorMessage(t, err, tt.errCode)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("message %q; want it to contain %q", msg, w)
				}
			}
			if strings.Contains(msg, "hunter2") {
				t.Errorf("message %q shows a secret", msg)
			}
		})
	}
}

func TestCodeTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, code string }{
		{"busy loop", `for (;;) {}`},
		{"timer keeps it alive", `setInterval(() => {}, 100); output(1)`},
		{"child process", `require("child_process").spawn("sleep", ["60"], {stdio: "inherit"}); output(1)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := runCode(t, bounded(t), map[string]any{"code": tt.code, "timeout_secs": 1}, nil, pathEnv())
			msg := errorMessage(t, err, CodeTimeout)
			if !strings.Contains(msg, "longer than 1s") {
				t.Errorf("message %q; want it to name the timeout", msg)
			}
			var ne *node.Error
			if errors.As(err, &ne) && ne.Retry != node.NoRetry {
				t.Errorf("Retry = %v; want NoRetry", ne.Retry)
			}
		})
	}
}

func TestCodeCancel(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(bounded(t))
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code := `const child = require("child_process").spawn("sleep", ["60"]);
require("fs").writeFileSync(input + ".tmp", String(child.pid));
require("fs").renameSync(input + ".tmp", input);`
	_, err := runCode(t, ctx, map[string]any{"code": code}, pidFile, pathEnv())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v; want context.Canceled", err)
	}
	wantGone(t, readPid(t, pidFile))
}

func TestCodeResultSize(t *testing.T) {
	t.Parallel()
	// A string of n characters is n+2 bytes of JSON.
	tests := []struct {
		name, code string
		tooLarge   bool
	}{
		{"exactly 10 MB", fmt.Sprintf(`output("x".repeat(%d))`, MaxKept-2), false},
		{"one byte over", fmt.Sprintf(`output("x".repeat(%d))`, MaxKept-1), true},
		{"far over", `output("x".repeat(64 * 1024 * 1024))`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := runCode(t, bounded(t), map[string]any{"code": tt.code}, nil, pathEnv())
			if tt.tooLarge {
				msg := errorMessage(t, err, CodeResultTooLarge)
				if !strings.Contains(msg, "10 MB") {
					t.Errorf("message %q; want it to name 10 MB", msg)
				}
				return
			}
			out := output(t, res, err)
			if s, _ := out["result"].(string); len(s) != MaxKept-2 || out["truncated"] != false {
				t.Errorf("result is %d characters, truncated %v; want %d, false", len(s), out["truncated"], MaxKept-2)
			}
		})
	}
}

func TestCodeKeepsLastPrinted(t *testing.T) {
	t.Parallel()
	// output(null) is 4 bytes of JSON; printed text gets the rest of 10 MB.
	room := MaxKept - 4
	tests := []struct {
		name, code string
		wantLen    int
		truncated  bool
	}{
		{"fits", fmt.Sprintf(`process.stdout.write("b".repeat(%d)); output(null)`, room), room, false},
		{"one byte over", fmt.Sprintf(`process.stdout.write("a" + "b".repeat(%d)); output(null)`, room), room, true},
		{"far over", fmt.Sprintf(`for (let i = 0; i < 11; i++) process.stdout.write("a".repeat(1 << 20)); process.stdout.write("b".repeat(%d)); output(null)`, room), room, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res, err := runCode(t, bounded(t), map[string]any{"code": tt.code}, nil, pathEnv())
			out := output(t, res, err)
			s := out["stdout"].(string)
			if len(s) != tt.wantLen || strings.Trim(s, "b") != "" || out["truncated"] != tt.truncated {
				t.Errorf("stdout %d bytes (only b: %v), truncated %v; want %d bytes of b, %v",
					len(s), strings.Trim(s, "b") == "", out["truncated"], tt.wantLen, tt.truncated)
			}
		})
	}
	// A larger result leaves less room.
	res, err := runCode(t, bounded(t), map[string]any{"code": fmt.Sprintf(
		`console.log("x".repeat(%d)); output("r".repeat(1000))`, MaxKept)}, nil, pathEnv())
	out := output(t, res, err)
	if n := len(out["stdout"].(string)); n != MaxKept-1002 || out["truncated"] != true {
		t.Errorf("stdout %d bytes, truncated %v; want %d, true", n, out["truncated"], MaxKept-1002)
	}
}

func TestCodeOutputFlood(t *testing.T) {
	t.Parallel()
	c := buildCode(t, `for (;;) process.stdout.write("x".repeat(10000))`)
	c.lim = limits{keep: 1000, flood: 1 << 20}
	_, err := c.Run(bounded(t), nodetest.New(nil))
	if msg := errorMessage(t, err, node.CodeOutputFlood); !strings.Contains(msg, "1 MB") {
		t.Errorf("message %q; want it to name the limit", msg)
	}
	// The real limit, written in 1 MB pieces.
	_, err = runCode(t, bounded(t), map[string]any{"code": `const s = "x".repeat(1 << 20); for (let i = 0; i <= 256; i++) process.stdout.write(s); output(1)`}, nil, pathEnv())
	if msg := errorMessage(t, err, node.CodeOutputFlood); !strings.Contains(msg, "256 MB") {
		t.Errorf("message %q; want it to name 256 MB", msg)
	}
}

func TestCodeEnvironment(t *testing.T) {
	t.Parallel()
	base := pathEnv("PLAIN=p", "SVC_TOKEN=secret", "SVC_ALLOWED=yes", "NODE_CHANNEL_FD=3")
	// NODE_CHANNEL_FD would make the runtime take fd 3 for IPC.
	code := `output([process.env.PLAIN, process.env.SVC_TOKEN ?? null, process.env.SVC_ALLOWED ?? null, process.env.SVC_NODE_BIN ?? null, typeof process.send])`
	for _, tt := range []struct {
		allow []string
		want  string
	}{
		{nil, `["p", null, null, null, "undefined"]`},
		{[]string{"SVC_ALLOWED"}, `["p", null, "yes", null, "undefined"]`},
	} {
		res, err := runCode(t, bounded(t), map[string]any{"code": code}, nil, base, tt.allow...)
		out := output(t, res, err)
		want, _ := value.DecodeString(tt.want)
		if !value.Equal(out["result"], want) {
			t.Errorf("allow %v: result = %s; want %s", tt.allow, value.Encode(out["result"]), tt.want)
		}
	}
}

func TestCodeMemoryLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, code string
		heapMB     int
		dataLimit  uint64
		want       string
	}{
		// V8's heap limit stops a script that keeps allocating objects.
		{"heap", `const a = []; for (;;) a.push({x: Math.random(), s: "s" + Math.random()})`, 64, 0, "out of memory"},
		// The data limit stops one that allocates outside the heap.
		{"data", `const a = []; for (let i = 0; i < 1024; i++) a.push(Buffer.alloc(1 << 20, 1)); output(a.length)`, 0, 512 << 20, "out of memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.dataLimit > 0 && runtime.GOOS != "linux" {
				t.Skip("the data limit is applied on Linux only")
			}
			c := buildCode(t, tt.code)
			c.heapMB, c.dataLimit = tt.heapMB, tt.dataLimit
			_, err := c.Run(bounded(t), nodetest.New(nil))
			if msg := errorMessage(t, err, CodeNoResult); !strings.Contains(msg, tt.want) {
				t.Errorf("message %q; want it to contain %q", msg, tt.want)
			}
		})
	}
}
