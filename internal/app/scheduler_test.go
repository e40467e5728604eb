package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/client"
)

// hookFlow is a 3-node webhook workflow: Webhook, Set Variable (doubles
// body.n), Output.
func hookFlow(id, name string, port int) string {
	return fmt.Sprintf(`{"id":%q,"name":%q,"nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"in","method":"post","secret":"hush",
	  "dedup_window_secs":60,"validate_timestamp":true}},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"x","value":"{{ $input.body.n * 2 }}"}},
	 {"id":"o","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"h","to":"s"},{"id":"e2","from":"s","to":"o"}]}`, id, name, port)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ctl runs a control command against p and returns its output and error.
func (p *proc) ctl(args ...string) (stdout, stderr string, err error) {
	cmd := exec.Command(binary, append(args, "--token", testToken)...)
	cmd.Env = append(os.Environ(), "SVC_TOKEN=", "SVC_SERVER="+p.url)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err = cmd.Run()
	return out.String(), errs.String(), err
}

// fire posts body to a webhook with the secret and a timestamp. A request
// that fails has status 0 and the error as body.
func fire(t *testing.T, url, body, secret string, ts time.Time) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if secret != "" {
		req.Header.Set("x-webhook-secret", secret)
	}
	if !ts.IsZero() {
		req.Header.Set("x-webhook-timestamp", strconv.FormatInt(ts.Unix(), 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// nextStatus reads the stream until a scheduler-status event with a
// last_result.
func nextStatus(t *testing.T, s *client.EventStream) map[string]any {
	t.Helper()
	for {
		e, err := s.Next()
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		if e.Event != "scheduler-status" {
			continue
		}
		var p map[string]any
		if err := json.Unmarshal(e.Payload, &p); err != nil {
			t.Fatal(err)
		}
		if p["last_result"] != nil {
			return p
		}
	}
}

// TestWebhookEndToEnd starts a webhook workflow's job with the start
// command (a partial name), fires it over loopback HTTP, reads its
// scheduler-status event from /api/events, checks the secret, timestamp
// and dedup rules, and that an always_on job comes back after a restart.
func TestWebhookEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, []string{"SVC_TOKEN=" + testToken}, "--data-dir", dir)
	c := p.client(t, testToken)
	port := freePort(t)
	if _, err := c.SaveWorkflow(t.Context(), []byte(hookFlow("orders-hook", "Orders intake", port)), 0); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"report-a", "report-b"} {
		if _, err := c.SaveWorkflow(t.Context(), []byte(hookFlow(id, "Weekly "+id, freePort(t))), 0); err != nil {
			t.Fatal(err)
		}
	}
	stream, err := c.Events(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	if out, errs, err := p.ctl("start", "INTAKE", "--always-on=true"); err != nil || !strings.Contains(out, "started orders-hook") {
		t.Fatalf("start: %v\n%s%s", err, out, errs)
	}
	_, errs, err := p.ctl("start", "report")
	if err == nil || !strings.Contains(errs, "report-a") || !strings.Contains(errs, "report-b") {
		t.Errorf("ambiguous start: %v; want a failure listing both candidates\n%s", err, errs)
	}
	if page, err := c.ListJobs(t.Context(), 0, 0); err != nil || page.Total != 1 {
		t.Errorf("jobs after an ambiguous start: %+v, %v", page, err)
	}

	url := fmt.Sprintf("http://127.0.0.1:%d/in", port)
	now := time.Now()
	if status, body := fire(t, url, `{"n":21}`, "hush", now); status != 200 || body != "42" {
		t.Fatalf("webhook: %d %s; want 200 42", status, body)
	}
	ev := nextStatus(t, stream)
	result, _ := ev["last_result"].(map[string]any)
	if ev["workflow_id"] != "orders-hook" || ev["trigger_type"] != "webhook" || ev["run_count"] != float64(1) ||
		result["value"] != float64(42) || ev["status"] != "waiting" {
		t.Errorf("scheduler-status = %v", ev)
	}

	for _, tc := range []struct {
		name, body, secret string
		ts                 time.Time
		status             int
		want               string
	}{
		{"repeated body", `{"n":21}`, "hush", now, 200, `"deduplicated":true`},
		{"wrong secret", `{"n":1}`, "nope", now, 401, "x-webhook-secret"},
		{"no timestamp", `{"n":1}`, "hush", time.Time{}, 400, "x-webhook-timestamp"},
		{"stale timestamp", `{"n":1}`, "hush", now.Add(-6 * time.Minute), 401, "5 minutes"},
	} {
		if status, body := fire(t, url, tc.body, tc.secret, tc.ts); status != tc.status || !strings.Contains(body, tc.want) {
			t.Errorf("%s: %d %s; want %d with %s", tc.name, status, body, tc.status, tc.want)
		}
	}
	if resp, err := http.Get(url); err != nil || resp.StatusCode != 405 {
		t.Errorf("GET on a POST webhook: %v %v; want 405", resp, err)
	}
	// The job row is written after the run, without the caller waiting.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		page, err := c.ListJobs(t.Context(), 0, 0)
		if err == nil && len(page.Items) == 1 && page.Items[0].RunCount > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job row never counted the run: %+v, %v", page, err)
		}
	}
	out, errs, err := p.ctl("list")
	if err != nil || !strings.Contains(out, "orders-hook") || !strings.Contains(out, "active") {
		t.Errorf("list: %v\n%s%s", err, out, errs)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "orders-hook") && !strings.Contains(line, " 1 ") {
			t.Errorf("list shows a run count other than 1 (dedup ran the workflow again?): %s", line)
		}
	}

	// SIGTERM, then a new server on the same data: the always_on job is
	// back on its port.
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := <-p.exited; err != nil {
		t.Fatalf("exit: %v\n%s", err, p.log())
	}
	p2 := start(t, nil, "--data-dir", dir)
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body := fire(t, url, `{"n":5}`, "hush", time.Now())
		if status == 200 && body == "10" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the always_on job did not come back: %d %s\n%s", status, body, p2.log())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if out, errs, err := p2.ctl("stop", "orders"); err != nil || !strings.Contains(out, "stopped orders-hook") {
		t.Errorf("stop: %v\n%s%s", err, out, errs)
	}
	if resp, err := http.Post(url, "application/json", strings.NewReader(`{"n":5}`)); err == nil {
		resp.Body.Close()
		t.Errorf("webhook after stop: %d; want the port closed", resp.StatusCode)
	}
}
