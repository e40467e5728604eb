package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/store"
)

func TestHealth(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	r := s.do(t, "GET", "/api/health", "", "")
	m := r.json(t)
	nb, _ := m["node_bundled"].(map[string]any)
	if r.status != 200 || m["status"] != "ok" || m["version"] == "" || nb["status"] != "error" || nb["message"] == "" {
		t.Errorf("health = %d %s", r.status, r.body)
	}
	s = newServer(t, func(o *httpapi.Options) {
		o.NodeBundled = func(context.Context) httpapi.NodeBundled {
			return httpapi.NodeBundled{Status: "ok", Version: "v20.1.0"}
		}
	})
	if m := s.do(t, "GET", "/api/health", "", "").json(t); m["node_bundled"].(map[string]any)["version"] != "v20.1.0" {
		t.Errorf("health with a runtime = %v", m)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	for _, tc := range []struct {
		name, header string
		status       int
	}{
		{"no header", "", 401},
		{"unknown token", "Bearer nope-0123456789abcdef0123456789abcdef", 401},
		{"expired", "Bearer " + expiredToken, 401},
		{"revoked", "Bearer " + revokedToken, 401},
		{"wrong scheme", "Basic " + adminToken, 401},
		{"empty bearer", "Bearer ", 401},
		{"lower-case scheme", "bearer " + readToken, 200},
		{"read", "Bearer " + readToken, 200},
	} {
		r := s.do(t, "GET", "/api/workflows", "", "", "Authorization", tc.header)
		msg := ""
		if tc.status == 401 {
			msg = "Invalid or missing token"
		}
		wantStatus(t, tc.name, r, tc.status, msg)
	}
	wantStatus(t, "read token on a write route", s.do(t, "POST", "/api/workflows", readToken, envelope(simple("w"))), 403, "write scope required")
	wantStatus(t, "read token running", s.do(t, "POST", "/api/workflows/w/run", readToken, ""), 403, "write scope required")
	wantStatus(t, "admin satisfies write", s.do(t, "POST", "/api/workflows", adminToken, envelope(simple("w"))), 200, "")
	wantStatus(t, "public route", s.do(t, "GET", "/api/health", "", ""), 200, "")
}

func TestUnknownRoute(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	r := s.do(t, "GET", "/api/no-such-route", adminToken, "")
	if r.status != 404 || len(r.body) != 0 {
		t.Errorf("unknown route: %d %q; want 404 with an empty body", r.status, r.body)
	}
	if r := s.do(t, "PUT", "/api/workflows", adminToken, "{}"); r.status != 405 {
		t.Errorf("wrong method: %d", r.status)
	}
}

func TestSaveAndGet(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	doc := `{"id":"w1","name":"One","editor":{"zoom":2},"nodes":[{"id":"t","node_type_id":"manual_trigger","ui":1}],"edges":[]}`
	r := s.do(t, "POST", "/api/workflows", writeToken, envelope(doc))
	if m := r.json(t); r.status != 200 || m["ok"] != true || m["row_version"] != 1.0 || r.header.Get("ETag") != `"1"` {
		t.Fatalf("create: %d %s etag %q", r.status, r.body, r.header.Get("ETag"))
	}
	r = s.do(t, "POST", "/api/workflows", writeToken, envelope(doc))
	if r.json(t)["row_version"] != 2.0 || r.header.Get("ETag") != `"2"` {
		t.Errorf("update without If-Match: %s", r.body)
	}
	r = s.do(t, "GET", "/api/workflows/w1", readToken, "")
	var inner string
	if err := json.Unmarshal(r.body, &inner); err != nil || r.status != 200 || r.header.Get("ETag") != `"2"` {
		t.Fatalf("get: %d %s (%v)", r.status, r.body, err)
	}
	if !strings.Contains(inner, "\n  \"id\": \"w1\"") || !strings.Contains(inner, `"editor": {`) || !strings.Contains(inner, `"ui": 1`) {
		t.Errorf("the GET body is not the pretty-printed document with unknown fields kept:\n%s", inner)
	}
	wantStatus(t, "get missing", s.do(t, "GET", "/api/workflows/nope", readToken, ""), 404, "not found")
	// Ids with unusual characters travel escaped.
	s.save(t, simple("a b/c"))
	if r := s.do(t, "GET", "/api/workflows/a%20b%2Fc", readToken, ""); r.status != 200 {
		t.Errorf("get escaped id: %d %s", r.status, r.body)
	}
}

func TestIfMatch(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.save(t, simple("w"))
	s.save(t, simple("w"))
	for _, tc := range []struct {
		name, ifMatch string
		status        int
	}{
		{"bare current", "2", 200},
		{"quoted current", `"3"`, 200},
		{"stale", "1", 409},
		{"malformed", "abc", 400},
		{"weak", `W/"4"`, 400},
		{"zero", "0", 400},
	} {
		r := s.do(t, "POST", "/api/workflows", writeToken, envelope(simple("w")), "If-Match", tc.ifMatch)
		wantStatus(t, tc.name, r, tc.status, "")
		if tc.status == 409 {
			if m := r.json(t); m["current_row_version"] != 4.0 || m["error"] == "" {
				t.Errorf("409 body = %s; want current_row_version 4", r.body)
			}
		}
	}
	wantStatus(t, "If-Match on a missing workflow", s.do(t, "POST", "/api/workflows", writeToken, envelope(simple("gone")), "If-Match", "1"), 412, "")
	if _, err := s.st.WorkflowGet(t.Context(), "gone"); err != store.ErrNotFound {
		t.Errorf("a 412 save stored the workflow: %v", err)
	}
	if w, _ := s.st.WorkflowGet(t.Context(), "w"); w.RowVersion != 4 {
		t.Errorf("row_version after the refused saves = %d; want 4", w.RowVersion)
	}
}

// TestBadInputChangesNothing sends malformed bodies and headers; each gets a
// 4xx naming the problem and the stored workflow stays as it was.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(o *httpapi.Options) { o.BodyLimit = 64 << 10 })
	s.save(t, simple("w"))
	before, _ := s.st.WorkflowGet(t.Context(), "w")
	huge := envelope(strings.Replace(simple("w"), `"tags":["t"]`, `"tags":["`+strings.Repeat("x", 70<<10)+`"]`, 1))
	for _, tc := range []struct {
		name, body, ifMatch string
		status              int
		msg                 string
	}{
		{"malformed JSON", `{"workflow_json": `, "", 400, "not a valid JSON"},
		{"not an object", `[1,2]`, "", 400, ""},
		{"empty body", ``, "", 400, "empty"},
		{"no workflow_json", `{"doc": "x"}`, "", 400, "workflow_json"},
		{"workflow_json not a string", `{"workflow_json": {"id":"w"}}`, "", 400, "workflow_json"},
		{"document not JSON", envelope(`{"id":"w","name":`), "", 400, "workflow_json"},
		{"document not a workflow", envelope(`{"id":"w","name":"W","nodes":{}}`), "", 400, "nodes"},
		{"node without type", envelope(`{"id":"w","name":"W","nodes":[{"id":"a"}]}`), "", 400, "nodes[0].node_type_id"},
		{"oversized", huge, "", 413, ""},
		{"stale If-Match", envelope(simple("w")), "7", 409, ""},
		{"malformed If-Match", envelope(simple("w")), "seven", 400, "If-Match"},
	} {
		var hdr []string
		if tc.ifMatch != "" {
			hdr = []string{"If-Match", tc.ifMatch}
		}
		wantStatus(t, tc.name, s.do(t, "POST", "/api/workflows", writeToken, tc.body, hdr...), tc.status, tc.msg)
	}
	after, _ := s.st.WorkflowGet(t.Context(), "w")
	if after.RowVersion != before.RowVersion || string(after.Doc) != string(before.Doc) {
		t.Errorf("bad requests changed the workflow: version %d -> %d", before.RowVersion, after.RowVersion)
	}
	if _, total, _ := s.st.WorkflowList(t.Context(), store.ListOptions{Limit: 10}); total != 1 {
		t.Errorf("bad requests stored workflows: %d", total)
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	for i := range 120 {
		s.save(t, simple(fmt.Sprintf("w%03d", i)))
	}
	page := func(query string) map[string]any {
		r := s.do(t, "GET", "/api/workflows"+query, readToken, "")
		if r.status != 200 {
			t.Fatalf("list%s: %d %s", query, r.status, r.body)
		}
		return r.json(t)
	}
	m := page("")
	items := m["items"].([]any)
	if len(items) != 100 || m["total"] != 120.0 || m["limit"] != 100.0 || m["offset"] != 0.0 {
		t.Errorf("default page: %d items, total %v limit %v offset %v", len(items), m["total"], m["limit"], m["offset"])
	}
	first := items[0].(map[string]any)
	if first["id"] != "w000" || first["name"] != "Simple w000" || first["updated_at"] == nil || first["tags"] == nil {
		t.Errorf("summary = %v", first)
	}
	if _, hasCollection := first["collection_id"]; !hasCollection || len(first) != 5 {
		t.Errorf("summary fields = %v; want exactly id, name, updated_at, tags, collection_id", first)
	}
	m = page("?limit=7&offset=115")
	if items := m["items"].([]any); len(items) != 5 || items[0].(map[string]any)["id"] != "w115" {
		t.Errorf("last page = %v", m)
	}
	if m = page("?limit=9999"); m["limit"] != 500.0 {
		t.Errorf("limit above the maximum = %v; want clamped to 500", m["limit"])
	}
	for _, q := range []string{"?limit=-1", "?limit=x", "?offset=-3"} {
		wantStatus(t, "list"+q, s.do(t, "GET", "/api/workflows"+q, readToken, ""), 400, "")
	}
}

func TestDeleteRemovesHistory(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.save(t, simple("w"))
	r := s.do(t, "POST", "/api/workflows/w/run", writeToken, "")
	runID := r.json(t)["execution_id"].(string)
	if _, err := s.st.RunGet(t.Context(), runID); err != nil {
		t.Fatalf("run not recorded: %v", err)
	}
	wantStatus(t, "delete", s.do(t, "DELETE", "/api/workflows/w", writeToken, ""), 200, "")
	if _, err := s.st.RunGet(t.Context(), runID); err != store.ErrNotFound {
		t.Errorf("run history after delete: %v", err)
	}
	wantStatus(t, "get deleted", s.do(t, "GET", "/api/workflows/w", readToken, ""), 404, "")
	wantStatus(t, "run deleted", s.do(t, "POST", "/api/workflows/w/run", writeToken, ""), 404, "")
	wantStatus(t, "delete again", s.do(t, "DELETE", "/api/workflows/w", writeToken, ""), 404, "")
}

func TestRun(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.save(t, simple("w"))
	r := s.do(t, "POST", "/api/workflows/w/run", writeToken, `{"initial_variables":{"k":21}}`)
	m := r.json(t)
	if r.status != 200 || m["success"] != true || m["error"] != nil || m["workflow_id"] != "w" {
		t.Fatalf("run: %d %s", r.status, r.body)
	}
	for _, k := range []string{"execution_id", "node_outputs", "logs", "validation_errors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("run result lacks %s", k)
		}
	}
	if v := m["node_outputs"].(map[string]any)["o"].(map[string]any)["value"]; v != 42.0 {
		t.Errorf("output = %v; want 42 (initial_variables)", v)
	}
	rec, err := s.st.RunGet(t.Context(), m["execution_id"].(string))
	if err != nil || rec.Status != "success" || !strings.Contains(string(rec.Result), `"node_outputs"`) {
		t.Errorf("history = %+v, %v", rec, err)
	}
	// No body at all is fine.
	wantStatus(t, "run without body", s.do(t, "POST", "/api/workflows/w/run", writeToken, ""), 200, "")
	wantStatus(t, "initial_variables not an object", s.do(t, "POST", "/api/workflows/w/run", writeToken, `{"initial_variables":[1]}`), 400, "initial_variables")
	wantStatus(t, "run missing", s.do(t, "POST", "/api/workflows/ghost/run", writeToken, ""), 404, "not found")

	// A runtime failure is 200 with success false.
	s.save(t, `{"id":"bad","name":"Bad","nodes":[{"id":"j","node_type_id":"json","config":{"operation":"parse","input_text":"{"}}],"edges":[]}`)
	r = s.do(t, "POST", "/api/workflows/bad/run", writeToken, "")
	if m := r.json(t); r.status != 200 || m["success"] != false || m["error"] == nil || m["error_code"] != "INVALID_JSON" {
		t.Errorf("failing run: %d %s", r.status, r.body)
	}
	// An invalid workflow is stored, and its run reports validation errors.
	s.save(t, `{"id":"cyc","name":"C","nodes":[{"id":"a","node_type_id":"delay"},{"id":"b","node_type_id":"delay"}],
		"edges":[{"id":"e1","from":"a","to":"b"},{"id":"e2","from":"b","to":"a"}]}`)
	if m := s.do(t, "POST", "/api/workflows/cyc/run", writeToken, "").json(t); m["success"] != false || len(m["validation_errors"].([]any)) == 0 {
		t.Errorf("invalid workflow run: %v", m)
	}
}

