// Package process holds the nodes that start a program on the server: Shell
// Command (shell_command), which runs a command with /bin/sh, and Code
// (code), which runs JavaScript with the bundled Node.js runtime.
//
// Both are dangerous node types (rule 6 of spec/nodes.md): they are
// registered switched off, and the server switches them on with
// --allow-shell and --allow-code, installing specs built with its Options.
//
// Both run the program in its own process group and kill the whole group
// when the node times out or the run is stopped, read its output through
// pipes with a cap on what is kept and a flood limit, and hide the server's
// SVC_ environment variables from it unless Options.AllowEnvVars lets one
// through.
package process

import (
	"os"
	"slices"
	"strings"
	"time"
)

// Error codes of the process nodes. OUTPUT_FLOOD is node.CodeOutputFlood.
const (
	// CodeCommandFailed: the shell command exited with a non-zero status,
	// was killed by a signal, or could not be started. The message ends
	// with the end of stderr (or stdout), secrets masked.
	CodeCommandFailed = "COMMAND_FAILED"
	// CodeTimeout: the program ran past timeout_secs (or used up its CPU
	// time limit) and was killed with its process group. Never retried.
	CodeTimeout = "TIMEOUT"
	// CodeCodeError: the JavaScript threw (or failed to compile, or
	// rejected a promise nobody handled). The message is the JS error.
	CodeCodeError = "CODE_ERROR"
	// CodeNoResult: the script ended without handing back a result: it
	// called process.exit(), crashed, or was killed from outside.
	CodeNoResult = "NO_RESULT"
	// CodeResultTooLarge: the value given to output() is over 10 MB as JSON.
	CodeResultTooLarge = "RESULT_TOO_LARGE"
	// CodeRuntimeNotFound: no Node.js runtime at node-bundled beside the
	// server's executable or at SVC_NODE_BIN.
	CodeRuntimeNotFound = "RUNTIME_NOT_FOUND"
)

// Options are the server's settings for the process nodes. The zero value
// lets no SVC_ variable through and looks the runtime up on every run.
type Options struct {
	// AllowEnvVars are the variables beginning SVC_ that the programs
	// inherit (--allow-env-vars); every other SVC_ variable is hidden.
	AllowEnvVars []string
	// NodeBin is the Node.js runtime the Code node runs, as FindRuntime
	// resolved it. Empty means FindRuntime is called on every run.
	NodeBin string

	// environ and getenv stand in for os.Environ and os.Getenv in tests
	// that must not change the process environment; nil means the real one.
	environ func() []string
	getenv  func(string) string
}

func (o Options) environment() []string {
	if o.environ != nil {
		return o.environ()
	}
	return os.Environ()
}

func (o Options) lookupEnv(key string) string {
	if o.getenv != nil {
		return o.getenv(key)
	}
	return os.Getenv(key)
}

// childEnv is the environment a program gets: base without the variables
// beginning SVC_ that allow does not list, then set (a nil value removes
// the variable). The result has one entry per name, in base order with new
// names after, sorted.
func childEnv(base, allow []string, set map[string]*string) []string {
	out := make([]string, 0, len(base)+len(set))
	seen := make(map[string]bool, len(base))
	for _, kv := range base {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || seen[k] {
			continue
		}
		if strings.HasPrefix(k, "SVC_") && !slices.Contains(allow, k) {
			continue
		}
		if v, over := set[k]; over {
			seen[k] = true
			if v != nil {
				out = append(out, k+"="+*v)
			}
			continue
		}
		seen[k] = true
		out = append(out, kv)
	}
	added := make([]string, 0, len(set))
	for k, v := range set {
		if !seen[k] && v != nil {
			added = append(added, k+"="+*v)
		}
	}
	slices.Sort(added)
	return append(out, added...)
}

// limits are the output caps of a run (spec/nodes.md): what is kept of
// each stream, and the volume on one stream that stops the program. The
// zero value means defaultLimits; tests lower them per node.
type limits struct {
	keep  int   // bytes kept of a stream (and shared by a Code result)
	flood int64 // bytes on one stream that stop the program: OUTPUT_FLOOD
}

// Output limits of spec/nodes.md.
const (
	// MaxKept is what is kept of a stream: 10 MB.
	MaxKept = 10 << 20
	// MaxFlood is the output on one stream that stops the program: 256 MB.
	MaxFlood = 256 << 20
)

var defaultLimits = limits{keep: MaxKept, flood: MaxFlood}

func (l limits) orDefault() limits {
	if l.keep <= 0 {
		l.keep = defaultLimits.keep
	}
	if l.flood <= 0 {
		l.flood = defaultLimits.flood
	}
	return l
}

// timeout converts a decoded timeout_secs to a duration.
func timeout(secs float64) time.Duration {
	return time.Duration(secs * float64(time.Second))
}
