package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/store"
)

func TestACLRules(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	for _, id := range []string{"w", "other", "x1", "x2"} {
		s.save(t, simple(id))
	}
	// Pre-checks depend on the grants alone: a granted workflow that does
	// not exist is 404, one not granted is 403 whether it exists or not.
	wantStatus(t, "granted, missing", s.do(t, "GET", "/api/workflows/w2", thisToken, ""), 404, "")
	wantStatus(t, "not granted, exists", s.do(t, "GET", "/api/workflows/x1", thisToken, ""), 403, "token ACL does not permit access to this workflow")
	wantStatus(t, "not granted, missing", s.do(t, "GET", "/api/workflows/nope", thisToken, ""), 403, "token ACL does not permit access to this workflow")
	wantStatus(t, "run not granted", s.do(t, "POST", "/api/workflows/x1/run", thisToken, ""), 403, "")
	wantStatus(t, "delete not granted", s.do(t, "DELETE", "/api/workflows/x1", thisToken, ""), 403, "")

	// Saving needs the document's own id granted; nothing is stored otherwise.
	wantStatus(t, "save not granted", s.do(t, "POST", "/api/workflows", thisToken, envelope(simple("new"))), 403, "")
	if _, err := s.st.WorkflowGet(t.Context(), "new"); err == nil {
		t.Error("a refused save stored the workflow")
	}
	wantStatus(t, "save granted", s.do(t, "POST", "/api/workflows", thisToken, envelope(simple("w2"))), 200, "")

	// Filtered list: total counts only the permitted workflows.
	m := s.do(t, "GET", "/api/workflows?limit=1", thisToken, "").json(t)
	if m["total"].(float64) != 2 || len(m["items"].([]any)) != 1 {
		t.Errorf("restricted list = %v; want total 2 and one item", m)
	}
	if m := s.do(t, "GET", "/api/workflows", adminToken, "").json(t); m["total"].(float64) != 5 {
		t.Errorf("admin list total = %v; want 5", m["total"])
	}

	// Credentials are server-wide: refused to a restricted token.
	wantStatus(t, "restricted credentials", s.do(t, "GET", "/api/credentials", thisToken, ""), 403,
		"token is restricted to specific workflows and cannot use server-wide routes")
}

