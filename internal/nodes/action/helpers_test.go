package action

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
)

// seen is a request as a test server received it.
type seen struct {
	Method string
	Path   string
	Header http.Header
	Host   string
	Body   string
}

// server is an httptest server on 127.0.0.1 that records every request and
// answers with its handler.
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []seen
}

// newServer starts a server answering with h (nil: 200 "ok").
func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	if h == nil {
		h = func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	}
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Host: r.Host, Body: string(b)})
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// count is the number of requests received.
func (s *server) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

// last is the last request received; the test fails without one.
func (s *server) last(t *testing.T) seen {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.reqs) == 0 {
		t.Fatalf("the server received no request")
	}
	return s.reqs[len(s.reqs)-1]
}

// wantRetry reports unless err is a *node.Error with code and retry class.
func wantRetry(t *testing.T, what string, err error, code string, retry node.Retry) *node.Error {
	t.Helper()
	var ne *node.Error
	if !errors.As(err, &ne) {
		t.Errorf("%s: error = %v; want a *node.Error %s", what, err, code)
		return nil
	}
	if ne.Code != code || ne.Retry != retry {
		t.Errorf("%s: error = %s retry %v (%v); want %s retry %v", what, ne.Code, ne.Retry, err, code, retry)
	}
	return ne
}

// fast are options with short timeouts for tests that wait for one.
var fast = Options{RequestTimeout: 200 * time.Millisecond, NotifyTimeout: 200 * time.Millisecond}
