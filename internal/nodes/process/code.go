package process

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(CodeSpec(Options{})) }

// wrapper is the JavaScript that runs the user's code (see its comment).
//
//go:embed wrapper.js
var wrapper string

// Limits of the Code node's runtime. CPU time is limited to the timeout
// plus one second (limitCode).
const (
	// HeapMB is V8's old-space limit (--max-old-space-size): past it the
	// runtime stops with "JavaScript heap out of memory" (NO_RESULT).
	HeapMB = 1024
	// DataLimit is the runtime's RLIMIT_DATA on Linux: all the memory it
	// writes to, V8's heap included, 2 GiB.
	DataLimit = 2 << 30
)

// msgSlack is room on the result channel beyond the result limit, for the
// message around the result or an error's text.
const msgSlack = 512 << 10

// maxErrorMessage bounds the JS error text in a CODE_ERROR message.
const maxErrorMessage = 4000

// nodeUnset are variables the runtime must not inherit: a server started
// by a Node.js parent with an IPC channel (a process manager) passes them
// on, and the runtime would then take fd 3, the result channel, for IPC.
var nodeUnset = map[string]*string{"NODE_CHANNEL_FD": nil, "NODE_CHANNEL_SERIALIZATION_MODE": nil}

// errCodeTimeout is the cause of a Code node's own timeout.
var errCodeTimeout = errors.New("code timed out")

// CodeSpec is the Code (JS) node: it runs JavaScript with the Node.js
// runtime and outputs the value the script hands to output(). It is
// registered switched off; the server replaces it with a spec built from
// its options when --allow-code is set.
func CodeSpec(opts Options) *node.Spec {
	return &node.Spec{
		TypeID:      "code",
		DisplayName: "Code (JS)",
		Category:    node.CategoryAction,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Runs JavaScript with the bundled Node.js runtime. The code sees input and context and " +
			"calls output(value); await works. Text it prints is kept as stdout.",
		Fields: []node.Field{
			{Name: "code", Kind: node.KindText, Required: true,
				Description: "JavaScript, run as the body of an async function with input, context " +
					"({workflow_id, run_id, node_id, vars}), output(value) and require"},
			{Name: "timeout_secs", Kind: node.KindNumber, Default: 10.0, Min: node.Bound(1), Max: node.Bound(60),
				Description: "seconds before the script is killed (TIMEOUT, never retried)"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort, node.ErrorPort},
		Output: node.Object(map[string]any{
			"result":           node.T("", "the value given to output(), or the value the code returned when it never called output()"),
			"stdout":           node.T("string", "text the script printed (stdout and stderr); with the result at most 10 MB, the end kept"),
			"duration_ms":      node.T("integer"),
			"truncated":        node.T("boolean", "the printed text was cut"),
			"_sandbox_partial": node.T("boolean", "a sandbox runs with some limits missing (macOS); false on Linux"),
		}),
		Enabled:    false,
		EnableFlag: "--allow-code",
		New: func(c node.Config) (node.Runner, error) {
			return &Code{
				Code:    c.String("code"),
				Timeout: timeout(c.Float("timeout_secs")),
				Options: opts,
			}, nil
		},
	}
}

// Code is a configured Code (JS) node.
type Code struct {
	// Code is the body of an async function of (input, context, output,
	// require).
	Code string
	// Timeout kills the runtime's process group (TIMEOUT); zero means 10s.
	Timeout time.Duration
	// Options say which runtime runs the code and which SVC_ variables it
	// inherits.
	Options Options

	lim limits
	// heapMB and dataLimit replace HeapMB and DataLimit when not zero.
	heapMB    int
	dataLimit uint64
}

// varLister is an Env that can list the run's variables. Without it the
// script's context.vars is empty.
type varLister interface {
	Vars() map[string]any
}

// message is what the wrapper writes to fd 3.
type message struct {
	Result   json.RawMessage `json:"result"`
	TooLarge *int64          `json:"too_large"`
	NoResult *string         `json:"no_result"`
	Error    *struct {
		Name    string `json:"name"`
		Message string `json:"message"`
		Line    int    `json:"line"`
	} `json:"error"`
}

// Run runs the script and returns its result.
func (c *Code) Run(ctx context.Context, env node.Env) (node.Result, error) {
	bin, err := c.runtime()
	if err != nil {
		return node.Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return node.Result{}, fmt.Errorf("code not started: %w", err)
	}
	lim := c.lim.orDefault()
	d := c.Timeout
	if d <= 0 {
		d = 10 * time.Second
	}
	payload, err := c.payload(env, lim.keep)
	if err != nil {
		return node.Result{}, err
	}

	r := &codeRun{lim: lim, timeout: d, heapMB: HeapMB, dataLimit: DataLimit}
	if c.heapMB > 0 {
		r.heapMB = c.heapMB
	}
	if c.dataLimit > 0 {
		r.dataLimit = c.dataLimit
	}
	cmd := exec.Command(bin, fmt.Sprintf("--max-old-space-size=%d", r.heapMB), "-e", wrapper)
	cmd.Env = childEnv(c.Options.environment(), c.Options.AllowEnvVars, nodeUnset)
	cmd.Stdin = bytes.NewReader(payload)
	r.printed = newCapture("stdout", lim.keep, true, lim.flood)
	// The message is the result and a few bytes, or an error of at most
	// 64K characters; past that the script is stopped (RESULT_TOO_LARGE).
	r.msg = newCapture("the result channel", lim.keep+msgSlack, false, int64(lim.keep+msgSlack))
	sp := &spawn{cmd: cmd, stdout: r.printed, stderr: r.printed, extra: []*capture{r.msg},
		started: func(pid int) error { return limitCode(pid, d, r.dataLimit) }}

	rctx, cancel := context.WithTimeoutCause(ctx, d, errCodeTimeout)
	defer cancel()
	r.ex, err = sp.run(rctx)
	if err != nil {
		code := node.CodeInternal
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			// Missing, not executable, or not a program for this system.
			code = CodeRuntimeNotFound
		}
		return node.Result{}, &node.Error{Code: code, Err: err,
			Message: fmt.Sprintf("cannot start the Node.js runtime %s: %v", bin, err)}
	}
	if r.ex.startedErr != nil {
		env.Logger().Warn("code: resource limits not applied", "error", r.ex.startedErr.Error())
	}
	if r.ex.stopped != nil && ctx.Err() != nil && !isFlood(r.ex.stopped) {
		return node.Result{}, fmt.Errorf("code stopped: %w", ctx.Err())
	}
	res, err := r.result()
	if err == nil {
		env.Logger().Debug("code finished", "duration_ms", r.ex.elapsed.Milliseconds(), "printed_bytes", r.printed.total)
	}
	return res, err
}