func TestTokenRoutes(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	count := func() int {
		var l []any
		if err := json.Unmarshal(s.do(t, "GET", "/api/tokens", adminToken, "").body, &l); err != nil {
			t.Fatal(err)
		}
		return len(l)
	}
	before := count()
	long := strings.Repeat("x", 257)
	ids501 := make([]string, 501)
	for i := range ids501 {
		ids501[i] = fmt.Sprint("w", i)
	}
	many, _ := json.Marshal(map[string]any{"label": "l", "workflow_ids": ids501})
	for _, tc := range []struct{ body, field string }{
		{`{}`, "label"},
		{`{"label":"   "}`, "label"},
		{`{"label":"` + long + `"}`, "label"},
		{`{"label":7}`, "label"},
		{`{"label":"l","scopes":[]}`, "scopes"},
		{`{"label":"l","scopes":["root"]}`, "scopes"},
		{`{"label":"l","scopes":"read"}`, "scopes"},
		{`{"label":"l","expires_in_secs":0}`, "expires_in_secs"},
		{`{"label":"l","expires_in_secs":-5}`, "expires_in_secs"},
		{`{"label":"l","expires_in_secs":1.5}`, "expires_in_secs"},
		{`{"label":"l","expires_in_secs":18446744073709551615}`, "expires_in_secs"},
		{`{"label":"l","workflow_ids":[""]}`, "workflow_ids[0]"},
		{`{"label":"l","workflow_ids":["ok","` + long + `"]}`, "workflow_ids[1]"},
		{string(many), "workflow_ids"},
		{`{"label":"l","scopes":["admin"],"workflow_ids":["w"]}`, "workflow_ids"},
		{`not json`, "JSON"},
	} {
		wantStatus(t, "create "+tc.body[:min(len(tc.body), 60)], s.do(t, "POST", "/api/tokens", adminToken, tc.body), 400, tc.field)
	}
	if got := count(); got != before {
		t.Errorf("%d tokens after refused creations; want %d", got, before)
	}

	r := s.do(t, "POST", "/api/tokens", adminToken, `{"label":"ci","scopes":["read"],"expires_in_secs":3600,"workflow_ids":["w","w"]}`)
	wantStatus(t, "create", r, 201, "")
	m := r.json(t)
	tok, id := m["token"].(string), m["token_id"].(string)
	if len(tok) < 32 || id == "" || m["label"] != "ci" || m["expires_in_secs"].(float64) != 3600 || m["note"] == "" ||
		fmt.Sprint(m["scopes"]) != "[read]" || fmt.Sprint(m["workflow_ids"]) != "[w]" {
		t.Errorf("create = %v", m)
	}
	wantStatus(t, "new token reads its workflow", s.do(t, "GET", "/api/workflows/w", tok, ""), 404, "")
	wantStatus(t, "new token cannot write", s.do(t, "POST", "/api/workflows", tok, envelope(simple("w"))), 403, "write scope required")
	wantStatus(t, "new token outside its grant", s.do(t, "GET", "/api/workflows/v", tok, ""), 403, "")
	wantStatus(t, "non-admin on token routes", s.do(t, "GET", "/api/tokens", tok, ""), 403, "admin scope required for token management")

	var listed []map[string]any
	json.Unmarshal(s.do(t, "GET", "/api/tokens", adminToken, "").body, &listed)
	for _, rec := range listed {
		if rec["token_id"] == id {
			if rec["expires_at"] == nil || rec["revoked_at"] != nil || rec["created_at"] == nil {
				t.Errorf("token record = %v", rec)
			}
		}
		if _, leaked := rec["token"]; leaked {
			t.Errorf("token list shows a secret: %v", rec)
		}
	}
	r = s.do(t, "POST", "/api/tokens", adminToken, `{"label":"defaults"}`)
	if m := r.json(t); fmt.Sprint(m["scopes"]) != "[read write]" || m["expires_in_secs"] != nil {
		t.Errorf("defaults = %v", m)
	}

	// Grants.
	g := s.do(t, "GET", "/api/tokens/"+id+"/workflows", adminToken, "").json(t)
	if fmt.Sprint(g["workflow_ids"]) != "[w]" || !strings.Contains(g["note"].(string), "only") {
		t.Errorf("grants = %v", g)
	}
	wantStatus(t, "remove the only grant", s.do(t, "DELETE", "/api/tokens/"+id+"/workflows/w", adminToken, ""), 409, "only")
	wantStatus(t, "still confined", s.do(t, "GET", "/api/workflows/v", tok, ""), 403, "")
	wantStatus(t, "add grant", s.do(t, "POST", "/api/tokens/"+id+"/workflows/v", adminToken, ""), 201, "")
	wantStatus(t, "grant applies at once", s.do(t, "GET", "/api/workflows/v", tok, ""), 404, "")
	wantStatus(t, "remove grant", s.do(t, "DELETE", "/api/tokens/"+id+"/workflows/w", adminToken, ""), 200, "")
	wantStatus(t, "removal applies at once", s.do(t, "GET", "/api/workflows/w", tok, ""), 403, "")
	wantStatus(t, "remove a grant not held", s.do(t, "DELETE", "/api/tokens/"+id+"/workflows/zz", adminToken, ""), 200, "")
	wantStatus(t, "grant to an admin token", s.do(t, "POST", "/api/tokens/"+tokenID(adminToken)+"/workflows/v", adminToken, ""), 400, "admin")
	wantStatus(t, "grant to an unknown token", s.do(t, "POST", "/api/tokens/nope/workflows/v", adminToken, ""), 404, "")
	wantStatus(t, "grant to a revoked token", s.do(t, "POST", "/api/tokens/"+tokenID(revokedToken)+"/workflows/v", adminToken, ""), 404, "")
	wantStatus(t, "blank workflow id", s.do(t, "POST", "/api/tokens/"+id+"/workflows/%20", adminToken, ""), 400, "workflow_id")
	wantStatus(t, "long workflow id", s.do(t, "POST", "/api/tokens/"+id+"/workflows/"+long, adminToken, ""), 400, "workflow_id")
	wantStatus(t, "grants of an unknown token", s.do(t, "GET", "/api/tokens/nope/workflows", adminToken, ""), 404, "")
	g = s.do(t, "GET", "/api/tokens/"+tokenID(writeToken)+"/workflows", adminToken, "").json(t)
	if fmt.Sprint(g["workflow_ids"]) != "[]" || !strings.Contains(g["note"].(string), "unrestricted") {
		t.Errorf("grants of an unrestricted token = %v", g)
	}

	// Revocation.
	wantStatus(t, "revoke self", s.do(t, "DELETE", "/api/tokens/"+tokenID(adminToken), adminToken, ""), 400, "Cannot revoke the token you are currently using")
	wantStatus(t, "revoke unknown", s.do(t, "DELETE", "/api/tokens/nope", adminToken, ""), 404, "")
	wantStatus(t, "revoke", s.do(t, "DELETE", "/api/tokens/"+id, adminToken, ""), 200, "")
	wantStatus(t, "revoke again", s.do(t, "DELETE", "/api/tokens/"+id, adminToken, ""), 200, "")
	wantStatus(t, "revoked token", s.do(t, "GET", "/api/workflows/v", tok, ""), 401, "Invalid or missing token")
}

