package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/scheduler"
)

// chat is a widget workflow: a Webhook trigger with cfg (extra config
// fields) and an Output that replies with the message.
func chat(id string, port int, cfg string) string {
	if cfg != "" {
		cfg = "," + cfg
	}
	return fmt.Sprintf(`{"id":%q,"name":"Chat %s","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"/chat-%s","method":"POST"%s}},
	 {"id":"r","node_type_id":"set_variable","config":{"key":"r","value":"You said: {{ $input.body.message }}"}},
	 {"id":"out","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"h","to":"r"},{"id":"e2","from":"r","to":"out"}]}`, id, id, port, id, cfg)
}

// startJob saves doc and starts its job.
func (s *testServer) startJob(t *testing.T, id, doc string) {
	t.Helper()
	s.save(t, doc)
	if r := s.do(t, "POST", "/api/scheduler/"+id+"/start", writeToken, ""); r.status != 200 {
		t.Fatalf("start %s: %d %s", id, r.status, r.body)
	}
}

func trigger(secret, message, session string) string {
	return fmt.Sprintf(`{"secret":%q,"session_id":%q,"body":{"message":%q}}`, secret, session, message)
}

// newWidgetServer switches the Code node on, so that a workflow holding
// one can be started (the widget must still refuse it), and adds a hub.
func newWidgetServer(t *testing.T, tweak func(*httpapi.Options)) *testServer {
	reg := node.Default()
	reg.SetEnabled("code", true)
	s, _ := newEventServer(t, func(o *httpapi.Options) {
		o.Engine = engine.New(engine.Options{Registry: reg, Credentials: o.Credentials, Events: o.Events})
		if tweak != nil {
			tweak(o)
		}
	})
	return s
}

