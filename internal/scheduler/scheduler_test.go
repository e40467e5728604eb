package scheduler_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

// recorder collects published events.
type recorder struct {
	mu     sync.Mutex
	events []event
	wake   chan struct{}
}

type event struct {
	typ, workflowID string
	payload         map[string]any
}

func newRecorder() *recorder { return &recorder{wake: make(chan struct{}, 1)} }

func (r *recorder) Publish(e events.Event) {
	r.mu.Lock()
	r.events = append(r.events, event{e.Type, e.WorkflowID, e.Payload.(map[string]any)})
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// wait returns the first event after index from that matches, waiting up
// to 10 seconds.
func (r *recorder) wait(t *testing.T, match func(event) bool) event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		for _, e := range r.events {
			if match(e) {
				r.mu.Unlock()
				return e
			}
		}
		r.mu.Unlock()
		select {
		case <-r.wake:
		case <-deadline:
			t.Fatalf("no matching event; got %v", r.all())
		}
	}
}

func (r *recorder) all() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// resultValue is the value of a status event's last_result (an Output
// node's output), as text.
func resultValue(ev event) string {
	m, _ := ev.payload["last_result"].(map[string]any)
	return fmt.Sprint(m["value"])
}

type fixture struct {
	st  *sqlite.Store
	s   *scheduler.Scheduler
	rec *recorder
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	s := scheduler.New(scheduler.Options{Store: st, Engine: engine.New(engine.Options{Registry: node.Default(), Variables: st}), Events: rec})
	t.Cleanup(func() {
		s.Close(context.Background())
		st.Close()
	})
	return &fixture{st, s, rec}
}

func (f *fixture) save(t *testing.T, doc string) {
	t.Helper()
	var m struct {
		ID, Name string
	}
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	if _, err := f.st.WorkflowPut(t.Context(), &store.Workflow{ID: m.ID, Name: m.Name, Doc: []byte(doc)}, nil); err != nil {
		t.Fatal(err)
	}
}