func TestInitialTokenStaysRevoked(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	// The start-up path inserts SVC_TOKEN with TokenInsert: a token
	// revoked since must not come back.
	wantStatus(t, "revoke", s.do(t, "DELETE", "/api/tokens/"+tokenID(writeToken), adminToken, ""), 200, "")
	inserted, err := s.st.TokenInsert(t.Context(), &store.Token{ID: "again", Label: "initial", Scopes: []string{"admin"},
		SecretHash: httpapi.HashToken(writeToken), CreatedAt: time.Now()})
	if err != nil || inserted {
		t.Fatalf("TokenInsert of a revoked secret = %v, %v; want false, nil", inserted, err)
	}
	wantStatus(t, "revoked initial token", s.do(t, "GET", "/api/workflows", writeToken, ""), 401, "")
}

func TestCredentialRoutes(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	list := func() string { return string(s.do(t, "GET", "/api/credentials", readToken, "").body) }
	wantStatus(t, "create", s.do(t, "POST", "/api/credentials", writeToken, `{"id":"gh","name":"GitHub","value":"ghp_SECRET123"}`), 200, "")
	before := list()
	if strings.Contains(before, "ghp_SECRET123") || !strings.Contains(before, `"cred_type":"api_key"`) {
		t.Errorf("list = %s", before)
	}
	long := strings.Repeat("n", 257)
	for _, tc := range []struct{ body, field string }{
		{`{"name":"n","value":"v"}`, "id"},
		{`{"id":"bad id","name":"n","value":"v"}`, "id"},
		{`{"id":"` + strings.Repeat("a", 129) + `","name":"n","value":"v"}`, "id"},
		{`{"id":"x","name":"  ","value":"v"}`, "name"},
		{`{"id":"x","name":"` + long + `","value":"v"}`, "name"},
		{`{"id":"x","name":"a\u0007b","value":"v"}`, "name"},
		{`{"id":"x","name":"n","value":""}`, "value"},
		{`{"id":"x","name":"n","value":"` + strings.Repeat("v", 65537) + `"}`, "value"},
		{`{"id":"x","name":"n","value":"v","cred_type":"password"}`, "cred_type"},
		{`{"id":"x","name":"n","value":5}`, "value"},
		{`{"id":"x","name":"n","value":"v","update":"yes"}`, "update"},
	} {
		wantStatus(t, "create "+tc.body[:min(60, len(tc.body))], s.do(t, "POST", "/api/credentials", writeToken, tc.body), 400, tc.field)
	}
	wantStatus(t, "exists", s.do(t, "POST", "/api/credentials", writeToken, `{"id":"gh","name":"Other","value":"x"}`), 409, "update")
	wantStatus(t, "update missing", s.do(t, "POST", "/api/credentials", writeToken, `{"id":"nope","name":"n","value":"v","update":true}`), 404, "")
	if got := list(); got != before {
		t.Errorf("refused writes changed the list: %s; want %s", got, before)
	}
	wantStatus(t, "update keeping the secret", s.do(t, "POST", "/api/credentials", writeToken,
		`{"id":"gh","name":"GitHub 2","value":"","cred_type":"bearer","update":true}`), 200, "")
	if v, err := s.creds.CredentialValue(t.Context(), "gh"); err != nil || v != "ghp_SECRET123" {
		t.Errorf("value after an update with an empty value = %q, %v", v, err)
	}
	if got := list(); !strings.Contains(got, `"name":"GitHub 2","cred_type":"bearer"`) {
		t.Errorf("list after update = %s", got)
	}

	// A run result masks saved credential values exactly.
	doc := `{"id":"leak","name":"Leak","nodes":[{"id":"t","node_type_id":"manual_trigger"},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"k","value":"token=ghp_SECRET123"}}],
	 "edges":[{"id":"e","from":"t","to":"s"}]}`
	s.save(t, doc)
	r := s.do(t, "POST", "/api/workflows/leak/run", writeToken, "")
	if r.status != 200 || strings.Contains(string(r.body), "ghp_SECRET123") || !strings.Contains(string(r.body), "token=***") {
		t.Errorf("run result = %d %s; want the credential value masked", r.status, r.body)
	}

	wantStatus(t, "delete", s.do(t, "DELETE", "/api/credentials/gh", writeToken, ""), 200, "")
	wantStatus(t, "delete again", s.do(t, "DELETE", "/api/credentials/gh", writeToken, ""), 404, "")
	if _, err := s.creds.CredentialValue(t.Context(), "gh"); err == nil {
		t.Error("a deleted credential still resolves")
	}
}

