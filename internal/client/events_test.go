package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/client"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

// The parser against a server writing the SSE wire format by hand: every
// line ending, comments, fields without a space, multi-line data, fields
// other than data, a message without data, and a message cut off by the
// end of the stream.
func TestEventsParse(t *testing.T) {
	t.Parallel()
	chunks := []string{
		": hello\n\n",
		"data: {\"event\":\"a\",\"payload\":{\"workflow_id\":\"w\"}}\n\n",
		"data:{\"event\":\"b\",\r\ndata: \"payload\":{}}\r\n\r\n",
		"data: {\"event\":\"c\",\"payload\":{\"n\":1}}\r",
		"\r",
		"event: ignored\nid: 7\nretry: 10\n\n",
		"data: {\"event\":\"d\",\"payload\":{}}\n\n",
		"data: not json\n\n",
		"data: {\"event\":\"e\",\"payload\":{}}\n",
		"\n",
		"data: {\"event\":\"cut\",\"payload\":{}}\n",
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("workflow_id") != "w" || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, `{"error":"bad request"}`, 400)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		for _, c := range chunks {
			io.WriteString(w, c)
			http.NewResponseController(w).Flush()
		}
	}))
	t.Cleanup(hs.Close)
	c, err := client.New(hs.URL, "tok", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Events(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, want := range []struct {
		event, workflow, payload string
		bad                      bool
	}{
		{event: "a", workflow: "w", payload: `{"workflow_id":"w"}`},
		{event: "b", payload: `{}`},
		{event: "c", payload: `{"n":1}`},
		{event: "d", payload: `{}`},
		{bad: true},
		{event: "e", payload: `{}`},
	} {
		e, err := st.Next()
		if want.bad {
			if err == nil {
				t.Errorf("Next() on a message that is not JSON = %+v; want an error", e)
			}
			continue
		}
		if err != nil || e.Event != want.event || e.WorkflowID != want.workflow || string(e.Payload) != want.payload {
			t.Errorf("Next() = %+v (payload %s), %v; want %s of %q with %s", e, e.Payload, err, want.event, want.workflow, want.payload)
		}
	}
	if e, err := st.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("Next() at the end = %+v, %v; want io.EOF", e, err)
	}
}

func TestEventsRoundTrip(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.TokenInsert(t.Context(), &store.Token{ID: "t", Label: "t", Scopes: []string{"admin"},
		SecretHash: httpapi.HashToken(token), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	hub := events.New(events.Options{})
	api := httpapi.New(httpapi.Options{Store: st, Engine: engine.New(engine.Options{Registry: node.Default(), Events: hub}),
		Events: hub, RateLimit: -1})
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() { hs.Close(); st.Close() })

	c, err := client.New(hs.URL, token, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stream, err := c.Events(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if _, err := c.SaveWorkflow(ctx, []byte(doc), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunWorkflow(ctx, "w", nil); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"t running", "t success", "o running", "o success"} {
		e, err := stream.Next()
		if err != nil {
			t.Fatalf("Next() = %v", err)
		}
		var p events.NodeStatusPayload
		if err := json.Unmarshal(e.Payload, &p); err != nil || e.Event != "node-status" || e.WorkflowID != "w" ||
			p.NodeID+" "+p.Status != want {
			t.Errorf("event %d = %s %s; want node-status %s", i, e.Event, e.Payload, want)
		}
	}
	cancel()
	if _, err := stream.Next(); err == nil {
		t.Errorf("Next() after cancel = nil error")
	}

	restricted, err := c.CreateToken(t.Context(), client.TokenRequest{Label: "r", Scopes: []string{"read"}, WorkflowIDs: []string{"x"}})
	if err != nil {
		t.Fatal(err)
	}
	rc, _ := client.New(hs.URL, restricted.Secret, client.Options{})
	if _, err := rc.Events(t.Context(), "w"); client.StatusOf(err) != 403 {
		t.Errorf("Events outside the grants: %v; want 403", err)
	}
	bad, _ := client.New(hs.URL, "nope-0123456789abcdef0123456789abcdef", client.Options{})
	if _, err := bad.Events(t.Context(), ""); client.StatusOf(err) != 401 {
		t.Errorf("Events with an unknown token: %v; want 401", err)
	}
}
