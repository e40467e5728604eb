package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
)

// waitFor bounds how long a test waits for something that should happen at
// once; it only keeps a broken test from hanging.
const waitFor = 10 * time.Second

// newEventServer is newServer with a hub that the engine publishes to.
func newEventServer(t *testing.T, tweak func(*httpapi.Options)) (*testServer, *events.Hub) {
	t.Helper()
	hub := events.New(events.Options{})
	s := newServer(t, func(o *httpapi.Options) {
		o.Events = hub
		o.Engine = engine.New(engine.Options{Registry: node.Default(), Credentials: o.Credentials, Events: hub})
		if tweak != nil {
			tweak(o)
		}
	})
	return s, hub
}

// stream is an event stream opened by a test.
type stream struct {
	status int
	header http.Header
	body   []byte // of a refused stream
	// lines has each non-empty line: "data: ..." and keep-alive comments.
	// It is closed when the stream ends.
	lines  chan string
	cancel context.CancelFunc
}

// open opens GET path with token and reads the stream in the background.
func (s *testServer) open(t *testing.T, path, token string) *stream {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, "GET", s.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	st := &stream{status: resp.StatusCode, header: resp.Header, lines: make(chan string), cancel: cancel}
	if resp.StatusCode != 200 {
		st.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		close(st.lines)
		return st
	}
	go func() {
		defer close(st.lines)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if sc.Text() == "" {
				continue
			}
			select {
			case st.lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	return st
}

// next returns the stream's next line, or "" when the stream ended.
func (st *stream) next(t *testing.T) string {
	t.Helper()
	select {
	case l := <-st.lines:
		return l
	case <-time.After(waitFor):
		t.Fatalf("no line on the event stream within %v", waitFor)
		return ""
	}
}

// event is a decoded message.
type event struct {
	Event   string         `json:"event"`
	Payload map[string]any `json:"payload"`
}

// nextEvent returns the next event, skipping keep-alives.
func (st *stream) nextEvent(t *testing.T) event {
	t.Helper()
	for {
		l := st.next(t)
		if l == "" {
			t.Fatalf("the event stream ended")
		}
		if strings.HasPrefix(l, ":") {
			continue
		}
		data, ok := strings.CutPrefix(l, "data: ")
		if !ok {
			t.Fatalf("stream line %q; want data: or a comment", l)
		}
		var e event
		if err := json.Unmarshal([]byte(data), &e); err != nil {
			t.Fatalf("stream data %q: %v", data, err)
		}
		return e
	}
}

func (e event) String() string {
	return fmt.Sprintf("%s %v/%v/%v", e.Event, e.Payload["workflow_id"], e.Payload["node_id"], e.Payload["status"])
}

// runEvents are the node-status events of a run of simple(id).
func runEvents(id string) []string {
	var out []string
	for _, n := range []string{"t", "s", "o"} {
		for _, st := range []string{"running", "success"} {
			out = append(out, fmt.Sprintf("node-status %s/%s/%s", id, n, st))
		}
	}
	return out
}

// wantRun reads the node-status events of one run of simple(id).
func (st *stream) wantRun(t *testing.T, what, id string) {
	t.Helper()
	for i, want := range runEvents(id) {
		if got := st.nextEvent(t).String(); got != want {
			t.Fatalf("%s: event %d is %s; want %s", what, i, got, want)
		}
	}
}

func (s *testServer) run(t *testing.T, id string) {
	t.Helper()
	if r := s.do(t, "POST", "/api/workflows/"+id+"/run", writeToken, ""); r.status != 200 || r.json(t)["success"] != true {
		t.Fatalf("run %s: %d %s", id, r.status, r.body)
	}
}

func TestEventsNodeStatus(t *testing.T) {
	t.Parallel()
	s, _ := newEventServer(t, nil)
	s.save(t, simple("w"))
	s.save(t, simple("w2"))
	all := s.open(t, "/api/events", readToken)
	narrowed := s.open(t, "/api/events?workflow_id=w", readToken)
	elsewhere := s.open(t, "/api/events?workflow_id=w2", readToken)
	for name, st := range map[string]*stream{"all": all, "narrowed": narrowed} {
		for k, want := range map[string]string{
			"Content-Type": "text/event-stream", "Cache-Control": "no-store", "X-Accel-Buffering": "no",
			"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
		} {
			if got := st.header.Get(k); st.status != 200 || got != want {
				t.Errorf("%s stream: status %d, %s %q; want 200, %q", name, st.status, k, got, want)
			}
		}
	}
	s.run(t, "w")
	all.wantRun(t, "unfiltered stream", "w")
	narrowed.wantRun(t, "stream narrowed to w", "w")
	// A later run of w2 is the first thing the w2 stream sees: nothing of w
	// came before it.
	s.run(t, "w2")
	elsewhere.wantRun(t, "stream narrowed to w2", "w2")
	all.wantRun(t, "unfiltered stream", "w2")
}

func TestEventsACL(t *testing.T) {
	t.Parallel()
	s, _ := newEventServer(t, nil)
	for _, id := range []string{"w", "w2", "other"} {
		s.save(t, simple(id))
	}
	this := s.open(t, "/api/events", thisToken) // confined to w and w2
	other := s.open(t, "/api/events", otherToken)
	thisNarrowed := s.open(t, "/api/events?workflow_id=w2", thisToken)
	s.run(t, "w")
	s.run(t, "other")
	s.run(t, "w2")
	this.wantRun(t, "restricted to w and w2", "w")
	this.wantRun(t, "restricted to w and w2", "w2")
	other.wantRun(t, "restricted to other", "other")
	thisNarrowed.wantRun(t, "restricted, narrowed to w2", "w2")

	for _, tc := range []struct {
		name, path, token string
	}{
		{"workflow outside the grants", "/api/events?workflow_id=other", thisToken},
		{"granted elsewhere", "/api/events?workflow_id=w", otherToken},
		{"workflow that does not exist", "/api/events?workflow_id=nope", otherToken},
	} {
		st := s.open(t, tc.path, tc.token)
		wantStatus(t, tc.name, response{st.status, st.header, st.body}, 403, "token ACL does not permit access to this workflow")
	}
	st := s.open(t, "/api/events", "")
	wantStatus(t, "no token", response{st.status, st.header, st.body}, 401, "Invalid or missing token")
}

// scheduler-ready names no workflow: only unfiltered streams get it.
func TestEventsServerWide(t *testing.T) {
	t.Parallel()
	s, hub := newEventServer(t, nil)
	all := s.open(t, "/api/events", adminToken)
	restricted := s.open(t, "/api/events", thisToken)
	narrowed := s.open(t, "/api/events?workflow_id=w", readToken)
	hub.Publish(events.Event{Type: events.TypeSchedulerReady, Payload: map[string]any{"job_count": 2, "timestamp": "t"}})
	hub.Publish(events.Event{Type: events.TypeSchedulerError, WorkflowID: "w", Payload: map[string]any{"workflow_id": "w", "message": "m"}})
	if e := all.nextEvent(t); e.Event != "scheduler-ready" || e.Payload["job_count"] != 2.0 || e.Payload["workflow_id"] != nil {
		t.Errorf("unfiltered stream: first event %+v; want scheduler-ready with job_count 2", e)
	}
	for name, st := range map[string]*stream{"all": all, "restricted": restricted, "narrowed": narrowed} {
		if e := st.nextEvent(t); e.Event != "scheduler-error" || e.Payload["message"] != "m" {
			t.Errorf("%s stream: event %+v; want the scheduler-error of w", name, e)
		}
	}
}

func TestEventsKeepAlive(t *testing.T) {
	t.Parallel()
	s, hub := newEventServer(t, func(o *httpapi.Options) { o.StreamKeepAlive = 20 * time.Millisecond })
	st := s.open(t, "/api/events", readToken)
	for range 2 {
		if l := st.next(t); l != ": ping" {
			t.Fatalf("idle stream line %q; want the keep-alive comment", l)
		}
	}
	hub.Publish(events.Event{Type: events.TypeSchedulerReady})
	if e := st.nextEvent(t); e.Event != "scheduler-ready" {
		t.Errorf("event after keep-alives: %+v", e)
	}
}

func TestEventsConnectionLimit(t *testing.T) {
	t.Parallel()
	s, _ := newEventServer(t, nil)
	open := make([]*stream, httpapi.MaxStreams)
	for i := range open {
		if open[i] = s.open(t, "/api/events", readToken); open[i].status != 200 {
			t.Fatalf("stream %d: status %d %s", i+1, open[i].status, open[i].body)
		}
	}
	st := s.open(t, "/api/events", readToken)
	wantStatus(t, "stream 65", response{st.status, st.header, st.body}, 429, "too many active SSE connections")
	// A closed stream frees its slot once the server sees the disconnect.
	open[0].cancel()
	deadline := time.Now().Add(waitFor)
	for {
		st := s.open(t, "/api/events", readToken)
		if st.status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no slot after closing a stream: %d %s", st.status, st.body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Shutdown ends open streams at once, although the grace for other
// connections is long; so does closing the hub.
func TestEventsEndAtShutdown(t *testing.T) {
	t.Parallel()
	s, hub := newEventServer(t, func(o *httpapi.Options) { o.ShutdownGrace = time.Hour })
	st := s.open(t, "/api/events", readToken)
	hub.Close()
	if l := st.next(t); l != "" {
		t.Errorf("line %q after the hub closed; want the end of the stream", l)
	}

	s, _ = newEventServer(t, func(o *httpapi.Options) { o.ShutdownGrace = time.Hour })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- s.api.Serve(ctx, ln) }()
	s.url = "http://" + ln.Addr().String()
	streams := []*stream{s.open(t, "/api/events", readToken), s.open(t, "/api/events?workflow_id=w", readToken)}
	cancel()
	for i, st := range streams {
		if l := st.next(t); l != "" {
			t.Errorf("stream %d: line %q at shutdown; want the end of the stream", i, l)
		}
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve = %v; want nil", err)
		}
	case <-time.After(waitFor):
		t.Fatalf("Serve still waiting %v after shutdown with streams open", waitFor)
	}
}