func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	for _, tc := range []struct {
		name, method, path, token string
		json                      bool
	}{
		{"health", "GET", "/api/health", "", true},
		{"401", "GET", "/api/workflows", "", true},
		{"unknown route", "GET", "/nope", adminToken, false},
		{"preflight", "OPTIONS", "/api/workflows", "", false},
	} {
		r := s.do(t, tc.method, tc.path, tc.token, "")
		for k, v := range map[string]string{
			"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
			"Referrer-Policy":    "strict-origin-when-cross-origin",
			"Permissions-Policy": "camera=(), microphone=(), geolocation=()",
		} {
			if got := r.header.Get(k); got != v {
				t.Errorf("%s: %s = %q; want %q", tc.name, k, got, v)
			}
		}
		if r.header.Get("Strict-Transport-Security") == "" {
			t.Errorf("%s: no Strict-Transport-Security", tc.name)
		}
		csp, cache := r.header.Get("Content-Security-Policy"), r.header.Get("Cache-Control")
		if tc.json && (csp != "default-src 'none'" || cache != "no-store") {
			t.Errorf("%s: CSP %q, Cache-Control %q on JSON", tc.name, csp, cache)
		}
	}
}

func TestCORS(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(o *httpapi.Options) { o.AllowOrigins = []string{"https://app.example.org"} })
	for _, tc := range []struct {
		origin, path string
		allowed      bool
	}{
		{"http://localhost:3000", "/api/health", true},
		{"https://127.0.0.1", "/api/health", true},
		{"http://[::1]:8080", "/api/health", true},
		{"https://app.example.org", "/api/health", true},
		{"https://APP.example.org", "/api/health", true},
		{"https://app.example.org:8443", "/api/health", false},
		{"http://app.example.org", "/api/health", false},
		{"https://evil.example", "/api/health", false},
		{"http://localhost.evil.example", "/api/health", false},
		{"null", "/api/health", false},
		{"http://localhost:3000", "/api/widget/w/mint-token", false},
		{"https://app.example.org", "/api/widget/w/mint-token", false},
	} {
		pre := s.do(t, "OPTIONS", tc.path, "", "", "Origin", tc.origin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization, content-type")
		got := pre.header.Get("Access-Control-Allow-Origin")
		if pre.status != 204 || (got == tc.origin) != tc.allowed || (!tc.allowed && got != "") {
			t.Errorf("preflight %s %s: %d, Allow-Origin %q; want allowed %v", tc.origin, tc.path, pre.status, got, tc.allowed)
		}
		if tc.allowed {
			for k, v := range map[string]string{
				"Access-Control-Allow-Methods": "GET, POST, DELETE", "Access-Control-Allow-Headers": "Authorization, Content-Type, If-Match",
				"Access-Control-Max-Age": "3600",
			} {
				if pre.header.Get(k) != v {
					t.Errorf("preflight %s: %s = %q; want %q", tc.origin, k, pre.header.Get(k), v)
				}
			}
			r := s.do(t, "GET", tc.path, "", "", "Origin", tc.origin)
			if r.header.Get("Access-Control-Allow-Origin") != tc.origin || r.header.Get("Access-Control-Expose-Headers") != "ETag, Retry-After" {
				t.Errorf("GET from %s: headers %v", tc.origin, r.header)
			}
		}
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(o *httpapi.Options) { o.RateLimit = 3 })
	for i := range 3 {
		wantStatus(t, fmt.Sprint("request ", i), s.do(t, "GET", "/api/health", "", ""), 200, "")
	}
	// Preflights are answered before the limiter and not counted.
	for range 5 {
		if r := s.do(t, "OPTIONS", "/api/workflows", "", "", "Origin", "http://localhost:1"); r.status != 204 {
			t.Errorf("preflight over the limit: %d", r.status)
		}
	}
	r := s.do(t, "GET", "/api/workflows", adminToken, "", "Origin", "http://localhost:1")
	wantStatus(t, "over the limit", r, 429, "rate limit exceeded")
	if r.header.Get("Retry-After") != "60" || r.header.Get("Access-Control-Allow-Origin") != "http://localhost:1" {
		t.Errorf("429 headers: %v", r.header)
	}
	// Without --trusted-proxy-count, X-Forwarded-For is ignored.
	wantStatus(t, "spoofed X-Forwarded-For", s.do(t, "GET", "/api/health", "", "", "X-Forwarded-For", "203.0.113.9"), 429, "")

	p := newServer(t, func(o *httpapi.Options) { o.RateLimit = 1; o.TrustedProxyCount = 1 })
	for _, tc := range []struct {
		xff    string
		status int
	}{
		{"198.51.100.1", 200},
		{"198.51.100.1", 429},
		{"10.0.0.1, 198.51.100.2", 200},
		{"198.51.100.2", 429},        // same client, one hop
		{"2001:db8::1", 200},         // IPv6 is limited per /64
		{"2001:db8::ffff:1", 429},    // same /64
		{"2001:db8:0:1::1", 200},     // another /64
		{"::ffff:198.51.100.1", 429}, // IPv4-mapped counts as IPv4
		{"198.51.100.3, 198.51.100.1", 429},
	} {
		wantStatus(t, "X-Forwarded-For "+tc.xff, p.do(t, "GET", "/api/health", "", "", "X-Forwarded-For", tc.xff), tc.status, "")
	}
}