// codeRun is one run of the runtime, as result reads it.
type codeRun struct {
	lim       limits
	timeout   time.Duration
	heapMB    int
	dataLimit uint64

	ex      exit
	printed *capture // stdout and stderr
	msg     *capture // fd 3, the wrapper's message
}

// runtime returns the absolute path of the runtime to run: Options.NodeBin,
// else what FindRuntime finds. A bare name is never looked up in PATH.
func (c *Code) runtime() (string, error) {
	bin := c.Options.NodeBin
	if bin == "" {
		var err error
		if bin, err = FindRuntime(c.Options.lookupEnv); err != nil {
			return "", &node.Error{Code: CodeRuntimeNotFound, Err: err, Message: err.Error()}
		}
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", &node.Error{Code: CodeRuntimeNotFound, Err: err,
			Message: fmt.Sprintf("%v: runtime path %q: %v", ErrNoRuntime, bin, err)}
	}
	return abs, nil
}

// payload is the wrapper's stdin: the code, its input and context, and the
// result limit.
func (c *Code) payload(env node.Env, maxResult int) ([]byte, error) {
	vars := map[string]any{}
	if vl, ok := env.(varLister); ok {
		if v := vl.Vars(); v != nil {
			vars = v
		}
	}
	p := map[string]any{
		"code":  c.Code,
		"input": env.Input(),
		"context": map[string]any{
			"workflow_id": env.WorkflowID(),
			"run_id":      env.RunID(),
			"node_id":     env.NodeID(),
			"vars":        vars,
		},
		"max_result": maxResult,
	}
	b, ok := value.AppendJSON(nil, p)
	if !ok {
		return nil, node.Errorf(node.CodeInternal, "the input or the variables hold a value JSON cannot write (a non-finite number)")
	}
	return b, nil
}

