package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/svcrun/svc/internal/client"
)

// DefaultServer is the server the control commands talk to.
const DefaultServer = "http://127.0.0.1:7700"

// controlFlags are the flags every control command takes.
type controlFlags struct {
	server, token string
}

func (c *controlFlags) register(fs *flag.FlagSet, getenv func(string) string) {
	server := getenv("SVC_SERVER")
	if server == "" {
		server = DefaultServer
	}
	fs.StringVar(&c.server, "server", server, "base URL of the server (or SVC_SERVER)")
	fs.StringVar(&c.token, "token", getenv("SVC_TOKEN"), "bearer token (or SVC_TOKEN)")
}

func (c *controlFlags) client() (*client.Client, error) {
	if c.token == "" {
		return nil, errors.New("--token (or SVC_TOKEN) is required")
	}
	return client.New(c.server, c.token, client.Options{})
}

// parseInterleaved parses flags that may come before or after the
// positional arguments ("revoke ID --token T") and returns the positional
// ones.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

const tokensUsage = `usage:
  svc-server tokens create --label L [--scopes read,write] [--expires-in SECS] [--workflow-ids a,b] --token T
  svc-server tokens list --token T
  svc-server tokens revoke TOKEN_ID --token T
`

// tokensCmd manages tokens through the REST API.
func tokensCmd(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, tokensUsage)
		return exitError(2)
	}
	sub, args := args[0], args[1:]
	fs := flag.NewFlagSet("tokens "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cf controlFlags
	cf.register(fs, getenv)
	var label, scopes, workflowIDs string
	var expiresIn uint64
	if sub == "create" {
		fs.StringVar(&label, "label", "", "label of the token (required)")
		fs.StringVar(&scopes, "scopes", "", "comma-separated scopes: read, write, admin (default read,write)")
		fs.Uint64Var(&expiresIn, "expires-in", 0, "seconds until the token expires (default: never)")
		fs.StringVar(&workflowIDs, "workflow-ids", "", "comma-separated workflow ids the token is confined to")
	}
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	wantArgs := map[string]int{"create": 0, "list": 0, "revoke": 1}
	n, known := wantArgs[sub]
	if !known {
		fmt.Fprintf(stderr, "unknown tokens command %q\n%s", sub, tokensUsage)
		return exitError(2)
	}
	if len(pos) != n {
		fmt.Fprint(stderr, tokensUsage)
		return exitError(2)
	}
	c, err := cf.client()
	if err != nil {
		return err
	}
	switch sub {
	case "create":
		t, err := c.CreateToken(ctx, client.TokenRequest{Label: label, Scopes: splitList(scopes),
			ExpiresInSecs: expiresIn, WorkflowIDs: splitList(workflowIDs)})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", t.Secret)
		fmt.Fprintf(stderr, "token_id %s, scopes %s. %s\n", t.ID, strings.Join(t.Scopes, ","), t.Note)
	case "list":
		ts, err := c.ListTokens(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOKEN_ID\tLABEL\tSCOPES\tCREATED\tEXPIRES\tREVOKED\tWORKFLOWS")
		for _, t := range ts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Label, strings.Join(t.Scopes, ","),
				when(t.CreatedAt), when(t.ExpiresAt), when(t.RevokedAt), orAll(t.WorkflowIDs))
		}
		return tw.Flush()
	case "revoke":
		if err := c.RevokeToken(ctx, pos[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", pos[0])
	}
	return nil
}

func splitList(s string) []string {
	var out []string
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func when(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orAll(ids []string) string {
	if len(ids) == 0 {
		return "all"
	}
	return strings.Join(ids, ",")
}
