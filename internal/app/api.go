package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/credential"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/nodes/database"
	"github.com/svcrun/svc/internal/nodes/process"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/secret"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
	"github.com/svcrun/svc/internal/widget"
	"github.com/svcrun/svc/internal/workflow"
)

// MinTokenLength is the shortest initial token the server accepts.
const MinTokenLength = 32

// apiConfig holds the startup options of api mode (spec/server.md
// section 1), validated.
type apiConfig struct {
	Port              int
	Bind              string
	Token             string
	AllowOrigins      []string
	AllowShell        bool
	AllowCode         bool
	AllowDatabase     bool
	AllowEnvVars      []string
	TrustedProxyCount int // -1: unset
	MaxConcurrentRuns int
	MaxQueueWait      time.Duration
	RateLimit         int
	PluginDir         string
	DataDir           string
	Keychain          bool
	FileSandboxDir    string
	DatabaseURL       string
}

// listFlag collects a repeatable flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

var envVarName = regexp.MustCompile(`^SVC_[A-Za-z0-9_]+$`)

// parseAPI reads and checks the api options. getenv reads the environment.
func parseAPI(args []string, getenv func(string) string, stderr io.Writer) (*apiConfig, error) {
	fs := flag.NewFlagSet("api", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := &apiConfig{}
	var origins listFlag
	var envVars string
	var queueWait int
	fs.IntVar(&c.Port, "port", 7700, "listen port (0 picks a free one)")
	fs.StringVar(&c.Bind, "bind", "127.0.0.1", "listen address")
	fs.StringVar(&c.Token, "token", "", "initial bearer token, at least 32 characters (or SVC_TOKEN); generated when unset")
	fs.Var(&origins, "allow-origin", "extra CORS origin (repeatable)")
	fs.BoolVar(&c.AllowShell, "allow-shell", false, "enable the Shell Command node")
	fs.BoolVar(&c.AllowCode, "allow-code", false, "enable the Code (JS) node")
	fs.BoolVar(&c.AllowDatabase, "allow-database", false, "enable the Database node")
	fs.StringVar(&envVars, "allow-env-vars", "", "comma-separated SVC_ variables Shell Command and Code nodes may inherit")
	fs.IntVar(&c.TrustedProxyCount, "trusted-proxy-count", -1, "proxy hops trusted in X-Forwarded-For (unset: none)")
	fs.IntVar(&c.MaxConcurrentRuns, "max-concurrent-runs", 10, "size of the global run semaphore")
	fs.IntVar(&queueWait, "max-queue-wait-secs", 30, "how long a run request waits for a slot")
	fs.IntVar(&c.RateLimit, "rate-limit", httpapi.DefaultRateLimit, "requests allowed per client IP per 60 seconds (0: no limit)")
	fs.StringVar(&c.PluginDir, "plugin-dir", "", "directory of .wasm plugin files")
	fs.StringVar(&c.DataDir, "data-dir", "", "data directory (default $XDG_DATA_HOME/svc or ~/.local/share/svc)")
	fs.BoolVar(&c.Keychain, "keychain", false, "keep the credential key in the OS keyring")
	fs.StringVar(&c.FileSandboxDir, "file-sandbox-dir", "", "confine File and Save to Folder nodes to this directory")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "postgres://... to keep the data in PostgreSQL (not built yet)")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.Port < 0 || c.Port > 65535 {
		bad("--port: must be 0 to 65535")
	}
	if net.ParseIP(c.Bind) == nil && c.Bind != "localhost" {
		bad("--bind: must be an IP address")
	}
	if c.Token == "" {
		c.Token = strings.TrimSpace(getenv("SVC_TOKEN"))
	}
	if c.Token != "" && len(c.Token) < MinTokenLength {
		bad("--token (or SVC_TOKEN): must be at least %d characters", MinTokenLength)
	}
	for _, o := range origins {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.User != nil {
			bad("--allow-origin: %q is not an origin like https://example.org", o)
			continue
		}
		c.AllowOrigins = append(c.AllowOrigins, u.Scheme+"://"+strings.ToLower(u.Host))
	}
	for v := range strings.SplitSeq(envVars, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !envVarName.MatchString(v) {
			bad("--allow-env-vars: %q is not a variable name beginning SVC_", v)
			continue
		}
		c.AllowEnvVars = append(c.AllowEnvVars, v)
	}
	if c.TrustedProxyCount < -1 || c.TrustedProxyCount > 64 {
		bad("--trusted-proxy-count: must be 0 to 64")
	}
	if c.MaxConcurrentRuns < 1 || c.MaxConcurrentRuns > 100_000 {
		bad("--max-concurrent-runs: must be 1 to 100000")
	}
	if c.RateLimit < 0 {
		bad("--rate-limit: must be 0 (no limit) or more")
	}
	if queueWait < 0 || queueWait > 86400 {
		bad("--max-queue-wait-secs: must be 0 to 86400")
	}
	c.MaxQueueWait = time.Duration(queueWait) * time.Second
	for _, d := range []struct{ flag, path string }{{"--plugin-dir", c.PluginDir}, {"--file-sandbox-dir", c.FileSandboxDir}} {
		if d.path == "" {
			continue
		}
		if st, err := os.Stat(d.path); err != nil || !st.IsDir() {
			bad("%s: %s is not a directory", d.flag, d.path)
		}
	}
	if c.DatabaseURL != "" {
		u, err := url.Parse(c.DatabaseURL)
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			bad("--database-url: must be a postgres:// URL")
		} else {
			bad("--database-url: PostgreSQL storage is not built yet; leave it unset for the embedded database")
		}
	}
	if c.DataDir == "" {
		c.DataDir = defaultDataDir(getenv)
		if c.DataDir == "" {
			bad("--data-dir: no home directory to put the data in; set --data-dir")
		}
	}
	return c, errors.Join(errs...)
}

