// Package app is the composition root of svc-server: it parses the command
// line and wires the engine, the node registry and (later) the store and
// the HTTP server together.
package app

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin" // the built-in node types
	"github.com/svcrun/svc/internal/value"
	"github.com/svcrun/svc/internal/workflow"
)

const usage = `usage: svc-server <command> [flags]

commands:
  api                  run the REST server (the default; api -h lists its options)
  run FILE             run a workflow document once and print the run result
  validate FILE        print the validation report of a workflow document
  nodes                print the node catalog
  list                 list the workflows of a running server with their jobs
  start|stop|restart WORKFLOW   start or stop a workflow's background job (by id or name, or part of one)
  tokens create|list|revoke   manage access tokens of a running server (tokens -h)
  version              print the engine version
`

// Main runs svc-server with its arguments and returns the exit code.
func Main(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cmd := "api"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "api":
		err = apiCmd(ctx, args, os.Getenv, stderr)
	case "run":
		err = runCmd(ctx, args, stdin, stdout)
	case "validate":
		err = validateCmd(args, stdin, stdout)
	case "nodes":
		err = nodesCmd(stdout)
	case "tokens":
		err = tokensCmd(ctx, args, os.Getenv, stdout, stderr)
	case "list":
		err = listCmd(ctx, args, os.Getenv, stdout, stderr)
	case "start", "stop", "restart":
		err = jobCmd(ctx, cmd, args, os.Getenv, stdout, stderr)
	case "version":
		_, err = fmt.Fprintln(stdout, engine.Version)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "svc-server: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	var exit exitError
	switch {
	case errors.As(err, &exit):
		return int(exit)
	case errors.Is(err, flag.ErrHelp):
		return 2
	case err != nil:
		fmt.Fprintf(stderr, "svc-server %s: %v\n", cmd, err)
		return 2
	}
	return 0
}

// exitError ends a command with a status code and no further message.
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// readDoc reads a workflow document from a file, or stdin for "-".
func readDoc(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

func runCmd(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	vars := fs.String("vars", "", "initial variables: a JSON object")
	payload := fs.String("payload", "", "payload the trigger emits: JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("run needs one workflow file (or - for stdin)")
	}
	data, err := readDoc(fs.Arg(0), stdin)
	if err != nil {
		return err
	}
	w, err := workflow.Parse(data)
	if err != nil {
		return fmt.Errorf("the workflow does not parse: %w", err)
	}
	req := engine.Request{Workflow: w}
	if *vars != "" {
		v, err := value.DecodeString(*vars)
		m, ok := v.(map[string]any)
		if err != nil || !ok {
			return errors.New("--vars must be a JSON object")
		}
		req.Variables = m
	}
	if *payload != "" {
		if req.Payload, err = value.DecodeString(*payload); err != nil {
			return fmt.Errorf("--payload is not JSON: %w", err)
		}
		req.HasPayload = true
	}
	res := engine.New(engine.Options{Registry: node.Default()}).Run(ctx, req)
	if err := writeJSON(stdout, res); err != nil {
		return err
	}
	if !res.Success {
		return exitError(1)
	}
	return nil
}

func validateCmd(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("validate needs one workflow file (or - for stdin)")
	}
	data, err := readDoc(args[0], stdin)
	if err != nil {
		return err
	}
	r := workflow.Validate(data, node.Default())
	if err := writeJSON(stdout, r); err != nil {
		return err
	}
	if !r.Valid {
		return exitError(1)
	}
	return nil
}

func nodesCmd(stdout io.Writer) error {
	specs := node.Default().Specs()
	out := struct {
		EngineVersion string            `json:"engine_version"`
		Nodes         []node.Descriptor `json:"nodes"`
	}{EngineVersion: engine.Version, Nodes: make([]node.Descriptor, 0, len(specs))}
	for _, s := range specs {
		out.Nodes = append(out.Nodes, s.Descriptor())
	}
	return writeJSON(stdout, out)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
