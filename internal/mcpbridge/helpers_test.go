package mcpbridge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/mcpbridge"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

// Tokens of the test server (at least 32 characters, like real ones).
const (
	adminToken = "admin-token-0123456789abcdef0123456789"
	readToken  = "read-token-0123456789abcdef0123456789ab"
	writeToken = "write-token-0123456789abcdef0123456789a"
)

// newServer runs the real REST server in-process (real SQLite store,
// engine and scheduler over loopback HTTP), with an admin, a read and a
// read-write token, as internal/httpapi's tests do.
func newServer(t *testing.T) string {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []struct {
		secret string
		scopes []string
	}{
		{adminToken, []string{"admin"}},
		{readToken, []string{"read"}},
		{writeToken, []string{"read", "write"}},
	} {
		if _, err := st.TokenInsert(t.Context(), &store.Token{ID: tok.secret[:14], Label: "t", Scopes: tok.scopes,
			SecretHash: httpapi.HashToken(tok.secret), CreatedAt: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	eng := engine.New(engine.Options{Registry: node.Default(), Variables: st})
	sched := scheduler.New(scheduler.Options{Store: st, Engine: eng})
	api := httpapi.New(httpapi.Options{Store: st, Engine: eng, Scheduler: sched, RateLimit: -1})
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() {
		hs.Close()
		sched.Close(context.Background())
		st.Close()
	})
	return hs.URL
}

// fakeServer answers every request with handler and counts the requests.
func fakeServer(t *testing.T, handler http.HandlerFunc) (string, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		handler(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, &n
}

// connect starts a bridge and an MCP client over the SDK's in-memory
// transport.
func connect(t *testing.T, opts mcpbridge.Options) *mcp.ClientSession {
	t.Helper()
	b, err := mcpbridge.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := b.Server().Connect(t.Context(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(t.Context(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// result is a tool result as a test reads it.
type result struct {
	isError bool
	texts   []string
	data    map[string]any // structured content
}

// text is the last text content (the JSON of a success, the message of a
// failure).
func (r result) text() string {
	if len(r.texts) == 0 {
		return ""
	}
	return r.texts[len(r.texts)-1]
}

func call(t *testing.T, cs *mcp.ClientSession, tool string, args any) result {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", tool, err)
	}
	var r result
	r.isError = res.IsError
	for _, c := range res.Content {
		tc, ok := c.(*mcp.TextContent)
		if !ok {
			t.Fatalf("%s: content %T; want text", tool, c)
		}
		r.texts = append(r.texts, tc.Text)
	}
	if res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r.data); err != nil {
			t.Fatalf("%s: structured content %s is not an object", tool, b)
		}
	}
	return r
}

// ok calls a tool that must succeed and returns its structured content.
func ok(t *testing.T, cs *mcp.ClientSession, tool string, args any) map[string]any {
	t.Helper()
	r := call(t, cs, tool, args)
	if r.isError {
		t.Fatalf("%s(%v) failed: %s", tool, args, r.text())
	}
	if r.data == nil {
		t.Fatalf("%s(%v): no structured content", tool, args)
	}
	// The text is the JSON of the structured content.
	var again map[string]any
	if err := json.Unmarshal([]byte(r.text()), &again); err != nil {
		t.Errorf("%s: text %q is not the JSON of the result: %v", tool, r.text(), err)
	}
	return r.data
}

// fails calls a tool that must fail with a message starting with prefix.
func fails(t *testing.T, cs *mcp.ClientSession, tool string, args any, prefix string) string {
	t.Helper()
	r := call(t, cs, tool, args)
	if !r.isError {
		t.Fatalf("%s(%v) = %s; want an error starting %q", tool, args, r.text(), prefix)
	}
	if !strings.HasPrefix(r.text(), prefix) {
		t.Fatalf("%s(%v) error = %q; want it to start %q", tool, args, r.text(), prefix)
	}
	return r.text()
}

// doc is a workflow that runs on demand: a Manual Trigger emitting payload,
// then an Output node.
func doc(id, payload string) map[string]any {
	var p any
	if err := json.Unmarshal([]byte(payload), &p); err != nil {
		panic(err)
	}
	return map[string]any{
		"id": id, "name": "Test " + id,
		"nodes": []any{
			map[string]any{"id": "t", "node_type_id": "manual_trigger", "config": map[string]any{"mock_payload": p}},
			map[string]any{"id": "o", "node_type_id": "output", "config": map[string]any{"label": "Result"}},
		},
		"edges": []any{map[string]any{"id": "e1", "from": "t", "to": "o"}},
	}
}

// slowDoc is a workflow that takes secs seconds.
func slowDoc(id string, secs int) map[string]any {
	return map[string]any{"id": id, "name": "Slow", "nodes": []any{
		map[string]any{"id": "d", "node_type_id": "delay", "config": map[string]any{"duration": secs}},
	}, "edges": []any{}}
}

// scheduledDoc is a workflow with an hourly Schedule trigger.
func scheduledDoc(id string) map[string]any {
	return map[string]any{"id": id, "name": "Hourly", "nodes": []any{
		map[string]any{"id": "s", "node_type_id": "schedule", "config": map[string]any{"mode": "interval", "interval_secs": 3600}},
		map[string]any{"id": "o", "node_type_id": "output", "config": map[string]any{}},
	}, "edges": []any{map[string]any{"id": "e1", "from": "s", "to": "o"}}}
}

// num reads a JSON number of a result.
func num(v any) int64 {
	f, ok := v.(float64)
	if !ok {
		panic(fmt.Sprintf("%v (%T) is not a number", v, v))
	}
	return int64(f)
}