func TestWidgetScript(t *testing.T) {
	t.Parallel()
	s := newServer(t, nil)
	r := s.do(t, "GET", "/svc-widget.js", "", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/javascript") ||
		r.header.Get("Cache-Control") != "public, max-age=300" || len(r.body) < 1000 {
		t.Errorf("GET /svc-widget.js = %d %v, %d bytes", r.status, r.header, len(r.body))
	}
}

// TestWidgetTriggerRules walks the seven rules of the trigger route in
// order; a request failing two rules gets the earlier one's status.
func TestWidgetTriggerRules(t *testing.T) {
	t.Parallel()
	s := newWidgetServer(t, nil)
	s.startJob(t, "chat", chat("chat", freePort(t), `"secret":"s3cret"`))
	s.startJob(t, "nosecret", chat("nosecret", freePort(t), ""))
	s.startJob(t, "sched", scheduled("sched"))
	s.startJob(t, "code", strings.Replace(chat("code", freePort(t), `"secret":"s3cret"`),
		`{"id":"out",`, `{"id":"c","node_type_id":"code","config":{"code":"output(1)"}},{"id":"out",`, 1))
	s.startJob(t, "getonly", strings.Replace(chat("getonly", freePort(t), `"secret":"s3cret"`), `"method":"POST"`, `"method":"GET"`, 1))
	s.startJob(t, "stopped", chat("stopped", freePort(t), `"secret":"s3cret"`))
	if r := s.do(t, "POST", "/api/scheduler/stopped/stop", writeToken, ""); r.status != 200 {
		t.Fatal(r.status)
	}
	s.save(t, chat("nojob", freePort(t), `"secret":"s3cret"`))

	tok, _ := s.signer.Mint("chat", "s3cret", time.Minute, time.Now())
	expired, _ := s.signer.Mint("chat", "s3cret", time.Second, time.Now().Add(-time.Hour))
	otherTok, _ := s.signer.Mint("getonly", "s3cret", time.Minute, time.Now())
	for _, tc := range []struct {
		name, id, body string
		status         int
		want           string
	}{
		{"no job (and a wrong secret)", "nojob", trigger("wrong", "hi", ""), 404, "no background job"},
		{"unknown workflow", "ghost", trigger("s3cret", "hi", ""), 404, "no background job"},
		{"job not active (and a wrong secret)", "stopped", trigger("wrong", "hi", ""), 409, "not active"},
		{"schedule trigger (and no secret)", "sched", trigger("", "hi", ""), 400, "Webhook trigger"},
		{"code node (and a wrong secret)", "code", trigger("wrong", "hi", ""), 403, "code node"},
		{"no secret configured", "nosecret", trigger("anything", "hi", ""), 400, "no secret configured"},
		{"secret not header-safe", "chat", trigger("s3cret\n", "hi", ""), 400, "visible ASCII"},
		{"secret not header-safe (non-ASCII)", "chat", trigger("sécret", "hi", ""), 400, "visible ASCII"},
		{"wrong secret", "chat", trigger("nope", "hi", ""), 401, "wrong secret"},
		{"expired token", "chat", trigger(expired, "hi", ""), 401, "expired"},
		{"token minted for another workflow", "chat", trigger(otherTok, "hi", ""), 401, "another workflow"},
		{"listener rejects the method", "getonly", trigger("s3cret", "hi", ""), 405, "path or method"},
		{"bad session id", "chat", trigger("s3cret", "hi", "a b"), 400, "session_id"},
		{"raw secret", "chat", trigger("s3cret", "hi", ""), 200, `{"ok":true,"output_node_id":"out"}`},
		{"minted token", "chat", trigger(tok, "hi", "visitor-1"), 200, `"output_node_id":"out"`},
	} {
		r := s.do(t, "POST", "/api/widget/"+tc.id+"/trigger", "", tc.body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, r.status, r.body, tc.status, tc.want)
		}
	}
	big := `{"secret":"s3cret","body":{"message":"` + strings.Repeat("x", 1<<20) + `"}}`
	if r := s.do(t, "POST", "/api/widget/chat/trigger", "", big); r.status != 413 {
		t.Errorf("a body over 1 MiB: %d %s; want 413", r.status, r.body)
	}
	// A token is not a secret to mint from.
	if r := s.do(t, "POST", "/api/widget/chat/mint-token", "", fmt.Sprintf(`{"secret":%q}`, tok)); r.status != 401 {
		t.Errorf("mint from a token: %d %s; want 401", r.status, r.body)
	}
}

// TestWidgetRelayUnreachable binds listeners away from 127.0.0.1, where
// the relay cannot reach them: 502.
func TestWidgetRelayUnreachable(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 here: %v", err)
	}
	ln.Close()
	s := newServer(t, func(o *httpapi.Options) {
		o.Scheduler = scheduler.New(scheduler.Options{Store: o.Store, Engine: o.Engine, Host: "127.0.0.2"})
	})
	s.startJob(t, "chat", chat("chat", freePort(t), `"secret":"s3cret"`))
	if r := s.do(t, "POST", "/api/widget/chat/trigger", "", trigger("s3cret", "hi", "")); r.status != 502 || !strings.Contains(string(r.body), "cannot be reached") {
		t.Errorf("unreachable listener: %d %s; want 502", r.status, r.body)
	}
}

