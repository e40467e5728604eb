package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func hook(id string, port int) string {
	return fmt.Sprintf(`{"id":%q,"name":"Hook %s","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"secret":"hush-%s"}},
	 {"id":"o","node_type_id":"output","config":{"field":"body"}}],
	 "edges":[{"id":"e1","from":"h","to":"o"}]}`, id, id, port, id)
}

// jobs lists the jobs as token sees them, keyed by workflow id.
func (s *testServer) jobs(t *testing.T, token, query string) (map[string]map[string]any, float64) {
	t.Helper()
	r := s.do(t, "GET", "/api/scheduler"+query, token, "")
	if r.status != 200 {
		t.Fatalf("list jobs: %d %s", r.status, r.body)
	}
	m := r.json(t)
	out := map[string]map[string]any{}
	for _, it := range m["items"].([]any) {
		row := it.(map[string]any)
		out[row["workflow_id"].(string)] = row
	}
	return out, m["total"].(float64)
}

func TestJobs(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	port := freePort(t)
	s.save(t, scheduled("w"))
	s.save(t, hook("w2", port))
	s.save(t, scheduled("x"))

	for _, tc := range []struct{ id, body string }{{"w", `{"always_on":true}`}, {"w2", ""}, {"x", "{}"}} {
		if r := s.do(t, "POST", "/api/scheduler/"+tc.id+"/start", writeToken, tc.body); r.status != 200 || string(r.body) != `{"ok":true}` {
			t.Fatalf("start %s: %d %s", tc.id, r.status, r.body)
		}
	}
	rows, total := s.jobs(t, readToken, "")
	if total != 3 || len(rows) != 3 {
		t.Fatalf("%v jobs: %v", total, rows)
	}
	w := rows["w"]
	for _, field := range []string{"workflow_id", "workflow_name", "trigger_kind", "status", "always_on", "run_count",
		"last_run_at", "next_run_at", "created_at", "last_error"} {
		if _, ok := w[field]; !ok {
			t.Errorf("job row has no %s: %v", field, w)
		}
	}
	next, err := time.Parse(time.RFC3339Nano, fmt.Sprint(w["next_run_at"]))
	if w["status"] != "active" || w["always_on"] != true || w["run_count"] != float64(0) || w["workflow_name"] != "Scheduled w" ||
		err != nil || time.Until(next) < 59*time.Minute || w["last_run_at"] != nil || w["last_error"] != nil {
		t.Errorf("job w = %v", w)
	}
	// trigger_kind is a JSON document in a string, with the webhook secret
	// redacted.
	var kind map[string]any
	if err := json.Unmarshal([]byte(rows["w2"]["trigger_kind"].(string)), &kind); err != nil {
		t.Fatalf("trigger_kind %v: %v", rows["w2"]["trigger_kind"], err)
	}
	if cfg, _ := kind["config"].(map[string]any); kind["type"] != "webhook" || cfg["secret"] != "<redacted>" || cfg["port"] != float64(port) {
		t.Errorf("trigger_kind = %v", kind)
	}
	if r := s.do(t, "GET", "/api/scheduler", readToken, ""); strings.Contains(string(r.body), "hush-w2") {
		t.Errorf("the webhook secret leaked: %s", r.body)
	}

	// ACL filtering precedes paging: total counts only granted workflows.
	rows, total = s.jobs(t, thisToken, "?limit=1")
	if total != 2 || len(rows) != 1 || rows["x"] != nil {
		t.Errorf("restricted list: total %v, rows %v", total, rows)
	}
	if r := s.do(t, "POST", "/api/scheduler/x/stop", thisToken, ""); r.status != 403 {
		t.Errorf("stop outside the ACL: %d", r.status)
	}

	// Stop, then start without always_on: the stored setting stays.
	if r := s.do(t, "POST", "/api/scheduler/w/stop", writeToken, ""); r.status != 200 {
		t.Fatalf("stop: %d %s", r.status, r.body)
	}
	if rows, _ := s.jobs(t, readToken, ""); rows["w"]["status"] != "stopped" || rows["w"]["next_run_at"] != nil {
		t.Errorf("stopped job = %v", rows["w"])
	}
	if r := s.do(t, "POST", "/api/scheduler/w/start", writeToken, ""); r.status != 200 {
		t.Fatalf("restart: %d %s", r.status, r.body)
	}
	if rows, _ := s.jobs(t, readToken, ""); rows["w"]["status"] != "active" || rows["w"]["always_on"] != true {
		t.Errorf("restarted job = %v", rows["w"])
	}

	// Deleting a workflow stops its job and removes its row; its port is
	// free again.
	if r := s.do(t, "DELETE", "/api/workflows/w2", writeToken, ""); r.status != 200 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	if rows, total := s.jobs(t, readToken, ""); rows["w2"] != nil || total != 2 {
		t.Errorf("jobs after delete: %v", rows)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Errorf("the deleted workflow's port is still bound: %v", err)
	} else {
		ln.Close()
	}
	for _, id := range s.sched.Jobs() {
		if id == "w2" {
			t.Error("the deleted workflow's job still runs")
		}
	}
}

func TestStartRejects(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s.save(t, simple("w"))
	s.save(t, hook("w2", taken.Addr().(*net.TCPAddr).Port))
	for _, tc := range []struct{ path, body, want string }{
		{"/api/scheduler/nope/start", "", "not found"},
		{"/api/scheduler/w/start", "", "no enabled Schedule or Webhook trigger"},
		{"/api/scheduler/w2/start", "", "not available"},
		{"/api/scheduler/w2/start", `{"port_override":80}`, "INVALID_PORT"},
		{"/api/scheduler/w2/start", `{"port_override":"x"}`, "port_override"},
		{"/api/scheduler/w2/start", `{"always_on":"yes"}`, "always_on"},
	} {
		r := s.do(t, "POST", tc.path, writeToken, tc.body)
		if r.status != 400 || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("POST %s %s: %d %s; want 400 naming %q", tc.path, tc.body, r.status, r.body, tc.want)
		}
	}
	if _, total := s.jobs(t, readToken, ""); total != 0 {
		t.Errorf("rejected starts left %v job rows", total)
	}
	// A free port given as port_override is used instead of the taken one.
	port := freePort(t)
	if r := s.do(t, "POST", "/api/scheduler/w2/start", writeToken, fmt.Sprintf(`{"port_override":%d}`, port)); r.status != 200 {
		t.Fatalf("start with port_override: %d %s", r.status, r.body)
	}
	if _, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		t.Error("port_override is not bound")
	}
}
