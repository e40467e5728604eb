package httpapi_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svcrun/svc/internal/credential"
	"github.com/svcrun/svc/internal/store"
)

// aclKind is how the per-token workflow ACL treats a route.
type aclKind int

const (
	aclPublic     aclKind = iota // no token
	aclPreCheck                  // 403 unless the workflow is granted
	aclFiltered                  // allowed, filtered to granted workflows
	aclUnbound                   // not bound to a workflow: allowed
	aclServerWide                // refused to restricted tokens
)

// matrixRoute is one row of the authorization matrix: how to call a route
// so that it succeeds for an admin, its scope, its ACL kind and its status
// on success.
type matrixRoute struct {
	scope string
	acl   aclKind
	ok    int
	// req returns method, path and body; n makes ids unique per call.
	req func(n int64) (method, path, body string)
}

// TestAuthorizationMatrix calls every registered route with every kind of
// principal and checks the status. A route the server registers that is
// missing here fails the test.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	const victim = "victim-token-0123456789abcdef0123456789"
	if _, err := s.st.TokenInsert(t.Context(), &store.Token{ID: tokenID(victim), Label: "victim", Scopes: []string{"read"},
		SecretHash: "victim-hash", WorkflowIDs: []string{"a", "b"}}); err != nil {
		t.Fatal(err)
	}
	fixed := func(method, path, body string) func(int64) (string, string, string) {
		return func(int64) (string, string, string) { return method, path, body }
	}
	routes := map[string]matrixRoute{
		"GET /api/health":    {"", aclPublic, 200, fixed("GET", "/api/health", "")},
		"GET /svc-widget.js": {"", aclPublic, 200, fixed("GET", "/svc-widget.js", "")},
		// The widget routes ignore bearer tokens: the secret rules (route
		// tests in widget_test.go) decide; "nojob" has no job, so 404 for all.
		"POST /api/widget/{workflow_id}/trigger":    {"", aclPublic, 404, fixed("POST", "/api/widget/nojob/trigger", `{"secret":"x"}`)},
		"POST /api/widget/{workflow_id}/mint-token": {"", aclPublic, 404, fixed("POST", "/api/widget/nojob/mint-token", `{"secret":"x"}`)},
		"GET /api/workflows":                        {"read", aclFiltered, 200, fixed("GET", "/api/workflows", "")},
		"POST /api/workflows":                       {"write", aclPreCheck, 200, fixed("POST", "/api/workflows", envelope(simple("w")))},
		"GET /api/workflows/{id}":                   {"read", aclPreCheck, 200, fixed("GET", "/api/workflows/w", "")},
		"DELETE /api/workflows/{id}":                {"write", aclPreCheck, 200, fixed("DELETE", "/api/workflows/w", "")},
		"POST /api/workflows/{id}/run":              {"write", aclPreCheck, 200, fixed("POST", "/api/workflows/w/run", "")},
		"GET /api/nodes":                            {"read", aclUnbound, 200, fixed("GET", "/api/nodes", "")},
		"POST /api/validate-workflow":               {"read", aclUnbound, 200, fixed("POST", "/api/validate-workflow", envelope(simple("x")))},
		"GET /api/events":                           {"read", aclPreCheck, 200, fixed("GET", "/api/events?workflow_id=w", "")},
		"GET /api/scheduler":                        {"read", aclFiltered, 200, fixed("GET", "/api/scheduler", "")},
		"POST /api/scheduler/{id}/start": {"write", aclPreCheck, 200, func(int64) (string, string, string) {
			if _, err := s.st.WorkflowPut(t.Context(), &store.Workflow{ID: "w", Name: "W", Doc: []byte(scheduled("w"))}, nil); err != nil {
				t.Fatal(err)
			}
			return "POST", "/api/scheduler/w/start", ""
		}},
		"POST /api/scheduler/{id}/stop": {"write", aclPreCheck, 200, fixed("POST", "/api/scheduler/w/stop", "")},
		"GET /api/credentials":          {"read", aclServerWide, 200, fixed("GET", "/api/credentials", "")},
		"POST /api/credentials": {"write", aclServerWide, 200, func(n int64) (string, string, string) {
			return "POST", "/api/credentials", fmt.Sprintf(`{"id":"c%d","name":"C","value":"v%d"}`, n, n)
		}},
		"DELETE /api/credentials/{id}": {"write", aclServerWide, 200, fixed("DELETE", "/api/credentials/keep", "")},
		"GET /api/tokens":              {"admin", aclUnbound, 200, fixed("GET", "/api/tokens", "")},
		"POST /api/tokens":             {"admin", aclUnbound, 201, fixed("POST", "/api/tokens", `{"label":"new"}`)},
		"DELETE /api/tokens/{id}":      {"admin", aclUnbound, 200, fixed("DELETE", "/api/tokens/"+tokenID(revokedToken), "")},
		"GET /api/tokens/{id}/workflows": {"admin", aclUnbound, 200,
			fixed("GET", "/api/tokens/"+tokenID(victim)+"/workflows", "")},
		"POST /api/tokens/{id}/workflows/{workflow_id}": {"admin", aclUnbound, 201,
			fixed("POST", "/api/tokens/"+tokenID(victim)+"/workflows/c", "")},
		"DELETE /api/tokens/{id}/workflows/{workflow_id}": {"admin", aclUnbound, 200,
			fixed("DELETE", "/api/tokens/"+tokenID(victim)+"/workflows/not-held", "")},
	}
	for _, rt := range s.api.Routes() {
		m, ok := routes[rt.Pattern]
		if !ok {
			t.Errorf("route %q is registered but missing from the authorization matrix", rt.Pattern)
			continue
		}
		if m.scope != rt.Scope {
			t.Errorf("route %q has scope %q; the matrix says %q", rt.Pattern, rt.Scope, m.scope)
		}
	}
	if got, want := len(s.api.Routes()), len(routes); got != want {
		t.Errorf("%d routes registered; the matrix has %d", got, want)
	}

	principals := []struct {
		name, token string
		want        func(m matrixRoute) int
	}{
		{"no token", "", func(m matrixRoute) int { return unauthenticated(m) }},
		{"expired", expiredToken, func(m matrixRoute) int { return unauthenticated(m) }},
		{"revoked", revokedToken, func(m matrixRoute) int { return unauthenticated(m) }},
		{"read", readToken, func(m matrixRoute) int { return scoped(m, "read") }},
		{"write", writeToken, func(m matrixRoute) int { return scoped(m, "read", "write") }},
		{"admin", adminToken, func(m matrixRoute) int { return m.ok }},
		{"restricted to another workflow", otherToken, func(m matrixRoute) int {
			if st := scoped(m, "read", "write"); st != m.ok {
				return st
			}
			if m.acl == aclPreCheck || m.acl == aclServerWide {
				return 403
			}
			return m.ok
		}},
		{"restricted to this workflow", thisToken, func(m matrixRoute) int {
			if st := scoped(m, "read", "write"); st != m.ok {
				return st
			}
			if m.acl == aclServerWide {
				return 403
			}
			return m.ok
		}},
	}
	var n atomic.Int64
	for pattern, m := range routes {
		for _, p := range principals {
			// Every call finds the workflow and the credential it names.
			if _, err := s.st.WorkflowPut(t.Context(), &store.Workflow{ID: "w", Name: "W", Doc: []byte(simple("w"))}, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.creds.Put(t.Context(), credential.Input{ID: "keep", Name: "K", Value: "secret-keep", Update: true}); err != nil {
				if err := s.creds.Put(t.Context(), credential.Input{ID: "keep", Name: "K", Value: "secret-keep"}); err != nil {
					t.Fatal(err)
				}
			}
			method, path, body := m.req(n.Add(1))
			r := s.do(t, method, path, p.token, body)
			if want := p.want(m); r.status != want {
				t.Errorf("%s as %s: status %d (%s); want %d", pattern, p.name, r.status, r.body, want)
			}
			if r.status == 403 && strings.Contains(pattern, "/api/tokens") && !strings.Contains(string(r.body), "admin scope required for token management") {
				t.Errorf("%s as %s: 403 body %s; want the token-management message", pattern, p.name, r.body)
			}
		}
	}
}

func unauthenticated(m matrixRoute) int {
	if m.acl == aclPublic {
		return m.ok
	}
	return 401
}

// scoped is the status for a token holding scopes: m.ok when one of them
// (or the route being public) satisfies the route, else 403.
func scoped(m matrixRoute, scopes ...string) int {
	if m.scope == "" {
		return m.ok
	}
	for _, sc := range scopes {
		if sc == m.scope {
			return m.ok
		}
	}
	return 403
}