// row waits up to 10 seconds for the stored job row to satisfy ok.
func (f *fixture) row(t *testing.T, id string, ok func(*store.Job) bool) *store.Job {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r, err := f.st.JobGet(t.Context(), id)
		if err == nil && ok(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s = %+v, %v; the awaited state never came", id, r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// freePort returns a port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// hookDoc is a webhook workflow: webhook, set_variable from the body,
// output of the variable.
func hookDoc(id string, port int, cfg string) string {
	if cfg != "" {
		cfg = "," + cfg
	}
	return fmt.Sprintf(`{"id":%q,"name":"Hook %s","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"hook-%s"%s}},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"got","value":"{{ $input.body.n * 2 }}"}},
	 {"id":"o","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"h","to":"s"},{"id":"e2","from":"s","to":"o"}]}`, id, id, port, id, cfg)
}

func post(t *testing.T, url, body string, headers ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, hookDoc("w", port, `"secret":"s3cret","method":"post","dedup_window_secs":60`))
	if err := f.s.Start(t.Context(), "w", nil, nil); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/hook-w", port)
	for _, tc := range []struct {
		name, url, method, body, secret string
		status                          int
	}{
		{"wrong secret", url, "POST", `{"n":1}`, "nope", 401},
		{"no secret", url, "POST", `{"n":1}`, "", 401},
		{"wrong path", url + "x", "POST", `{"n":1}`, "s3cret", 404},
		{"wrong method", url, "PUT", `{"n":1}`, "s3cret", 405},
		{"too big", url, "POST", `{"n":"` + strings.Repeat("x", 1<<20) + `"}`, "s3cret", 413},
	} {
		req, _ := http.NewRequestWithContext(t.Context(), tc.method, tc.url, strings.NewReader(tc.body))
		req.Header.Set("x-webhook-secret", tc.secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s: status %d; want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
	status, body := post(t, url, `{"n":21}`, "x-webhook-secret", "s3cret")
	if status != 200 || body != "42" {
		t.Errorf("webhook = %d %s; want 200 42", status, body)
	}
	// The same body inside the dedup window does not run again.
	status, body = post(t, url, `{"n":21}`, "x-webhook-secret", "s3cret")
	if status != 200 || !strings.Contains(body, "deduplicated") {
		t.Errorf("repeat = %d %s; want 200 deduplicated", status, body)
	}
	// The row is written after the response, without the run waiting.
	row := f.row(t, "w", func(r *store.Job) bool { return r.RunCount > 0 })
	if row.RunCount != 1 || row.Status != store.JobActive || row.LastRunAt == nil {
		t.Errorf("job row = %+v; want one run, active", row)
	}
	ev := f.rec.wait(t, func(e event) bool { return e.typ == events.TypeSchedulerStatus && e.payload["last_result"] != nil })
	if ev.workflowID != "w" || resultValue(ev) != "42" || ev.payload["trigger_type"] != "webhook" || ev.payload["run_count"] != int64(1) {
		t.Errorf("status event = %+v", ev)
	}
	runs, err := f.st.RunList(t.Context(), "w", store.ListOptions{Limit: 10})
	if err != nil || len(runs) != 1 || runs[0].Trigger != "webhook" {
		t.Errorf("runs = %+v, %v", runs, err)
	}
}

func TestWebhookTimestampAndFiles(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, fmt.Sprintf(`{"id":"ts","name":"TS","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"/in","validate_timestamp":true}},
	 {"id":"o","node_type_id":"output","config":{}}],
	 "edges":[{"id":"e1","from":"h","to":"o"}]}`, port))
	if err := f.s.Start(t.Context(), "ts", nil, nil); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/in", port)
	now := time.Now()
	for _, tc := range []struct {
		ts     string
		status int
	}{
		{"", 400},
		{"yesterday", 400},
		{strconv.FormatInt(now.Add(-6*time.Minute).Unix(), 10), 401},
		{strconv.FormatInt(now.Add(6*time.Minute).Unix(), 10), 401},
		{now.Add(-10 * time.Minute).UTC().Format(time.RFC3339), 401},
		{strconv.FormatInt(now.Unix(), 10), 200},
		{strconv.FormatInt(now.UnixMilli(), 10), 200},
		{now.UTC().Format(time.RFC3339), 200},
	} {
		if status, body := post(t, url, `{}`, "x-webhook-timestamp", tc.ts); status != tc.status {
			t.Errorf("timestamp %q: %d %s; want %d", tc.ts, status, body, tc.status)
		}
	}
	data := base64.StdEncoding.EncodeToString([]byte("hello"))
	status, body := post(t, url, `{"attachments":[{"filename":"a.txt","content_type":"text/plain","data":"`+data+`"},"junk"]}`,
		"x-webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	var out map[string]any
	json.Unmarshal([]byte(body), &out)
	files, _ := out["files"].([]any)
	reqBody, _ := out["body"].(map[string]any)
	atts, _ := reqBody["attachments"].([]any)
	if status != 200 || len(files) != 1 || len(atts) != 2 {
		t.Fatalf("attachments = %d %s", status, body)
	}
	file := files[0].(map[string]any)
	if file["name"] != "a.txt" || file["mime_type"] != "text/plain" || file["data"] != data || file["size"] != float64(5) {
		t.Errorf("file = %v", file)
	}
	if out["method"] != "POST" || out["path"] != "/in" {
		t.Errorf("request fields = %v", out)
	}
}

func TestWebhookSharedPortAndStop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, hookDoc("a", port, ""))
	f.save(t, hookDoc("b", port, ""))
	for _, id := range []string{"a", "b"} {
		if err := f.s.Start(t.Context(), id, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range []string{"a", "b"} {
		if status, body := post(t, fmt.Sprintf("http://127.0.0.1:%d/hook-%s", port, id), `{"n":1}`); status != 200 || body != "2" {
			t.Errorf("%s: %d %s", id, status, body)
		}
	}
	if err := f.s.Stop(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if status, _ := post(t, fmt.Sprintf("http://127.0.0.1:%d/hook-a", port), `{"n":1}`); status != 404 {
		t.Errorf("stopped path: %d; want 404", status)
	}
	if row, _ := f.st.JobGet(t.Context(), "a"); row == nil || row.Status != store.JobStopped {
		t.Errorf("stopped row = %+v", row)
	}
	if err := f.s.Stop(t.Context(), "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		t.Error("the port still listens after its last job stopped")
	}
}

func TestStartRejects(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	takenPort := taken.Addr().(*net.TCPAddr).Port
	f.save(t, hookDoc("busy", takenPort, ""))
	f.save(t, hookDoc("low", 80, ""))
	f.save(t, `{"id":"manual","name":"M","nodes":[{"id":"t","node_type_id":"manual_trigger"}],"edges":[]}`)
	f.save(t, `{"id":"cron","name":"C","nodes":[{"id":"t","node_type_id":"schedule","config":{"mode":"cron","cron_expr":"61 * * * *"}}],"edges":[]}`)
	f.save(t, fmt.Sprintf(`{"id":"invalid","name":"I","nodes":[{"id":"h","node_type_id":"webhook","config":{"port":%d}},
	 {"id":"a","node_type_id":"output"},{"id":"b","node_type_id":"output"},{"id":"o","node_type_id":"output"}],
	 "edges":[{"id":"e1","from":"h","to":"a"},{"id":"e2","from":"h","to":"b"},{"id":"e3","from":"a","to":"o"},{"id":"e4","from":"b","to":"o"}]}`, freePort(t)))
	f.save(t, `{"id":"past","name":"P","nodes":[{"id":"t","node_type_id":"schedule","config":{"mode":"once","run_at":"2001-01-01T00:00:00Z"}}],"edges":[]}`)
	low := 80
	for _, tc := range []struct {
		id   string
		port *int
		want string
	}{
		{"missing", nil, "not found"},
		{"manual", nil, "no enabled Schedule or Webhook trigger"},
		{"busy", nil, "not available"},
		{"low", nil, "INVALID_PORT"},
		{"busy", &low, "INVALID_PORT"},
		{"cron", nil, "cron_expr"},
		{"past", nil, "never fire"},
		{"invalid", nil, "is not valid: port_arity"},
	} {
		err := f.s.Start(t.Context(), tc.id, nil, tc.port)
		var rej *scheduler.RejectError
		if !errors.As(err, &rej) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("start %s: %v; want a rejection mentioning %q", tc.id, err, tc.want)
		}
		if _, err := f.st.JobGet(t.Context(), tc.id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("start %s: a rejected start left a job row (%v)", tc.id, err)
		}
	}
	if jobs := f.s.Jobs(); len(jobs) != 0 {
		t.Errorf("jobs after rejections: %v", jobs)
	}
}

func TestOnceAndRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	at := time.Now().Add(1500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	f.save(t, `{"id":"once","name":"Once","nodes":[{"id":"t","node_type_id":"schedule","config":{"mode":"once","run_at":"`+at+`"}},
	 {"id":"o","node_type_id":"output","config":{"field":"mode"}}],"edges":[{"id":"e","from":"t","to":"o"}]}`)
	on := true
	if err := f.s.Start(t.Context(), "once", &on, nil); err != nil {
		t.Fatal(err)
	}
	ev := f.rec.wait(t, func(e event) bool { return e.typ == events.TypeSchedulerStatus && e.payload["status"] == "done" })
	if resultValue(ev) != "once" || ev.payload["run_count"] != int64(1) {
		t.Errorf("done event = %+v", ev.payload)
	}
	row, err := f.st.JobGet(t.Context(), "once")
	if err != nil || row.Status != store.JobDone || !row.AlwaysOn {
		t.Errorf("row after firing = %+v, %v", row, err)
	}
}

// TestIntervalAndOverlap runs two interval jobs on the fake clock of a
// synctest bubble: one fires every 10 seconds on time; the other runs for
// 25 seconds, so the firings that come while it runs are skipped, never
// queued.
func TestIntervalAndOverlap(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), sqlite.FileName), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		rec := newRecorder()
		s := scheduler.New(scheduler.Options{Store: st, Engine: engine.New(engine.Options{Registry: node.Default(), Variables: st}), Events: rec})
		defer s.Close(context.Background())
		f := &fixture{st, s, rec}
		f.save(t, `{"id":"tick","name":"Tick","nodes":[{"id":"t","node_type_id":"schedule","config":{"interval_secs":10}},
		 {"id":"o","node_type_id":"output","config":{"field":"scheduled_at"}}],"edges":[{"id":"e","from":"t","to":"o"}]}`)
		f.save(t, `{"id":"slow","name":"Slow","nodes":[{"id":"t","node_type_id":"schedule","config":{"mode":"interval","interval_secs":3}},
		 {"id":"d","node_type_id":"delay","config":{"duration":25}}],"edges":[{"id":"e","from":"t","to":"d"}]}`)
		start := time.Now()
		for _, id := range []string{"tick", "slow"} {
			if err := s.Start(t.Context(), id, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(45 * time.Second)
		synctest.Wait()

		var ticks []string
		skips, slowRuns := 0, 0
		for _, e := range rec.all() {
			switch {
			case e.typ == events.TypeSchedulerStatus && e.workflowID == "tick" && e.payload["status"] == "waiting" && e.payload["last_result"] != nil:
				ticks = append(ticks, resultValue(e))
			case e.typ == events.TypeSchedulerSkip && e.workflowID == "slow":
				skips++
			case e.typ == events.TypeSchedulerStatus && e.workflowID == "slow" && e.payload["status"] == "running":
				slowRuns++
			}
		}
		var want []string
		for i := 1; i <= 4; i++ {
			want = append(want, start.Add(time.Duration(i)*10*time.Second).UTC().Format(time.RFC3339Nano))
		}
		if fmt.Sprint(ticks) != fmt.Sprint(want) {
			t.Errorf("tick fired at %v; want %v", ticks, want)
		}
		// interval_secs 3 becomes 10: runs at 10 s (until 35 s) and 40 s;
		// the firings at 20 s and 30 s are skipped.
		if slowRuns != 2 || skips != 2 {
			t.Errorf("slow: %d runs, %d skips; want 2 and 2", slowRuns, skips)
		}
		warned := false
		for _, e := range rec.all() {
			warned = warned || e.typ == events.TypeSchedulerWarning && e.workflowID == "slow" && strings.Contains(fmt.Sprint(e.payload["message"]), "every 10 seconds")
		}
		if !warned {
			t.Error("no scheduler-warning for interval_secs 3")
		}
		row, err := st.JobGet(t.Context(), "tick")
		if err != nil || row.RunCount != 4 || row.Status != store.JobActive || row.NextRunAt == nil ||
			row.NextRunAt.Sub(start.Add(50*time.Second)).Abs() >= time.Millisecond {
			t.Errorf("tick row = %+v, %v; want 4 runs, active, next at %v (the store keeps milliseconds)", row, err, start.Add(50*time.Second))
		}
	})
}

// TestResume restarts the scheduler on the same store: the always_on job
// comes back, the other is paused, and scheduler-ready counts the jobs.
func TestResume(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, hookDoc("keep", port, `"secret":"s3cret"`))
	f.save(t, `{"id":"drop","name":"Drop","nodes":[{"id":"t","node_type_id":"schedule","config":{"interval_secs":3600}}],"edges":[]}`)
	on, off := true, false
	if err := f.s.Start(t.Context(), "keep", &on, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Start(t.Context(), "drop", &off, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
		t.Fatal("the listener still accepts after Close")
	}

	rec := newRecorder()
	s := scheduler.New(scheduler.Options{Store: f.st, Engine: engine.New(engine.Options{Registry: node.Default(), Variables: f.st}), Events: rec})
	defer s.Close(context.Background())
	if err := s.Resume(t.Context()); err != nil {
		t.Fatal(err)
	}
	ready := rec.wait(t, func(e event) bool { return e.typ == events.TypeSchedulerReady })
	if ready.workflowID != "" || ready.payload["job_count"] != 1 {
		t.Errorf("ready = %+v", ready)
	}
	if status, body := post(t, fmt.Sprintf("http://127.0.0.1:%d/hook-keep", port), `{"n":4}`, "x-webhook-secret", "s3cret"); status != 200 || body != "8" {
		t.Errorf("resumed webhook: %d %s", status, body)
	}
	for id, want := range map[string]string{"keep": store.JobActive, "drop": store.JobPaused} {
		if row, err := f.st.JobGet(t.Context(), id); err != nil || row.Status != want {
			t.Errorf("%s after restart = %+v, %v; want %s", id, row, err, want)
		}
	}
	// start without always_on keeps the stored setting.
	if err := s.Start(t.Context(), "drop", nil, nil); err != nil {
		t.Fatal(err)
	}
	if row, _ := f.st.JobGet(t.Context(), "keep"); !row.AlwaysOn {
		t.Error("always_on was lost")
	}
	if row, _ := f.st.JobGet(t.Context(), "drop"); row.AlwaysOn || row.Status != store.JobActive {
		t.Errorf("drop restarted = %+v", row)
	}
}

// TestWebhookErrorPort sends a body declared as JSON that does not parse:
// the request leaves the trigger through its Error port.
func TestWebhookErrorPort(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, fmt.Sprintf(`{"id":"ep","name":"EP","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"/in"}},
	 {"id":"good","node_type_id":"set_variable","config":{"key":"r","value":"good {{ $input.method }}"}},
	 {"id":"bad","node_type_id":"set_variable","config":{"key":"r","value":"bad {{ $input.error.code }}"}},
	 {"id":"o1","node_type_id":"output","config":{"field":"value"}},
	 {"id":"o2","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"h","to":"good"},{"id":"e2","from":"h","from_port":"error","to":"bad"},
	  {"id":"e3","from":"good","to":"o1"},{"id":"e4","from":"bad","to":"o2"}]}`, port))
	if err := f.s.Start(t.Context(), "ep", nil, nil); err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/in", port)
	for _, tc := range []struct{ body, ctype, want string }{
		{`{"n":1}`, "application/json", `"good POST"`},
		{`{"n":`, "application/json; charset=utf-8", `"bad INVALID_BODY"`},
		{`{"n":`, "text/plain", `"good POST"`}, // not sent as JSON: the body is text
	} {
		status, body := post(t, url, tc.body, "Content-Type", tc.ctype)
		if status != 200 || body != tc.want {
			t.Errorf("%s as %s: %d %s; want 200 %s", tc.body, tc.ctype, status, body, tc.want)
		}
	}
}

