package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/svcrun/svc/internal/client"
)

const controlUsage = `usage:
  svc-server list --token T
  svc-server start WORKFLOW [--always-on=true|false] [--port N] --token T
  svc-server stop WORKFLOW --token T
  svc-server restart WORKFLOW --token T

WORKFLOW is a workflow id or name, or part of one (case does not matter).
An exact id or name wins; otherwise the one workflow whose id or name
contains it. When several do, the command fails and lists them.
`

// listCmd prints every workflow the token may see with its job.
func listCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf controlFlags
	cf.register(fs, getenv)
	_, c, wfs, err := controlSetup(ctx, fs, &cf, args, 0, stderr)
	if err != nil {
		return err
	}
	rows, err := client.All(func(limit, offset int) (*client.JobPage, error) { return c.ListJobs(ctx, limit, offset) })
	if err != nil {
		return err
	}
	jobs := make(map[string]client.Job, len(rows))
	for _, j := range rows {
		jobs[j.WorkflowID] = j
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tJOB\tALWAYS_ON\tRUNS\tLAST_RUN\tNEXT_RUN")
	for _, w := range wfs {
		j, ok := jobs[w.ID]
		if !ok {
			fmt.Fprintf(tw, "%s\t%s\t-\t-\t-\t-\t-\n", w.ID, w.Name)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%t\t%d\t%s\t%s\n", w.ID, w.Name, j.Status, j.AlwaysOn, j.RunCount, when(j.LastRunAt), when(j.NextRunAt))
	}
	return tw.Flush()
}

// jobCmd is start, stop or restart: it resolves the workflow with a read
// call, then starts or stops its job with a write call.
func jobCmd(ctx context.Context, verb string, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(verb, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf controlFlags
	cf.register(fs, getenv)
	var opts client.StartOptions
	if verb == "start" {
		fs.Func("always-on", "keep the job running across restarts (true or false; default: the stored setting)", func(s string) error {
			b, err := strconv.ParseBool(s)
			opts.AlwaysOn = &b
			return err
		})
		fs.Func("port", "listen on this port instead of the Webhook trigger's", func(s string) error {
			n, err := strconv.Atoi(s)
			opts.PortOverride = &n
			return err
		})
	}
	pos, c, wfs, err := controlSetup(ctx, fs, &cf, args, 1, stderr)
	if err != nil {
		return err
	}
	w, err := matchWorkflow(wfs, pos[0])
	var amb *ambiguousError
	if errors.As(err, &amb) {
		fmt.Fprintf(stderr, "%q matches %d workflows:\n", pos[0], len(amb.candidates))
		tw := tabwriter.NewWriter(stderr, 0, 4, 2, ' ', 0)
		for _, c := range amb.candidates {
			fmt.Fprintf(tw, "  %s\t%s\n", c.ID, c.Name)
		}
		tw.Flush()
		return exitError(1)
	}
	if err != nil {
		return err
	}
	if verb == "stop" || verb == "restart" {
		if err := c.StopJob(ctx, w.ID); err != nil {
			return err
		}
	}
	if verb == "start" || verb == "restart" {
		if err := c.StartJob(ctx, w.ID, opts); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s %s (%s)\n", map[string]string{"start": "started", "stop": "stopped", "restart": "restarted"}[verb], w.ID, w.Name)
	return nil
}

// controlSetup parses a control command's flags and its want positional
// arguments, connects, and reads every workflow the token may see (the
// read call of the command).
func controlSetup(ctx context.Context, fs *flag.FlagSet, cf *controlFlags, args []string, want int, stderr io.Writer) (
	pos []string, c *client.Client, wfs []client.WorkflowSummary, err error) {
	if pos, err = parseInterleaved(fs, args); err != nil {
		return nil, nil, nil, err
	}
	if len(pos) != want {
		fmt.Fprint(stderr, controlUsage)
		return nil, nil, nil, exitError(2)
	}
	if c, err = cf.client(); err != nil {
		return nil, nil, nil, err
	}
	wfs, err = client.All(func(limit, offset int) (*client.WorkflowPage, error) { return c.ListWorkflows(ctx, limit, offset) })
	return pos, c, wfs, err
}

type ambiguousError struct{ candidates []client.WorkflowSummary }

func (e *ambiguousError) Error() string {
	return fmt.Sprintf("%d workflows match", len(e.candidates))
}

// matchWorkflow finds the workflow q names: an exact id, else an exact
// name, else the one whose id or name contains q (all ignoring case).
// Several matches at the first level that has any are an *ambiguousError.
func matchWorkflow(wfs []client.WorkflowSummary, q string) (client.WorkflowSummary, error) {
	if i := slices.IndexFunc(wfs, func(w client.WorkflowSummary) bool { return w.ID == q }); i >= 0 {
		return wfs[i], nil
	}
	lq := strings.ToLower(q)
	for _, match := range []func(client.WorkflowSummary) bool{
		func(w client.WorkflowSummary) bool { return strings.EqualFold(w.ID, q) || strings.EqualFold(w.Name, q) },
		func(w client.WorkflowSummary) bool {
			return strings.Contains(strings.ToLower(w.ID), lq) || strings.Contains(strings.ToLower(w.Name), lq)
		},
	} {
		var found []client.WorkflowSummary
		for _, w := range wfs {
			if match(w) {
				found = append(found, w)
			}
		}
		switch len(found) {
		case 0:
			continue
		case 1:
			return found[0], nil
		default:
			return client.WorkflowSummary{}, &ambiguousError{found}
		}
	}
	return client.WorkflowSummary{}, fmt.Errorf("no workflow id or name contains %q", q)
}