func TestRunUsesLatestVersion(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.save(t, simple("w"))
	s.do(t, "POST", "/api/workflows/w/run", writeToken, "")
	s.save(t, strings.Replace(simple("w"), `"n":2`, `"n":5`, 1))
	m := s.do(t, "POST", "/api/workflows/w/run", writeToken, "").json(t)
	if v := m["node_outputs"].(map[string]any)["o"].(map[string]any)["value"]; v != 5.0 {
		t.Errorf("run after an update used %v; want the new document's 5", v)
	}
}

// slow is a workflow whose run takes d.
func slow(id string, d time.Duration) string {
	return fmt.Sprintf(`{"id":%q,"name":"Slow","nodes":[{"id":"d","node_type_id":"delay","config":{"duration":%d,"unit":"ms"}}],"edges":[]}`,
		id, d.Milliseconds())
}

func TestWorkflowLock(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(o *httpapi.Options) { o.WorkflowWait = 100 * time.Millisecond })
	s.save(t, slow("w", 2*time.Second))
	s.save(t, slow("other", 0))
	done := make(chan response)
	go func() { done <- s.do(t, "POST", "/api/workflows/w/run", writeToken, "") }()
	time.Sleep(300 * time.Millisecond)
	wantStatus(t, "second run of the same workflow", s.do(t, "POST", "/api/workflows/w/run", writeToken, ""), 429, "workflow already running")
	wantStatus(t, "another workflow meanwhile", s.do(t, "POST", "/api/workflows/other/run", writeToken, ""), 200, "")
	if r := <-done; r.status != 200 {
		t.Errorf("first run: %d %s", r.status, r.body)
	}
	wantStatus(t, "after the first run", s.do(t, "POST", "/api/workflows/w/run", writeToken, ""), 200, "")
}