// TestSaved restarts a job on its saved workflow: a new path takes over
// at once, and a version without a trigger ends the job in error.
func TestSaved(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, hookDoc("s", port, ""))
	if err := f.s.Start(t.Context(), "s", nil, nil); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if status, body := post(t, base+"/hook-s", `{"n":2}`); status != 200 || body != "4" {
		t.Fatalf("before the save: %d %s", status, body)
	}
	f.save(t, strings.Replace(hookDoc("s", port, ""), `"path":"hook-s"`, `"path":"moved"`, 1))
	f.s.Saved(t.Context(), "s")
	if status, _ := post(t, base+"/hook-s", `{"n":2}`); status != 404 {
		t.Errorf("old path after the save: %d; want 404", status)
	}
	if status, body := post(t, base+"/moved", `{"n":3}`); status != 200 || body != "6" {
		t.Errorf("new path after the save: %d %s", status, body)
	}
	f.save(t, `{"id":"s","name":"S","nodes":[{"id":"t","node_type_id":"manual_trigger"}],"edges":[]}`)
	f.s.Saved(t.Context(), "s")
	ev := f.rec.wait(t, func(e event) bool { return e.typ == events.TypeSchedulerError && e.workflowID == "s" })
	if !strings.Contains(fmt.Sprint(ev.payload["message"]), "no enabled Schedule or Webhook trigger") {
		t.Errorf("error event = %v", ev.payload)
	}
	if row := f.row(t, "s", func(r *store.Job) bool { return r.Status != store.JobActive }); row.Status != store.JobError || row.LastError == nil {
		t.Errorf("row after an unschedulable save = %+v", row)
	}
	if _, err := net.DialTimeout("tcp", base[len("http://"):], time.Second); err == nil {
		t.Error("the port still listens after the job ended")
	}
}

