package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/credential"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/secret"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
	"github.com/svcrun/svc/internal/widget"
)

// Tokens of the test server.
const (
	adminToken   = "admin-token-0123456789abcdef0123456789"
	readToken    = "read-token-0123456789abcdef0123456789ab"
	writeToken   = "write-token-0123456789abcdef0123456789a"
	expiredToken = "expired-token-0123456789abcdef012345678"
	revokedToken = "revoked-token-0123456789abcdef012345678"
	// otherToken has read and write but is confined to workflow "other";
	// thisToken is confined to "w" and "w2".
	otherToken = "restricted-other-0123456789abcdef0123456"
	thisToken  = "restricted-this-0123456789abcdef01234567"
)

// Token ids of the test server: the first 14 characters of the secret.
func tokenID(secret string) string { return secret[:14] }

type testServer struct {
	url    string
	st     *sqlite.Store
	api    *httpapi.Server
	creds  *credential.Service
	sched  *scheduler.Scheduler
	signer *widget.Signer
}

// newServer starts the API over real loopback HTTP with a real SQLite store.
func newServer(t *testing.T, tweak func(*httpapi.Options)) *testServer {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-time.Minute)
	for _, tok := range []struct {
		secret  string
		scopes  []string
		expires *time.Time
		revoked *time.Time
		grants  []string
	}{
		{adminToken, []string{"admin"}, nil, nil, nil},
		{readToken, []string{"read"}, nil, nil, nil},
		{writeToken, []string{"read", "write"}, nil, nil, nil},
		{expiredToken, []string{"admin"}, &past, nil, nil},
		{revokedToken, []string{"admin"}, nil, &past, nil},
		{otherToken, []string{"read", "write"}, nil, nil, []string{"other"}},
		{thisToken, []string{"read", "write"}, nil, nil, []string{"w", "w2"}},
	} {
		if _, err := st.TokenInsert(t.Context(), &store.Token{ID: tokenID(tok.secret), Label: "t", Scopes: tok.scopes,
			SecretHash: httpapi.HashToken(tok.secret), CreatedAt: time.Now(), ExpiresAt: tok.expires, RevokedAt: tok.revoked,
			WorkflowIDs: tok.grants}); err != nil {
			t.Fatal(err)
		}
	}
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := credential.Open(t.Context(), st, box)
	if err != nil {
		t.Fatal(err)
	}
	eng := engine.New(engine.Options{Registry: node.Default(), Variables: st, Credentials: creds})
	signer, err := widget.NewSigner([]byte("widget-test-key-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	opts := httpapi.Options{Store: st, Engine: eng, Credentials: creds, RateLimit: -1, WidgetTokens: signer}
	if tweak != nil {
		tweak(&opts)
	}
	if opts.Scheduler == nil {
		so := scheduler.Options{Store: st, Engine: opts.Engine, Tokens: signer}
		if opts.Events != nil { // a nil *events.Hub must not become a non-nil Publisher
			so.Events = opts.Events
		}
		opts.Scheduler = scheduler.New(so)
	}
	api := httpapi.New(opts)
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() {
		hs.Close()
		opts.Scheduler.Close(context.Background())
		st.Close()
	})
	return &testServer{url: hs.URL, st: st, api: api, creds: creds, sched: opts.Scheduler, signer: signer}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("body %q is not a JSON object: %v", r.body, err)
	}
	return m
}

// do sends a request; extra holds header name/value pairs.
func (s *testServer) do(t *testing.T, method, path, token, body string, extra ...string) response {
	t.Helper()
	return s.doCtx(t.Context(), t, method, path, token, body, extra...)
}

func (s *testServer) doCtx(ctx context.Context, t *testing.T, method, path, token, body string, extra ...string) response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(extra); i += 2 {
		req.Header.Set(extra[i], extra[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return response{}
		}
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.Header.Get("Content-Type") == "text/event-stream" {
		return response{resp.StatusCode, resp.Header, nil} // a stream: its headers only
	}
	b, _ := io.ReadAll(resp.Body)
	return response{resp.StatusCode, resp.Header, b}
}

// envelope wraps a workflow document for the save and validate routes.
func envelope(doc string) string {
	b, _ := json.Marshal(map[string]string{"workflow_json": doc})
	return string(b)
}

// simple is a three-node workflow: trigger, set_variable, output.
func simple(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"Simple %s","tags":["t"],"nodes":[
	 {"id":"t","node_type_id":"manual_trigger","config":{"mock_payload":{"n":2}}},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"x","value":"{{ $input.n * ($vars.k ?? 1) }}"}},
	 {"id":"o","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"t","to":"s"},{"id":"e2","from":"s","to":"o"}]}`, id, id)
}

// scheduled is a workflow fired every hour by a Schedule trigger.
func scheduled(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"Scheduled %s","nodes":[
	 {"id":"t","node_type_id":"schedule","config":{"mode":"interval","interval_secs":3600}},
	 {"id":"o","node_type_id":"output","config":{"field":"mode"}}],
	 "edges":[{"id":"e1","from":"t","to":"o"}]}`, id, id)
}

func (s *testServer) save(t *testing.T, doc string) int64 {
	t.Helper()
	r := s.do(t, "POST", "/api/workflows", writeToken, envelope(doc))
	if r.status != 200 {
		t.Fatalf("save: %d %s", r.status, r.body)
	}
	return int64(r.json(t)["row_version"].(float64))
}

func wantStatus(t *testing.T, what string, r response, status int, errContains string) {
	t.Helper()
	if r.status != status {
		t.Errorf("%s: status %d (%s); want %d", what, r.status, r.body, status)
		return
	}
	if errContains != "" {
		var m map[string]any
		_ = json.Unmarshal(r.body, &m)
		if msg, _ := m["error"].(string); !strings.Contains(msg, errContains) {
			t.Errorf("%s: error %q; want it to contain %q", what, msg, errContains)
		}
	}
}
