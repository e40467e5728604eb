package mcpbridge

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svcrun/svc/internal/engine"
)

// Program describes one build of the bridge.
type Program struct {
	// Name is the program's name: svc-mcp or svc-mcp-offline.
	Name string
	// Offline is a build that is always offline (svc-mcp-offline): it has
	// no --url and ignores SVC_URL and SVC_TOKEN.
	Offline bool
	// OnlineOnly is a build without offline mode: it refuses to start
	// without a URL.
	OnlineOnly bool
}

// Exit codes of Main.
const (
	ExitOK    = 0
	ExitError = 1 // the session ended with an error
	ExitUsage = 2 // a start-up error: bad option, URL or token
)

const usageText = `usage: %[1]s [flags]

%[1]s is the Model Context Protocol tool bridge of svc. An MCP client starts it
as a child process and speaks MCP over its standard input and output; logs go
to standard error.

Mode: online when SVC_URL (or --url) is set, offline otherwise.%[2]s
Online mode acts with the bearer token in SVC_TOKEN (never a flag).

Flags:
  --url URL                server base URL, http or https (or SVC_URL)%[3]s
  --allow-write            enable the tools that change the server: save_workflow
                           (online), delete_workflow, start_schedule, stop_schedule
  --timeout-secs N         time allowed for each server call except run_workflow,
                           1 to 3600 (default 30)
  --max-output-bytes N     run output returned at most, 1024 to 4194304
                           (default 32768)
  --out-dir DIR            folder offline save_workflow writes to (or SVC_OUT_DIR;
                           default ~/svc-workflows)
  --version                print the version and exit
  --help                   print this help and exit
`

// config is a checked command line.
type config struct {
	opts    Options
	version bool
	help    bool
	warns   []string
}

// Main runs the bridge with its arguments and environment, serving MCP on
// stdin and stdout until the client disconnects or ctx ends. It returns
// the exit code: a start-up error is ExitUsage, with the message on stderr
// and nothing on stdout.
func Main(ctx context.Context, prog Program, argv []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(prog, argv, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\nRun %s --help for the options.\n", prog.Name, err, prog.Name)
		return ExitUsage
	}
	switch {
	case cfg.help:
		fmt.Fprint(stdout, usage(prog))
		return ExitOK
	case cfg.version:
		fmt.Fprintf(stdout, "%s %s\n", prog.Name, engine.Version)
		return ExitOK
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("component", prog.Name)
	cfg.opts.Logger = log
	for _, w := range cfg.warns {
		log.Warn(w)
	}
	b, err := New(cfg.opts)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", prog.Name, err)
		return ExitUsage
	}
	if b.online() {
		log.Info("serving MCP on stdio", "mode", "online", "url", b.url, "allow_write", cfg.opts.AllowWrite,
			"timeout_secs", int(cfg.opts.Timeout/time.Second), "max_output_bytes", cfg.opts.MaxOutputBytes)
	} else {
		log.Info("serving MCP on stdio", "mode", "offline", "out_dir", orDefault(cfg.opts.OutDir, "~/svc-workflows"))
	}
	err = b.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && ctx.Err() == nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) {
		log.Error("session ended", "err", err)
		return ExitError
	}
	return ExitOK
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func usage(prog Program) string {
	mode, url := "", ""
	switch {
	case prog.Offline:
		mode = "\n" + prog.Name + " is always offline: it never contacts a server, and ignores SVC_URL and SVC_TOKEN."
		url = " (not in " + prog.Name + ")"
	case prog.OnlineOnly:
		mode = "\nThis build has no offline mode: SVC_URL (or --url) is required."
	}
	return fmt.Sprintf(usageText, prog.Name, mode, url)
}