// TestCredentialFieldsResolve: a credential-resolved field naming a saved
// credential receives its secret from the store, and the run result masks
// it.
func TestCredentialFieldsResolve(t *testing.T) {
	t.Parallel()
	reg := node.Default().Clone()
	if err := reg.Add(&node.Spec{TypeID: "key_user", Inputs: []node.Port{node.InPort}, Outputs: []node.Port{node.OutPort}, Enabled: true,
		Fields: []node.Field{{Name: "api_key", Kind: node.KindText, Credential: true}},
		New: func(c node.Config) (node.Runner, error) {
			return node.RunnerFunc(func(context.Context, node.Env) (node.Result, error) {
				k := c.String("api_key")
				return node.Result{Output: map[string]any{"length": len(k), "echo": k}}, nil
			}), nil
		}}); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, func(o *httpapi.Options) {
		o.Engine = engine.New(engine.Options{Registry: reg, Variables: o.Store.(node.VariableStore), Credentials: o.Credentials})
	})
	wantStatus(t, "save credential", s.do(t, "POST", "/api/credentials", writeToken, `{"id":"prod","name":"Prod","value":"sk-live-0123456789"}`), 200, "")
	s.save(t, `{"id":"k","name":"K","nodes":[{"id":"t","node_type_id":"manual_trigger"},
	 {"id":"u","node_type_id":"key_user","config":{"api_key":{"credential":"prod"}}}],"edges":[{"id":"e","from":"t","to":"u"}]}`)
	r := s.do(t, "POST", "/api/workflows/k/run", writeToken, "")
	m := r.json(t)
	out, _ := m["node_outputs"].(map[string]any)["u"].(map[string]any)
	if m["success"] != true || out["length"] != float64(len("sk-live-0123456789")) || out["echo"] != "***" {
		t.Errorf("run = %s; want the secret resolved (length 18) and masked", r.body)
	}
	s.save(t, `{"id":"k2","name":"K2","nodes":[{"id":"t","node_type_id":"manual_trigger"},
	 {"id":"u","node_type_id":"key_user","config":{"api_key":{"credential":"missing"}}}],"edges":[{"id":"e","from":"t","to":"u"}]}`)
	if m := s.do(t, "POST", "/api/workflows/k2/run", writeToken, "").json(t); m["success"] != false || !strings.Contains(fmt.Sprint(m["error"]), "api_key") {
		t.Errorf("a missing credential: %v; want a failed run naming api_key", m)
	}
}