func TestWidgetMint(t *testing.T) {
	t.Parallel()
	s := newWidgetServer(t, nil)
	s.startJob(t, "chat", chat("chat", freePort(t), `"secret":"s3cret"`))
	s.startJob(t, "chat2", chat("chat2", freePort(t), `"secret":"s3cret"`))
	s.startJob(t, "nosecret", chat("nosecret", freePort(t), ""))
	s.startJob(t, "sched", scheduled("sched"))
	for _, tc := range []struct {
		name, id, body string
		status         int
		want           string
	}{
		{"no job", "ghost", `{"secret":"s3cret"}`, 404, "no background job"},
		{"schedule trigger", "sched", `{"secret":"s3cret"}`, 400, "Webhook trigger"},
		{"no secret configured", "nosecret", `{"secret":"s3cret"}`, 400, "no secret configured"},
		{"wrong secret", "chat", `{"secret":"nope"}`, 401, "wrong secret"},
		{"ttl not a number", "chat", `{"secret":"s3cret","ttl_secs":"long"}`, 400, "ttl_secs"},
		{"default ttl", "chat", `{"secret":"s3cret"}`, 200, `"ttl_secs":300`},
		{"ttl clamped up", "chat", `{"secret":"s3cret","ttl_secs":0}`, 200, `"ttl_secs":1`},
		{"ttl clamped down", "chat", `{"secret":"s3cret","ttl_secs":999999}`, 200, `"ttl_secs":86400`},
	} {
		r := s.do(t, "POST", "/api/widget/"+tc.id+"/mint-token", "", tc.body)
		if r.status != tc.status || !strings.Contains(string(r.body), tc.want) {
			t.Errorf("%s: %d %s; want %d with %q", tc.name, r.status, r.body, tc.status, tc.want)
		}
	}
	r := s.do(t, "POST", "/api/widget/chat/mint-token", "", `{"secret":"s3cret","ttl_secs":60}`)
	m := r.json(t)
	tok, _ := m["token"].(string)
	exp, err := time.Parse(time.RFC3339, fmt.Sprint(m["expires_at"]))
	if r.status != 200 || !strings.HasPrefix(tok, "awh1.") || err != nil || time.Until(exp) > 61*time.Second || time.Until(exp) < 58*time.Second {
		t.Fatalf("mint = %d %s", r.status, r.body)
	}
	// The token works on trigger for its workflow, and for no other with
	// the same secret.
	if r := s.do(t, "POST", "/api/widget/chat/trigger", "", trigger(tok, "hi", "")); r.status != 200 {
		t.Errorf("trigger with the minted token: %d %s", r.status, r.body)
	}
	if r := s.do(t, "POST", "/api/widget/chat2/trigger", "", trigger(tok, "hi", "")); r.status != 401 {
		t.Errorf("the token on another workflow: %d %s; want 401", r.status, r.body)
	}
	// The listener itself takes the token in x-webhook-secret too.
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/chat-chat", listenerPort(t, s, "chat")), strings.NewReader(`{"message":"direct"}`))
	req.Header.Set("x-webhook-secret", tok)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("listener with the token: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// No CORS origin is ever allowed on mint-token; trigger allows loopback.
	for path, allowed := range map[string]bool{"/api/widget/chat/mint-token": false, "/api/widget/chat/trigger": true} {
		for _, method := range []string{"OPTIONS", "POST"} {
			req, _ := http.NewRequest(method, s.url+path, strings.NewReader(`{"secret":"s3cret"}`))
			req.Header.Set("Origin", "http://localhost:8000")
			req.Header.Set("Access-Control-Request-Method", "POST")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got := resp.Header.Get("Access-Control-Allow-Origin") != ""; got != allowed {
				t.Errorf("%s %s from a loopback origin: CORS allowed = %v; want %v", method, path, got, allowed)
			}
		}
	}
}

func listenerPort(t *testing.T, s *testServer, id string) int {
	t.Helper()
	tg, ok := s.sched.Target(id)
	if !ok {
		t.Fatalf("no job %s", id)
	}
	return tg.Port
}

// TestWidgetRateLimits: 20 triggers a minute per IP, 60 per workflow, 10
// mints a minute per IP.
func TestWidgetRateLimits(t *testing.T) {
	t.Parallel()
	s := newWidgetServer(t, func(o *httpapi.Options) { o.TrustedProxyCount = 1 })
	s.startJob(t, "chat", chat("chat", freePort(t), `"secret":"s3cret"`))
	post := func(path, body, ip string) int {
		req, _ := http.NewRequest("POST", s.url+path, strings.NewReader(body))
		req.Header.Set("X-Forwarded-For", ip)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Wrong secrets count as well: the limit is on attempts.
	for i := range 20 {
		if st := post("/api/widget/chat/trigger", trigger("nope", "hi", ""), "10.0.0.1"); st != 401 {
			t.Fatalf("trigger %d from one IP: %d", i+1, st)
		}
	}
	if st := post("/api/widget/chat/trigger", trigger("nope", "hi", ""), "10.0.0.1"); st != 429 {
		t.Errorf("21st trigger from one IP: %d; want 429", st)
	}
	// 20 used; 40 more from other IPs reach 60 for the workflow.
	for i := range 40 {
		if st := post("/api/widget/chat/trigger", trigger("nope", "hi", ""), fmt.Sprintf("10.0.1.%d", i)); st != 401 {
			t.Fatalf("trigger %d for the workflow: %d", 21+i, st)
		}
	}
	if st := post("/api/widget/chat/trigger", trigger("nope", "hi", ""), "10.0.2.1"); st != 429 {
		t.Errorf("61st trigger for the workflow: %d; want 429", st)
	}
	for i := range 10 {
		if st := post("/api/widget/chat/mint-token", `{"secret":"nope"}`, "10.0.3.1"); st != 401 {
			t.Fatalf("mint %d: %d", i+1, st)
		}
	}
	if st := post("/api/widget/chat/mint-token", `{"secret":"nope"}`, "10.0.3.1"); st != 429 {
		t.Errorf("11th mint from one IP: %d; want 429", st)
	}
}

// TestWidgetSessions: the reply to a widget message goes to the event
// stream of the sender's session and to no other.
func TestWidgetSessions(t *testing.T) {
	t.Parallel()
	s := newWidgetServer(t, nil)
	s.startJob(t, "chat", chat("chat", freePort(t), `"secret":"s3cret"`))
	a := s.open(t, "/api/events?workflow_id=chat&session_id=visitor-a", readToken)
	b := s.open(t, "/api/events?workflow_id=chat&session_id=visitor-b", readToken)
	if a.status != 200 || b.status != 200 {
		t.Fatalf("streams: %d, %d", a.status, b.status)
	}
	if bad := s.open(t, "/api/events?session_id=a%20b", readToken); bad.status != 400 {
		t.Errorf("a bad session_id: %d; want 400", bad.status)
	}
	for _, m := range []struct{ session, text string }{{"visitor-a", "from a"}, {"visitor-b", "from b"}} {
		if r := s.do(t, "POST", "/api/widget/chat/trigger", "", trigger("s3cret", m.text, m.session)); r.status != 200 {
			t.Fatalf("trigger: %d %s", r.status, r.body)
		}
	}
	for name, st := range map[string]*stream{"visitor-a": a, "visitor-b": b} {
		var replies []string
		for len(replies) == 0 {
			e := st.nextEvent(t)
			if e.Event != "scheduler-status" || e.Payload["last_result"] == nil {
				continue
			}
			res, _ := e.Payload["last_result"].(map[string]any)
			replies = append(replies, fmt.Sprint(res["value"]))
		}
		want := "You said: from " + name[len(name)-1:]
		if replies[0] != want {
			t.Errorf("%s got reply %q; want %q (a reply went to the wrong session)", name, replies[0], want)
		}
	}
	// A second message from a: b's stream sees none of it.
	if r := s.do(t, "POST", "/api/widget/chat/trigger", "", trigger("s3cret", "again", "visitor-a")); r.status != 200 {
		t.Fatal(r.status)
	}
	for {
		e := a.nextEvent(t)
		if e.Event == "scheduler-status" && e.Payload["last_result"] != nil {
			break
		}
	}
	select {
	case l := <-b.lines:
		if strings.Contains(l, "scheduler-status") {
			t.Errorf("b received a's event: %s", l)
		}
	case <-time.After(300 * time.Millisecond):
	}
}
