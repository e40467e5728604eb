// Package httpapi is the REST API of svc-server (spec/server.md section 4):
// the route table, bearer authentication, the one error mapper, and the
// serving lifecycle with graceful shutdown.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/credential"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/widget"
)

// Defaults of Options.
const (
	DefaultBodyLimit     = 5 << 20
	DefaultMaxRuns       = 10
	DefaultQueueWait     = 30 * time.Second
	DefaultWorkflowWait  = 5 * time.Second
	DefaultShutdownGrace = 10 * time.Second
)

// NodeBundled is the state of the bundled Node.js runtime for the health
// route: Status "ok" with its Version, or "error" with a generic Message.
type NodeBundled struct {
	Status  string `json:"status"`
	Version string `json:"version,omitempty"`
	Message string `json:"message,omitempty"`
}

// Options configure a Server. Store and Engine are required.
type Options struct {
	Store  store.Store
	Engine *engine.Engine
	Logger *slog.Logger
	// MaxConcurrentRuns is the size of the global run semaphore.
	MaxConcurrentRuns int
	// MaxQueueWait is how long a run waits for a slot before 503.
	MaxQueueWait time.Duration
	// WorkflowWait is how long a run waits for its workflow's lock before
	// 429; zero means 5 seconds.
	WorkflowWait time.Duration
	// BodyLimit caps request bodies; zero means 5 MiB.
	BodyLimit int64
	// ShutdownGrace is how long connections get after a shutdown signal;
	// zero means 10 seconds.
	ShutdownGrace time.Duration
	// NodeBundled reports the bundled runtime; nil reports it missing.
	NodeBundled func(context.Context) NodeBundled
	// Credentials is the credential store; nil makes the credential routes
	// fail with 500.
	Credentials *credential.Service
	// RateLimit is the requests allowed per client IP per 60 seconds;
	// zero means 300, negative turns the limiter off.
	RateLimit int
	// TrustedProxyCount is the number of proxy hops trusted in
	// X-Forwarded-For; zero or less uses the socket address.
	TrustedProxyCount int
	// AllowOrigins are CORS origins allowed besides the loopback hosts,
	// as scheme://host[:port] in lower case.
	AllowOrigins []string
	// Events is the hub GET /api/events streams from; nil means a hub of
	// the server's own that nothing publishes to.
	Events *events.Hub
	// StreamKeepAlive is how long an event stream stays silent before a
	// keep-alive comment; zero means 30 seconds.
	StreamKeepAlive time.Duration
	// Scheduler runs the background jobs; nil makes start and stop fail
	// with 500.
	Scheduler *scheduler.Scheduler
	// WidgetTokens mints and verifies widget tokens; nil makes mint-token
	// fail with 500 and trigger accept raw secrets only.
	WidgetTokens *widget.Signer
}

// Server serves the REST API.
type Server struct {
	opts  Options
	log   *slog.Logger
	mux   *http.ServeMux
	store store.Store
	eng   *engine.Engine

	creds *credential.Service
	sched *scheduler.Scheduler

	widgetLimits widgetLimiters
	relayClient  *http.Client
	limiter      *rateLimiter // nil: off
	streams      chan struct{}
	handler      http.Handler

	tokens tokenCache
	plans  planCache
	locks  sync.Map // workflow id -> chan struct{} (capacity 1)
	slots  chan struct{}

	// runs is cancelled at shutdown: runs in flight end as cancelled.
	runs       context.Context
	cancelRuns context.CancelFunc
	// hub feeds the event streams; endStreams ends them at shutdown.
	hub        *events.Hub
	streamsEnd context.Context
	endStreams context.CancelFunc
	catalogMu  sync.Mutex
	catalog    []byte // GET /api/nodes, built once
}

// New returns a server.
func New(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxConcurrentRuns <= 0 {
		opts.MaxConcurrentRuns = DefaultMaxRuns
	}
	if opts.MaxQueueWait < 0 {
		opts.MaxQueueWait = 0
	}
	if opts.WorkflowWait <= 0 {
		opts.WorkflowWait = DefaultWorkflowWait
	}
	if opts.BodyLimit <= 0 {
		opts.BodyLimit = DefaultBodyLimit
	}
	if opts.ShutdownGrace <= 0 {
		opts.ShutdownGrace = DefaultShutdownGrace
	}
	if opts.NodeBundled == nil {
		opts.NodeBundled = func(context.Context) NodeBundled {
			return NodeBundled{Status: "error", Message: "the bundled Node.js runtime was not found"}
		}
	}
	s := &Server{
		opts: opts, log: opts.Logger.With("component", "httpapi"), mux: http.NewServeMux(),
		store: opts.Store, eng: opts.Engine, slots: make(chan struct{}, opts.MaxConcurrentRuns),
	}
	s.creds, s.sched = opts.Credentials, opts.Scheduler
	s.widgetLimits = newWidgetLimiters()
	// The relay talks to this process's own listeners: no proxy, no
	// redirects.
	s.relayClient = &http.Client{Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	s.streams = make(chan struct{}, MaxStreams)
	switch {
	case opts.RateLimit == 0:
		s.limiter = newRateLimiter(DefaultRateLimit, RateWindow, MaxTrackedClients)
	case opts.RateLimit > 0:
		s.limiter = newRateLimiter(opts.RateLimit, RateWindow, MaxTrackedClients)
	}
	s.tokens.store = opts.Store
	s.plans.max = 4096
	s.runs, s.cancelRuns = context.WithCancel(context.Background())
	s.initStreams()
	s.routes()
	s.handler = s.guard(s.mux)
	return s
}

// Handler returns the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves on ln until ctx ends. Then runs in flight are cancelled (and
// recorded as cancelled), event streams end, the listener closes, and other
// connections get ShutdownGrace to finish before they are closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	select {
	case err := <-served:
		s.cancelRuns()
		s.endStreams()
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "grace", s.opts.ShutdownGrace)
	s.cancelRuns()
	// Shutdown waits for handlers to return, and an event stream never
	// returns by itself: end the streams first, so that the grace is only
	// for other connections.
	s.endStreams()
	grace, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownGrace)
	defer cancel()
	err := hs.Shutdown(grace)
	if errors.Is(err, context.DeadlineExceeded) {
		err = hs.Close()
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// CancelRuns cancels every run in flight.
func (s *Server) CancelRuns() { s.cancelRuns() }
