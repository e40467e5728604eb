package process

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(ShellSpec(Options{})) }

// errShellTimeout is the cause of a Shell Command's own timeout.
var errShellTimeout = errors.New("shell command timed out")

// ShellSpec is the Shell Command node: it runs a command line with /bin/sh
// and outputs what it printed. It is registered switched off; the server
// replaces it with a spec built from its options when --allow-shell is set.
func ShellSpec(opts Options) *node.Spec {
	return &node.Spec{
		TypeID:      "shell_command",
		DisplayName: "Shell Command",
		Category:    node.CategoryAction,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Runs a shell command on the server and outputs its stdout, stderr and exit code. " +
			"A non-zero exit fails the node with COMMAND_FAILED.",
		Fields: []node.Field{
			{Name: "command", Kind: node.KindText, Required: true,
				Description: "command line, run with /bin/sh -c"},
			{Name: "cwd", Kind: node.KindText,
				Description: "working directory; blank is the server's"},
			{Name: "env", Kind: node.KindObject,
				Description: "variables to set (text, number or boolean; null removes an inherited one); " +
					"the server's environment is inherited except variables beginning SVC_ not allowed by --allow-env-vars"},
			{Name: "timeout_secs", Kind: node.KindNumber, Default: 30.0, Min: node.Bound(1), Max: node.Bound(86400),
				Description: "seconds before the command and its children are killed (TIMEOUT, never retried)"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output: node.Object(map[string]any{
			"stdout":    node.T("string", "the first 10 MB of standard output"),
			"stderr":    node.T("string", "the first 10 MB of standard error"),
			"exit_code": node.T("integer", "always 0: a non-zero exit fails the node"),
			"success":   node.T("boolean", "always true: a non-zero exit fails the node"),
			"truncated": node.T("boolean", "a stream wrote more than 10 MB"),
		}),
		Enabled:    false,
		EnableFlag: "--allow-shell",
		New: func(c node.Config) (node.Runner, error) {
			env, err := shellEnv(c.Object("env"))
			if err != nil {
				return nil, err
			}
			command := c.String("command")
			if strings.ContainsRune(command, 0) {
				return nil, node.ConfigError("command", "holds a NUL character")
			}
			cwd := c.String("cwd")
			if strings.ContainsRune(cwd, 0) {
				return nil, node.ConfigError("cwd", "holds a NUL character")
			}
			return &Shell{
				Command: command,
				Cwd:     strings.TrimSpace(cwd),
				Env:     env,
				Timeout: timeout(c.Float("timeout_secs")),
				Options: opts,
			}, nil
		},
	}
}

// shellEnv checks the env field: names without = or NUL, values that are
// text, numbers or booleans (null removes the variable).
func shellEnv(m map[string]any) (map[string]*string, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return nil, node.ConfigError("env", "%q is not a variable name", k)
		}
		switch v.(type) {
		case nil:
			out[k] = nil
			continue
		case map[string]any, []any:
			return nil, node.ConfigError("env", "%s must be text, a number or a boolean, not %s", k, value.TypeName(v))
		}
		s := value.Text(v)
		if strings.ContainsRune(s, 0) {
			return nil, node.ConfigError("env", "%s holds a NUL character", k)
		}
		out[k] = &s
	}
	return out, nil
}

// Shell is a configured Shell Command node.
type Shell struct {
	// Command is run with /bin/sh -c.
	Command string
	// Cwd is the working directory; empty is the server's.
	Cwd string
	// Env sets variables over the inherited environment; a nil value
	// removes one.
	Env map[string]*string
	// Timeout kills the command's process group (TIMEOUT); zero means 30s.
	Timeout time.Duration
	// Options say which SVC_ variables are inherited.
	Options Options

	lim limits
}

// Run runs the command and waits for it and for every process that holds
// its output open.
func (s *Shell) Run(ctx context.Context, env node.Env) (node.Result, error) {
	if s.Cwd != "" {
		if st, err := os.Stat(s.Cwd); err != nil || !st.IsDir() {
			return node.Result{}, node.ConfigError("cwd", "%q is not a directory", s.Cwd)
		}
	}
	if err := ctx.Err(); err != nil {
		return node.Result{}, fmt.Errorf("shell command not started: %w", err)
	}
	lim := s.lim.orDefault()
	d := s.Timeout
	if d <= 0 {
		d = 30 * time.Second
	}
	cmd := exec.Command(shellArgs[0], append(slices.Clone(shellArgs[1:]), s.Command)...)
	cmd.Dir = s.Cwd
	cmd.Env = childEnv(s.Options.environment(), s.Options.AllowEnvVars, s.Env)
	stdout := newCapture("stdout", lim.keep, false, lim.flood)
	stderr := newCapture("stderr", lim.keep, false, lim.flood)
	sp := &spawn{cmd: cmd, stdout: stdout, stderr: stderr}

	rctx, cancel := context.WithTimeoutCause(ctx, d, errShellTimeout)
	defer cancel()
	ex, err := sp.run(rctx)
	if err != nil {
		return node.Result{}, node.Errorf(CodeCommandFailed, "cannot start %s: %w", shellArgs[0], err)
	}
	tail := failureTail(stdout, stderr)
	switch {
	case ex.stopped != nil && isFlood(ex.stopped):
		return node.Result{}, &node.Error{Code: node.CodeOutputFlood, Err: ex.stopped,
			Message: withTail(fmt.Sprintf("%v; the command was stopped", ex.stopped), tail)}
	case ex.stopped != nil && errors.Is(ex.stopped, errShellTimeout):
		return node.Result{}, &node.Error{Code: CodeTimeout, Err: ex.stopped,
			Message: withTail(fmt.Sprintf("the command ran longer than %s and was killed with its child processes", d), tail)}
	case ex.stopped != nil:
		return node.Result{}, fmt.Errorf("shell command stopped: %w", ctx.Err())
	}
	env.Logger().Debug("shell command finished",
		"exit_code", exitCode(ex.state), "duration_ms", ex.elapsed.Milliseconds(),
		"stdout_bytes", stdout.total, "stderr_bytes", stderr.total)
	if code := exitCode(ex.state); code != 0 {
		what := fmt.Sprintf("the command exited with code %d", code)
		if sig, ok := signalOf(ex.state); ok {
			what = fmt.Sprintf("the command was killed by signal %d (%s)", sig, signalName(sig))
		}
		return node.Result{}, node.Errorf(CodeCommandFailed, "%s", withTail(what, tail))
	}
	return node.Result{Output: map[string]any{
		"stdout":    stdout.text(),
		"stderr":    stderr.text(),
		"exit_code": 0,
		"success":   true,
		"truncated": stdout.truncated() || stderr.truncated(),
	}}, nil
}

var _ node.Runner = (*Shell)(nil)
