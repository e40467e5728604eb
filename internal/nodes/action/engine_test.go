package action_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/nodes/action"
	_ "github.com/svcrun/svc/internal/nodes/data"
	"github.com/svcrun/svc/internal/value"
	"github.com/svcrun/svc/internal/workflow"
)

// These tests run HTTP Request inside the engine, with the retry settings
// of a workflow, to show that the node's typed errors steer the engine as
// rule 4 of spec/nodes.md says.

// runWith runs a workflow whose nodes and edges are given as JSON values,
// with HTTP Request's timeout cut to 200 ms.
func runWith(t *testing.T, creds engine.CredentialSource, nodes []map[string]any, edges ...map[string]any) *engine.Result {
	t.Helper()
	if edges == nil {
		edges = []map[string]any{}
	}
	doc, err := json.Marshal(map[string]any{"id": "w", "name": "W", "nodes": nodes, "edges": edges})
	if err != nil {
		t.Fatal(err)
	}
	w, err := workflow.Parse(doc)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	reg := node.Default()
	if err := reg.Replace(action.HTTPRequestSpec(action.Options{RequestTimeout: 200 * time.Millisecond})); err != nil {
		t.Fatal(err)
	}
	e := engine.New(engine.Options{Registry: reg, Credentials: creds})
	return e.Run(t.Context(), engine.Request{Workflow: w})
}

// fetch is an HTTP Request node with id "fetch", retried up to attempts
// times without backoff.
func fetch(config map[string]any, attempts int) map[string]any {
	return map[string]any{"id": "fetch", "node_type_id": "http_request", "config": config,
		"retry": map[string]any{"enabled": true, "max_attempts": attempts, "backoff_ms": 0}}
}

func errText(res *engine.Result) string {
	if res.Error == nil {
		return ""
	}
	return *res.Error
}

// counting starts a server on 127.0.0.1 that counts its requests and
// answers with h, given the request's number from 1.
func counting(t *testing.T, h func(w http.ResponseWriter, r *http.Request, n int32)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h(w, r, n.Add(1))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestEngineRetriesRateLimit: a 429 is retried for every method, POST
// included, after the wait its Retry-After asks for.
func TestEngineRetriesRateLimit(t *testing.T) {
	t.Parallel()
	srv, n := counting(t, func(w http.ResponseWriter, _ *http.Request, n int32) {
		switch n {
		case 1:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"created": true}`)
		}
	})
	res := runWith(t, nil, []map[string]any{fetch(map[string]any{"url": srv.URL, "method": "POST", "body": map[string]any{"a": 1}}, 3)})
	if !res.Success || n.Load() != 3 || res.NodeTimings["fetch"].Attempts != 3 {
		t.Fatalf("run success %v (%s %s) after %d requests, %d attempts; want success after 3",
			res.Success, res.ErrorCode, errText(res), n.Load(), res.NodeTimings["fetch"].Attempts)
	}
	if got, _ := value.Lookup(res.NodeOutputs["fetch"], "body.created"); got != true {
		t.Errorf("output = %v; want the third response", res.NodeOutputs["fetch"])
	}
	var waits []string
	for _, l := range res.Logs {
		if strings.Contains(l.Message, "retrying in") {
			waits = append(waits, l.Message)
		}
	}
	if len(waits) != 2 || !strings.Contains(waits[0], "(RATE_LIMITED); retrying in 1s") || !strings.Contains(waits[1], "retrying in 0s") {
		t.Errorf("retry log = %q; want a 1s wait from Retry-After, then none", waits)
	}
}

// TestEngineTimeoutRetries: a timeout is retried for GET, never for POST.
func TestEngineTimeoutRetries(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		method   string
		attempts int32
	}{{"GET", 3}, {"PUT", 3}, {"POST", 1}, {"PATCH", 1}} {
		release := make(chan struct{})
		srv, n := counting(t, func(_ http.ResponseWriter, r *http.Request, _ int32) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		})
		t.Cleanup(func() { close(release) })
		res := runWith(t, nil, []map[string]any{fetch(map[string]any{"url": srv.URL, "method": tt.method}, 3)})
		if res.Success || res.ErrorCode != action.CodeTimeout || n.Load() != tt.attempts || int32(res.NodeTimings["fetch"].Attempts) != tt.attempts {
			t.Errorf("%s: run success %v code %s after %d requests, %d attempts; want TIMEOUT after %d",
				tt.method, res.Success, res.ErrorCode, n.Load(), res.NodeTimings["fetch"].Attempts, tt.attempts)
		}
	}
}

// TestEngineServerErrorsNotRetried: 500 and 502 are never retried for
// HTTP Request, even with retries on.
func TestEngineServerErrorsNotRetried(t *testing.T) {
	t.Parallel()
	for _, status := range []int{500, 502, 503, 504} {
		srv, n := counting(t, func(w http.ResponseWriter, _ *http.Request, _ int32) { w.WriteHeader(status) })
		res := runWith(t, nil, []map[string]any{fetch(map[string]any{"url": srv.URL, "method": "GET"}, 5)})
		if res.Success || res.ErrorCode != action.CodeHTTPError || n.Load() != 1 {
			t.Errorf("%d: run success %v code %s after %d requests; want HTTP_ERROR after 1", status, res.Success, res.ErrorCode, n.Load())
		}
	}
}

// TestEngineConnectionRefusedRetried: a connection that cannot be made is
// retried, POST included.
func TestEngineConnectionRefusedRetried(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	res := runWith(t, nil, []map[string]any{fetch(map[string]any{"url": "http://" + addr, "method": "POST"}, 2)})
	if res.Success || res.ErrorCode != action.CodeConnectionFailed || res.NodeTimings["fetch"].Attempts != 2 {
		t.Errorf("run success %v code %s after %d attempts; want CONNECTION_FAILED after 2", res.Success, res.ErrorCode, res.NodeTimings["fetch"].Attempts)
	}
}

// TestEngineErrorPort: with Error wired a 404 leaves through it and the run
// goes on; without, the run fails HTTP_ERROR.
func TestEngineErrorPort(t *testing.T) {
	t.Parallel()
	srv, _ := counting(t, func(w http.ResponseWriter, _ *http.Request, _ int32) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"message": "no such item"}`)
	})
	cfg := map[string]any{"url": srv.URL + "/items/7", "method": "GET"}
	nodes := []map[string]any{fetch(cfg, 1),
		{"id": "ok", "node_type_id": "output", "config": map[string]any{"label": "found"}},
		{"id": "missing", "node_type_id": "output", "config": map[string]any{"label": "missing"}}}
	res := runWith(t, nil, nodes,
		map[string]any{"id": "e1", "from": "fetch", "from_port": "success", "to": "ok"},
		map[string]any{"id": "e2", "from": "fetch", "from_port": "error", "to": "missing"})
	if !res.Success || res.NodeStatus["ok"] != engine.StatusSkipped || res.NodeStatus["missing"] != engine.StatusSuccess {
		t.Fatalf("run success %v (%s), statuses %v; want success through the error port", res.Success, errText(res), res.NodeStatus)
	}
	for path, want := range map[string]any{"value.status": 404, "value.body.message": "no such item", "value.code": "HTTP_ERROR", "value.node_id": "fetch"} {
		if got, _ := value.Lookup(res.NodeOutputs["missing"], path); got != want {
			t.Errorf("missing.%s = %v; want %v", path, got, want)
		}
	}

	res = runWith(t, nil, nodes[:2], map[string]any{"id": "e1", "from": "fetch", "from_port": "success", "to": "ok"})
	if res.Success || res.ErrorCode != action.CodeHTTPError || !strings.Contains(errText(res), "404 Not Found") ||
		!strings.Contains(errText(res), "no such item") {
		t.Errorf("unwired run: success %v, %s %q; want HTTP_ERROR with the status and body", res.Success, res.ErrorCode, errText(res))
	}
}

