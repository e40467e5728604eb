package client_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/client"
	"github.com/svcrun/svc/internal/credential"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin"
	"github.com/svcrun/svc/internal/secret"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

const token = "client-test-token-0123456789abcdefghij"

func server(t *testing.T) string {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.TokenInsert(t.Context(), &store.Token{ID: "t", Label: "t", Scopes: []string{"admin"},
		SecretHash: httpapi.HashToken(token), CreatedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	box, err := secret.NewBox(make([]byte, 32))
	if err != nil {
		t.Fatal(err)
	}
	creds, err := credential.Open(t.Context(), st, box)
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(httpapi.Options{Store: st, Engine: engine.New(engine.Options{Registry: node.Default()}),
		Credentials: creds, RateLimit: -1})
	hs := httptest.NewServer(api.Handler())
	t.Cleanup(func() { hs.Close(); st.Close() })
	return hs.URL
}

const doc = `{"id":"w","name":"W","nodes":[{"id":"t","node_type_id":"manual_trigger","config":{"mock_payload":{"a":1}}},
 {"id":"o","node_type_id":"output","config":{"field":"a"}}],"edges":[{"id":"e","from":"t","to":"o"}]}`

func TestClientRoundTrip(t *testing.T) {
	t.Parallel()
	c, err := client.New(server(t), token, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if h, err := c.Health(ctx); err != nil || h.Status != "ok" || h.Version != engine.Version {
		t.Errorf("Health = %+v, %v", h, err)
	}
	v, err := c.SaveWorkflow(ctx, []byte(doc), 0)
	if err != nil || v != 1 {
		t.Fatalf("SaveWorkflow = %d, %v", v, err)
	}
	if _, err := c.SaveWorkflow(ctx, []byte(doc), 5); client.StatusOf(err) != 409 {
		t.Errorf("stale save: %v", err)
	} else if e := err.(*client.Error); e.CurrentRowVersion != 1 {
		t.Errorf("409 current_row_version = %d", e.CurrentRowVersion)
	}
	got, rv, err := c.GetWorkflow(ctx, "w")
	var m map[string]any
	if err != nil || rv != 1 || json.Unmarshal(got, &m) != nil || m["id"] != "w" {
		t.Errorf("GetWorkflow = %s, %d, %v", got, rv, err)
	}
	page, err := c.ListWorkflows(ctx, 10, 0)
	if err != nil || page.Total != 1 || page.Items[0].ID != "w" || page.Limit != 10 {
		t.Errorf("ListWorkflows = %+v, %v", page, err)
	}
	res, err := c.RunWorkflow(ctx, "w", map[string]any{"x": 1})
	if err != nil || !res.Success || string(res.NodeOutputs["o"]) == "" {
		t.Errorf("RunWorkflow = %+v, %v", res, err)
	}
	cat, err := c.Nodes(ctx)
	if err != nil || len(cat.Nodes) < 16 {
		t.Errorf("Nodes = %d, %v", len(cat.Nodes), err)
	}
	rep, err := c.Validate(ctx, []byte(doc))
	if err != nil || !rep.Valid || len(rep.ChecksRun) != 7 {
		t.Errorf("Validate = %+v, %v", rep, err)
	}
	if err := c.DeleteWorkflow(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.GetWorkflow(ctx, "w"); client.StatusOf(err) != 404 {
		t.Errorf("get after delete: %v", err)
	} else if err.(*client.Error).Message == "" {
		t.Errorf("404 with a body lost its message")
	}
}

func TestClientErrors(t *testing.T) {
	t.Parallel()
	url := server(t)
	c, _ := client.New(url, "wrong-token", client.Options{})
	if _, err := c.ListWorkflows(t.Context(), 0, 0); client.StatusOf(err) != http.StatusUnauthorized {
		t.Errorf("wrong token: %v", err)
	}
	if _, err := client.New("ftp://x", "", client.Options{}); err == nil {
		t.Errorf("ftp URL accepted")
	}
	// A redirect is not followed.
	redirect := httptest.NewServer(http.RedirectHandler(url+"/api/health", http.StatusFound))
	defer redirect.Close()
	c, _ = client.New(redirect.URL, token, client.Options{})
	if _, err := c.Health(t.Context()); client.StatusOf(err) != http.StatusFound {
		t.Errorf("redirect: %v", err)
	}
}

func TestClientTokensAndCredentials(t *testing.T) {
	t.Parallel()
	base := server(t)
	c, err := client.New(base, token, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	tok, err := c.CreateToken(ctx, client.TokenRequest{Label: "ci", Scopes: []string{"read"}, ExpiresInSecs: 60, WorkflowIDs: []string{"w"}})
	if err != nil || tok.Secret == "" || tok.ID == "" || tok.ExpiresInSecs == nil || *tok.ExpiresInSecs != 60 {
		t.Fatalf("CreateToken = %+v, %v", tok, err)
	}
	if _, err := c.CreateToken(ctx, client.TokenRequest{Label: ""}); client.StatusOf(err) != 400 {
		t.Errorf("CreateToken without a label: %v; want a 400", err)
	}
	if err := c.Grant(ctx, tok.ID, "v"); err != nil {
		t.Fatal(err)
	}
	if g, err := c.Grants(ctx, tok.ID); err != nil || len(g) != 2 {
		t.Errorf("Grants = %v, %v; want [v w]", g, err)
	}
	if err := c.Ungrant(ctx, tok.ID, "v"); err != nil {
		t.Fatal(err)
	}
	if err := c.Ungrant(ctx, tok.ID, "w"); client.StatusOf(err) != 409 {
		t.Errorf("Ungrant of the last grant: %v; want a 409", err)
	}
	restricted, _ := client.New(base, tok.Secret, client.Options{})
	if _, err := restricted.ListCredentials(ctx); client.StatusOf(err) != 403 {
		t.Errorf("restricted ListCredentials: %v; want a 403", err)
	}
	ts, err := c.ListTokens(ctx)
	if err != nil || len(ts) != 2 || ts[1].ID != tok.ID || ts[1].Secret != "" || ts[1].ExpiresAt == nil {
		t.Errorf("ListTokens = %+v, %v", ts, err)
	}
	if err := c.RevokeToken(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := restricted.ListWorkflows(ctx, 10, 0); client.StatusOf(err) != 401 {
		t.Errorf("revoked token: %v; want a 401", err)
	}

	if err := c.SaveCredential(ctx, client.CredentialRequest{ID: "k", Name: "Key", Value: "s3cret"}); err != nil {
		t.Fatal(err)
	}
	if err := c.SaveCredential(ctx, client.CredentialRequest{ID: "k", Name: "Key", Value: "x"}); client.StatusOf(err) != 409 {
		t.Errorf("second save without update: %v; want a 409", err)
	}
	if cs, err := c.ListCredentials(ctx); err != nil || len(cs) != 1 || cs[0] != (client.Credential{ID: "k", Name: "Key", CredType: "api_key"}) {
		t.Errorf("ListCredentials = %+v, %v", cs, err)
	}
	if err := c.DeleteCredential(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteCredential(ctx, "k"); client.StatusOf(err) != 404 {
		t.Errorf("second delete: %v; want a 404", err)
	}
}