// TestCloseDuringRuns closes the scheduler while webhook requests and
// their runs are in flight: Close waits for them, nothing starts after it,
// and nothing races (run with -race).
func TestCloseDuringRuns(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, fmt.Sprintf(`{"id":"slow","name":"Slow","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"/in"}},
	 {"id":"d","node_type_id":"delay","config":{"duration":100,"unit":"ms"}}],
	 "edges":[{"id":"e1","from":"h","to":"d"}]}`, port))
	if err := f.s.Start(t.Context(), "slow", nil, nil); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/in", port), strings.NewReader(fmt.Sprintf(`{"i":%d}`, i)))
			if i%2 == 0 {
				req.Header.Set(scheduler.SessionHeader, "s") // relayed: answered at once, run in the background
			}
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	time.Sleep(30 * time.Millisecond)
	done := make(chan error, 1)
	go func() { done <- f.s.Close(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with runs in flight")
	}
	wg.Wait()
	if err := f.s.Start(t.Context(), "slow", nil, nil); !errors.Is(err, scheduler.ErrClosed) {
		t.Errorf("Start after Close = %v; want ErrClosed", err)
	}
}

// TestWebhookAnswers: a run still going at timeout_secs answers 202 and
// goes on (its output arrives as a scheduler-status event); a failed run
// answers 500 with its error.
func TestWebhookAnswers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	port := freePort(t)
	f.save(t, fmt.Sprintf(`{"id":"slow","name":"Slow","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"/slow","timeout_secs":1}},
	 {"id":"d","node_type_id":"delay","config":{"duration":1500,"unit":"ms"}},
	 {"id":"o","node_type_id":"output","config":{"field":"body"}}],
	 "edges":[{"id":"e1","from":"h","to":"d"},{"id":"e2","from":"d","to":"o"}]}`, port))
	f.save(t, hookDoc("bad", port, ""))
	for _, id := range []string{"slow", "bad"} {
		if err := f.s.Start(t.Context(), id, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	if status, body := post(t, base+"/slow", `{"n":7}`); status != 202 || !strings.Contains(body, "scheduler-status") {
		t.Errorf("run past timeout_secs: %d %s; want 202", status, body)
	}
	ev := f.rec.wait(t, func(e event) bool {
		return e.typ == events.TypeSchedulerStatus && e.workflowID == "slow" && e.payload["last_result"] != nil
	})
	if got := fmt.Sprint(ev.payload["last_result"].(map[string]any)["value"]); got != "map[n:7]" {
		t.Errorf("the late run's result = %s", got)
	}
	// body.n is text: the expression fails, and so does the run.
	if status, body := post(t, base+"/hook-bad", `{"n":"x"}`); status != 500 || !strings.Contains(body, `"execution_id"`) || !strings.Contains(body, `"error"`) {
		t.Errorf("failed run: %d %s; want 500 with the error", status, body)
	}
}