// memCreds is a CredentialSource over a map.
type memCreds map[string]string

func (c memCreds) CredentialValue(_ context.Context, id string) (string, error) {
	if v, ok := c[id]; ok {
		return v, nil
	}
	return "", errors.New("no such credential")
}

// TestEngineMasksAPIKey: a typed api_key and a saved one are masked where a
// response echoes them, in outputs and in error messages (rule 7).
func TestEngineMasksAPIKey(t *testing.T) {
	t.Parallel()
	const typed, saved = "typed-key-0123456789", "saved-key-9876543210"
	srv, _ := counting(t, func(w http.ResponseWriter, r *http.Request, _ int32) {
		auth := r.Header.Get("Authorization")
		w.Header().Set("X-Echo", auth)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/deny" {
			w.WriteHeader(http.StatusUnauthorized)
		}
		json.NewEncoder(w).Encode(map[string]any{"you_sent": auth})
	})
	for _, tt := range []struct {
		name, path string
		key        any
		secret     string
	}{
		{"typed", "/echo", typed, typed},
		{"saved", "/echo", map[string]any{"credential": "prod"}, saved},
		{"typed, refused", "/deny", typed, typed},
		{"saved, refused", "/deny", map[string]any{"credential": "prod"}, saved},
	} {
		res := runWith(t, memCreds{"prod": saved},
			[]map[string]any{fetch(map[string]any{"url": srv.URL + tt.path, "method": "GET", "api_key": tt.key}, 1)})
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), tt.secret) {
			t.Errorf("%s: the result shows the key:\n%s", tt.name, b)
		}
		if tt.path == "/deny" {
			if res.ErrorCode != action.CodeHTTPError || !strings.Contains(errText(res), "Bearer "+engine.Mask) {
				t.Errorf("%s: error %s %q; want HTTP_ERROR echoing Bearer %s", tt.name, res.ErrorCode, errText(res), engine.Mask)
			}
			continue
		}
		if got, _ := value.Lookup(res.NodeOutputs["fetch"], "body.you_sent"); got != "Bearer "+engine.Mask {
			t.Errorf("%s: body.you_sent = %v; want Bearer %s", tt.name, got, engine.Mask)
		}
		if got, _ := value.Lookup(res.NodeOutputs["fetch"], "headers.x-echo"); got != "Bearer "+engine.Mask {
			t.Errorf("%s: headers.x-echo = %v; want Bearer %s", tt.name, got, engine.Mask)
		}
	}
}