// defaultDataDir is $XDG_DATA_HOME/svc, else ~/.local/share/svc.
func defaultDataDir(getenv func(string) string) string {
	if x := getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "svc")
	}
	home := getenv("HOME")
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		home = h
	}
	return filepath.Join(home, ".local", "share", "svc")
}

// dangerous maps the dangerous node types to their flags.
func (c *apiConfig) dangerous() map[string]bool {
	return map[string]bool{"shell_command": c.AllowShell, "code": c.AllowCode, "database": c.AllowDatabase}
}

// warnings are printed at start-up (rule 4 of spec/server.md section 1).
func (c *apiConfig) warnings() []string {
	var w []string
	if c.FileSandboxDir == "" {
		w = append(w, "--file-sandbox-dir is not set: File and Save to Folder nodes can reach any path this server can")
	}
	if c.AllowDatabase {
		w = append(w, database.RebindingWarning)
	}
	return w
}

// apiCmd runs the REST server until ctx ends.
func apiCmd(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	c, err := parseAPI(args, getenv, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	for _, w := range c.warnings() {
		log.Warn(w)
	}
	if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(c.DataDir, sqlite.FileName), sqlite.Options{Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	if n, err := st.RunFailUnfinished(ctx, "the server stopped before the run finished"); err != nil {
		return err
	} else if n > 0 {
		log.Warn("runs left unfinished by the last stop are marked failed", "runs", n)
	}
	creds, err := openCredentials(ctx, st, c, log)
	if err != nil {
		return err
	}
	if err := initialToken(ctx, st, c, stderr); err != nil {
		return err
	}
	reg, err := registry(c)
	if err != nil {
		return err
	}
	hub := events.New(events.Options{})
	defer hub.Close()
	eng := engine.New(engine.Options{
		Registry: reg, Logger: log, Variables: st, Workflows: storeWorkflows{st}, Credentials: creds, Events: hub,
	})
	rateLimit := c.RateLimit
	if rateLimit == 0 {
		rateLimit = -1 // off
	}
	widgetKey, err := widget.LoadKey(filepath.Join(c.DataDir, widget.KeyFile))
	if err != nil {
		return fmt.Errorf("widget token key: %w", err)
	}
	signer, err := widget.NewSigner(widgetKey)
	if err != nil {
		return err
	}
	sched := scheduler.New(scheduler.Options{Store: st, Engine: eng, Events: hub, Logger: log, Secrets: creds.Values, Tokens: signer})
	srv := httpapi.New(httpapi.Options{
		Store: st, Engine: eng, Logger: log, Credentials: creds, Events: hub, Scheduler: sched, WidgetTokens: signer,
		MaxConcurrentRuns: c.MaxConcurrentRuns, MaxQueueWait: c.MaxQueueWait,
		RateLimit: rateLimit, TrustedProxyCount: c.TrustedProxyCount, AllowOrigins: c.AllowOrigins,
		NodeBundled: nodeBundledCheck(getenv),
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(c.Bind, strconv.Itoa(c.Port)))
	if err != nil {
		return err
	}
	log.Info("svc-server listening", "url", "http://"+ln.Addr().String(), "data_dir", c.DataDir, "engine", engine.Version)
	resumed := make(chan struct{})
	go func() {
		defer close(resumed)
		if err := sched.Resume(ctx); err != nil && ctx.Err() == nil {
			log.Error("cannot resume the stored jobs", "err", err)
		}
	}()
	err = srv.Serve(ctx, ln)
	<-resumed
	closeCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if cerr := sched.Close(closeCtx); cerr != nil {
		log.Error("cannot record the jobs paused at shutdown", "err", cerr)
	}
	return err
}

// registry is the node catalog of this server: the built-ins, with Shell
// Command and Code installed with --allow-env-vars and the dangerous types
// switched on by their flags.
func registry(c *apiConfig) (*node.Registry, error) {
	reg := node.Default()
	opts := process.Options{AllowEnvVars: c.AllowEnvVars}
	for _, s := range []*node.Spec{process.ShellSpec(opts), process.CodeSpec(opts)} {
		if err := reg.Replace(s); err != nil {
			return nil, err
		}
	}
	for id, on := range c.dangerous() {
		reg.SetEnabled(id, on)
	}
	return reg, nil
}

// openCredentials loads the credential key (rule 2 of spec/server.md
// section 1: with credentials stored and no key, start-up fails) and the
// credential store.
func openCredentials(ctx context.Context, st store.Store, c *apiConfig, log *slog.Logger) (*credential.Service, error) {
	n, err := st.CredentialCount(ctx)
	if err != nil {
		return nil, err
	}
	key, warnings, err := secret.LoadKey(secret.KeyOptions{DataDir: c.DataDir, Keychain: c.Keychain, HasCredentials: n > 0})
	if err != nil {
		return nil, fmt.Errorf("credential key: %w", err)
	}
	for _, w := range warnings {
		log.Warn(w)
	}
	box, err := secret.NewBox(key)
	if err != nil {
		return nil, fmt.Errorf("credential key: %w", err)
	}
	return credential.Open(ctx, st, box)
}

// initialToken stores the --token/SVC_TOKEN token the first time it is seen
// (a token revoked since stays revoked), or generates one and prints it.
func initialToken(ctx context.Context, st store.Store, c *apiConfig, stderr io.Writer) error {
	id, tok := httpapi.NewToken()
	label := "generated at start-up"
	if c.Token != "" {
		tok, label = c.Token, "initial token"
	} else {
		fmt.Fprintf(stderr, "\nGenerated an access token with scopes read, write, admin. It is shown only this once:\n\n    %s\n\n", tok)
	}
	_, err := st.TokenInsert(ctx, &store.Token{
		ID: id, Label: label, Scopes: []string{httpapi.ScopeRead, httpapi.ScopeWrite, httpapi.ScopeAdmin},
		SecretHash: httpapi.HashToken(tok), CreatedAt: time.Now(),
	})
	return err
}

// storeWorkflows lets Execute Workflow load stored workflows.
type storeWorkflows struct{ st store.Store }

func (s storeWorkflows) LoadWorkflow(ctx context.Context, id string) (*workflow.Workflow, error) {
	rec, err := s.st.WorkflowGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, engine.ErrWorkflowNotFound
	}
	if err != nil {
		return nil, err
	}
	return workflow.Parse(rec.Doc)
}