// result reads how the run ended and the wrapper's message, and builds the
// output or the failure.
func (r *codeRun) result() (node.Result, error) {
	tail := failureTail(r.printed, r.printed)
	stopped := r.ex.stopped
	switch {
	case stopped != nil && isFlood(stopped) && r.msg.truncated():
		return node.Result{}, node.Errorf(CodeResultTooLarge,
			"the value given to output() is over %s as JSON; the script was stopped", size(int64(r.lim.keep)))
	case stopped != nil && isFlood(stopped):
		return node.Result{}, &node.Error{Code: node.CodeOutputFlood, Err: stopped,
			Message: fmt.Sprintf("the script printed more than %s; it was stopped", size(r.lim.flood))}
	case stopped != nil && errors.Is(stopped, errCodeTimeout), cpuLimited(r.ex.state):
		return node.Result{}, &node.Error{Code: CodeTimeout, Err: errCodeTimeout,
			Message: withTail(fmt.Sprintf("the code ran longer than %s and was killed", r.timeout), tail)}
	}

	raw := r.msg.text()
	if strings.TrimSpace(raw) == "" {
		return node.Result{}, node.Errorf(CodeNoResult, "%s", r.noResult(tail))
	}
	var m message
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return node.Result{}, node.Errorf(CodeNoResult, "the runtime handed back an unreadable result: %v", err)
	}
	switch {
	case m.Error != nil:
		msg := m.Error.Name + ": " + m.Error.Message
		if len(msg) > maxErrorMessage {
			msg = string(cutBack([]byte(msg), maxErrorMessage)) + "..."
		}
		if m.Error.Line > 0 {
			msg += fmt.Sprintf(" (line %d)", m.Error.Line)
		}
		return node.Result{}, node.Errorf(CodeCodeError, "%s", maskSecrets(msg))
	case m.TooLarge != nil:
		return node.Result{}, node.Errorf(CodeResultTooLarge,
			"the value given to output() is over %s as JSON", size(int64(r.lim.keep)))
	case m.NoResult != nil:
		return node.Result{}, node.Errorf(CodeNoResult, "%s", withTail(*m.NoResult, tail))
	case m.Result == nil:
		return node.Result{}, node.Errorf(CodeNoResult, "the runtime handed back no result")
	}
	n := len(m.Result)
	if n > r.lim.keep {
		return node.Result{}, node.Errorf(CodeResultTooLarge,
			"the value given to output() is %s as JSON; the limit is %s", size(int64(n)), size(int64(r.lim.keep)))
	}
	result, err := value.Decode(m.Result)
	if err != nil {
		return node.Result{}, node.Errorf(CodeNoResult, "the runtime handed back an unreadable result: %v", err)
	}
	// Printed text gets what the result leaves of the limit.
	room := r.lim.keep - n
	return node.Result{Output: map[string]any{
		"result":           result,
		"stdout":           r.printed.textWithin(room),
		"duration_ms":      int(r.ex.elapsed.Milliseconds()),
		"truncated":        r.printed.total > int64(room),
		"_sandbox_partial": sandboxPartial,
	}}, nil
}

// noResult explains a run that ended without a message.
func (r *codeRun) noResult(tail string) string {
	sig, signaled := signalOf(r.ex.state)
	if signaled && strings.Contains(strings.ToLower(tail), "out of memory") {
		// V8 aborts after printing its last garbage collections and a
		// native stack: the tail is noise.
		return fmt.Sprintf("the script ran out of memory (limits: %d MB of JavaScript heap, %s in all) before handing back a result",
			r.heapMB, size(int64(r.dataLimit)))
	}
	what := "the script ended without handing back its result (calling process.exit() loses it; let the script end on its own)"
	if signaled {
		what = fmt.Sprintf("the runtime was killed by signal %d (%s) before handing back a result", sig, signalName(sig))
	} else if code := exitCode(r.ex.state); code != 0 {
		what = fmt.Sprintf("the runtime exited with code %d before handing back a result", code)
	}
	return withTail(what, tail)
}

var _ node.Runner = (*Code)(nil)