// parseConfig reads the flags and the environment and checks them
// (spec/nodes.md section 4): every problem is a start-up error.
func parseConfig(prog Program, argv []string, getenv func(string) string) (*config, error) {
	cfg := &config{}
	fs := flag.NewFlagSet(prog.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	urlFlag := fs.String("url", "", "")
	fs.BoolVar(&cfg.opts.AllowWrite, "allow-write", false, "")
	timeout := fs.Int("timeout-secs", int(DefaultTimeout/time.Second), "")
	fs.IntVar(&cfg.opts.MaxOutputBytes, "max-output-bytes", DefaultMaxOutputBytes, "")
	outDir := fs.String("out-dir", "", "")
	fs.BoolVar(&cfg.version, "version", false, "")
	fs.BoolVar(&cfg.help, "help", false, "")
	fs.BoolVar(&cfg.help, "h", false, "")
	if err := fs.Parse(argv); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: the bridge takes flags only", fs.Arg(0))
	}
	if cfg.help || cfg.version {
		return cfg, nil
	}
	if *timeout < 1 || *timeout > MaxTimeoutSecs {
		return nil, fmt.Errorf("--timeout-secs must be 1 to %d, not %d", MaxTimeoutSecs, *timeout)
	}
	cfg.opts.Timeout = time.Duration(*timeout) * time.Second
	if m := cfg.opts.MaxOutputBytes; m < MinMaxOutputBytes || m > MaxMaxOutputBytes {
		return nil, fmt.Errorf("--max-output-bytes must be %d to %d, not %d", MinMaxOutputBytes, MaxMaxOutputBytes, m)
	}
	cfg.opts.Program, cfg.opts.OfflineOnly = prog.Name, prog.Offline

	rawURL, fromFlag := strings.TrimSpace(*urlFlag), true
	if !flagSet(fs, "url") {
		rawURL, fromFlag = strings.TrimSpace(getenv("SVC_URL")), false
	}
	name := "SVC_URL"
	if fromFlag {
		name = "--url"
	}
	switch {
	case prog.Offline && fromFlag:
		return nil, fmt.Errorf("--url is not accepted: %s is always offline (use svc-mcp for online mode)", prog.Name)
	case prog.Offline:
		if rawURL != "" {
			cfg.warns = append(cfg.warns, "SVC_URL is set and ignored: "+prog.Name+" is always offline")
		}
		rawURL = ""
	case rawURL == "" && prog.OnlineOnly:
		return nil, errors.New("SVC_URL (or --url) is required: this build has no offline mode")
	}
	if rawURL != "" {
		token := strings.TrimSpace(getenv("SVC_TOKEN"))
		u, err := checkURL(rawURL, name)
		if err != nil {
			return nil, err
		}
		if token == "" {
			return nil, fmt.Errorf("%s is set but SVC_TOKEN is not: online mode needs the bearer token in SVC_TOKEN "+
				"(it is never read from a flag); unset %s for offline mode", name, name)
		}
		if i := strings.IndexFunc(token, func(r rune) bool { return r <= ' ' || r > '~' }); i >= 0 {
			return nil, errors.New("SVC_TOKEN holds a character that cannot be sent in a header (space, control or non-ASCII)")
		}
		if u.Scheme == "http" && !loopback(u.Hostname()) {
			cfg.warns = append(cfg.warns, fmt.Sprintf("%s uses plain http to %s: the token and the workflows cross the "+
				"network unencrypted; use https for a server that is not on this machine", name, u.Hostname()))
		}
		cfg.opts.URL, cfg.opts.Token = rawURL, token
		if strings.TrimSpace(*outDir) != "" {
			cfg.warns = append(cfg.warns, "--out-dir is used in offline mode only and is ignored")
		}
		return cfg, nil
	}

	dir := strings.TrimSpace(*outDir)
	if dir == "" {
		dir = strings.TrimSpace(getenv("SVC_OUT_DIR"))
	}
	if dir != "" {
		var err error
		if cfg.opts.OutDir, err = absDir(dir); err != nil {
			return nil, fmt.Errorf("output folder %q: %v", dir, err)
		}
	}
	return cfg, nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// checkURL accepts an http or https URL with a host and without a username,
// password, query or fragment. Messages never show a password.
func checkURL(raw, name string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s is not a valid URL", name)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s must be an http or https URL (like http://127.0.0.1:7700), not %q", name, u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("%s must not contain a username or password (the token goes in SVC_TOKEN): %s", name, u.Redacted())
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("%s has no host: %q", name, u.Redacted())
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, fmt.Errorf("%s must not have a query or fragment: %s", name, u.Redacted())
	}
	return u, nil
}

// loopback is the hosts the plain-http warning leaves out.
func loopback(host string) bool {
	switch strings.ToLower(host) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return false
}

// absDir makes an output folder absolute; a leading ~ is the home folder
// (an MCP client's JSON config does not expand it).
func absDir(dir string) (string, error) {
	if dir == "~" || strings.HasPrefix(dir, "~/") || strings.HasPrefix(dir, `~\`) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, dir[1:])
	}
	return filepath.Abs(dir)
}