func TestRunSlots(t *testing.T) {
	t.Parallel()
	s := newServer(t, func(o *httpapi.Options) {
		o.MaxConcurrentRuns = 1
		o.MaxQueueWait = 100 * time.Millisecond
	})
	s.save(t, slow("a", 2*time.Second))
	s.save(t, slow("b", 0))
	done := make(chan response)
	go func() { done <- s.do(t, "POST", "/api/workflows/a/run", writeToken, "") }()
	time.Sleep(300 * time.Millisecond)
	r := s.do(t, "POST", "/api/workflows/b/run", writeToken, "")
	wantStatus(t, "no slot", r, 503, "")
	if r.header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	<-done
	wantStatus(t, "slot free again", s.do(t, "POST", "/api/workflows/b/run", writeToken, ""), 200, "")
}

func TestClientDisconnectCancelsRun(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.save(t, slow("w", 30*time.Second))
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	s.doCtx(ctx, t, "POST", "/api/workflows/w/run", writeToken, "")
	// The run is recorded as cancelled and the lock is free again.
	deadline := time.Now().Add(5 * time.Second)
	for {
		runs, _ := s.st.RunList(t.Context(), "w", store.ListOptions{Limit: 5})
		if len(runs) == 1 && runs[0].Status == "cancelled" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs after disconnect: %+v", runs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.save(t, slow("w", 0))
	wantStatus(t, "next run", s.do(t, "POST", "/api/workflows/w/run", writeToken, ""), 200, "")
}

func TestShutdownCancelsRuns(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	s.save(t, slow("w", 30*time.Second))
	done := make(chan response)
	go func() { done <- s.do(t, "POST", "/api/workflows/w/run", writeToken, "") }()
	time.Sleep(300 * time.Millisecond)
	s.api.CancelRuns()
	r := <-done
	if m := r.json(t); r.status != 200 || m["status"] != "cancelled" {
		t.Errorf("run at shutdown: %d %s", r.status, r.body)
	}
	runs, _ := s.st.RunList(t.Context(), "w", store.ListOptions{Limit: 5})
	if len(runs) != 1 || runs[0].Status != "cancelled" {
		t.Errorf("recorded: %+v", runs)
	}
}

func TestNodesAndValidate(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	r := s.do(t, "GET", "/api/nodes", readToken, "")
	m := r.json(t)
	nodes := m["nodes"].([]any)
	if r.status != 200 || m["engine_version"] == "" || len(nodes) < 16 {
		t.Fatalf("nodes: %d %v", r.status, m["engine_version"])
	}
	prev := ""
	for _, n := range nodes {
		id := n.(map[string]any)["type_id"].(string)
		if id <= prev {
			t.Errorf("catalog not sorted: %s after %s", id, prev)
		}
		prev = id
	}
	r = s.do(t, "POST", "/api/validate-workflow", readToken, envelope(simple("w")))
	if m := r.json(t); r.status != 200 || m["valid"] != true || len(m["checks_run"].([]any)) != 7 {
		t.Errorf("validate: %d %s", r.status, r.body)
	}
	r = s.do(t, "POST", "/api/validate-workflow", readToken, envelope(`{"id":"w","name":`))
	if m := r.json(t); r.status != 200 || m["valid"] != false || m["checks_run"].([]any)[0] != "parse" {
		t.Errorf("validate unparsable: %d %s", r.status, r.body)
	}
	wantStatus(t, "validate without workflow_json", s.do(t, "POST", "/api/validate-workflow", readToken, `{}`), 400, "workflow_json")
	wantStatus(t, "validate is read scope", s.do(t, "POST", "/api/validate-workflow", "", envelope(simple("w"))), 401, "")
	if _, total, _ := s.st.WorkflowList(t.Context(), store.ListOptions{Limit: 1}); total != 0 {
		t.Errorf("validate stored a workflow")
	}
}

func TestConcurrentSavesAndRuns(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			id := fmt.Sprintf("w%d", g)
			for i := range 10 {
				s.save(t, simple(id))
				r := s.do(t, "POST", "/api/workflows/"+id+"/run", writeToken, "")
				if r.status != 200 {
					t.Errorf("run %s/%d: %d %s", id, i, r.status, r.body)
				}
			}
		})
	}
	wg.Wait()
	for g := range 8 {
		w, err := s.st.WorkflowGet(t.Context(), fmt.Sprintf("w%d", g))
		runs, _ := s.st.RunList(t.Context(), fmt.Sprintf("w%d", g), store.ListOptions{Limit: 100})
		if err != nil || w.RowVersion != 10 || len(runs) != 10 {
			t.Errorf("w%d: version %v, %d runs, %v", g, w, len(runs), err)
		}
	}
	_ = http.StatusOK
}
