package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/svcrun/svc/internal/client"
)

// chatFlow is the chat workflow of examples/widget/workflow.json on port,
// with the secret s3cret.
func chatFlow(port int) string {
	return fmt.Sprintf(`{"id":"chat","name":"Chat","nodes":[
	 {"id":"in","node_type_id":"webhook","config":{"port":%d,"path":"/chat","method":"POST","secret":"s3cret"}},
	 {"id":"reply","node_type_id":"set_variable","config":{"key":"reply","value":"You said: {{ $input.body.message }}"}},
	 {"id":"out","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"in","to":"reply"},{"id":"e2","from":"reply","to":"out"}]}`, port)
}

// chromium is the browser binary of the browser tests: $SVC_CHROMIUM, or
// /usr/bin/chromium; "" when there is none.
func chromium() string {
	for _, p := range []string{os.Getenv("SVC_CHROMIUM"), "/usr/bin/chromium"} {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p
		}
	}
	return ""
}

// newBrowser starts headless Chromium for t, or skips t when there is no
// Chromium. The whole browser session is bounded by two minutes; steps
// bound themselves further with step.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium at /usr/bin/chromium (set SVC_CHROMIUM); CI installs it")
	}
	whole, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	alloc, cancel := chromedp.NewExecAllocator(whole,
		chromedp.ExecPath(bin),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1024, 768),
	)
	t.Cleanup(cancel)
	browser, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	if err := chromedp.Do(browser); err != nil {
		t.Fatalf("start Chromium %s: %v", bin, err)
	}
	return browser
}

// step is a context for one part of a browser test, bounded by d.
func step(t *testing.T, browser context.Context, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(browser, d)
	t.Cleanup(cancel)
	return ctx
}

// evalJS evaluates js in the page.
func evalJS(t *testing.T, ctx context.Context, js string) any {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[any](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// widgetPage is the example page's address on static, with the query
// parameters server, workflow=chat and secret=s3cret, changed by params
// (name, value pairs; an empty value removes the parameter).
func widgetPage(static, server string, params ...string) string {
	q := url.Values{"server": {server}, "workflow": {"chat"}, "secret": {"s3cret"}}
	for i := 0; i+1 < len(params); i += 2 {
		if params[i+1] == "" {
			q.Del(params[i])
		} else {
			q.Set(params[i], params[i+1])
		}
	}
	return static + "/index.html?" + q.Encode()
}

// bubbleAt waits for the n-th (from 1) bot or error bubble and returns it
// as "class: text": an error bubble then fails a check with its message
// instead of a timeout.
func bubbleAt(t *testing.T, ctx context.Context, n int) string {
	t.Helper()
	js := fmt.Sprintf(`(() => {
		const e = document.querySelectorAll('.svcw-msg-bot, .svcw-msg-error')[%d];
		return e ? e.className + ': ' + e.textContent : '';
	})()`, n-1)
	got, err := chromedp.Run(ctx, chromedp.Poll[string](js, chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		got := evalJS(t, ctx, `[...document.querySelectorAll('.svcw-msg')].map(e => e.className + ': ' + e.textContent).join('\n')`)
		t.Fatalf("no bubble %d: %v; the messages:\n%v", n, err, got)
	}
	return got
}

// sendMessage types text in the widget and clicks Send.
func sendMessage(t *testing.T, ctx context.Context, text string) {
	t.Helper()
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(".svcw-input"), text),
		chromedp.Click(chromedp.CSS(".svcw-send")),
	); err != nil {
		t.Fatalf("send %q: %v", text, err)
	}
}

const (
	userBubbles = `[...document.querySelectorAll('.svcw-msg-user')].map(e => e.textContent).join('|')`
	rootClass   = `document.querySelector('.svcw-root').className`
)

// TestWidgetInBrowser loads examples/widget/index.html in headless
// Chromium against a running server: a message sent from the widget comes
// back as the workflow's reply over the event stream (session routing
// included); without data-token the banner shows and the reply times out;
// data-max-length refuses a long message before sending; a wrong secret
// and a wrong event token show error bubbles; a page missing data-secret
// logs a console error and adds nothing.
func TestWidgetInBrowser(t *testing.T) {
	t.Parallel()
	browser := newBrowser(t)

	p := start(t, []string{"SVC_TOKEN=" + testToken}, "--data-dir", t.TempDir())
	c := p.client(t, testToken)
	if _, err := c.SaveWorkflow(t.Context(), []byte(chatFlow(freePort(t))), 0); err != nil {
		t.Fatal(err)
	}
	if err := c.StartJob(t.Context(), "chat", client.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	read, err := c.CreateToken(t.Context(), client.TokenRequest{Label: "widget", Scopes: []string{"read"}, WorkflowIDs: []string{"chat"}})
	if err != nil {
		t.Fatal(err)
	}
	static := httptest.NewServer(http.FileServer(http.Dir("../../examples/widget")))
	defer static.Close()
	page := func(params ...string) string { return widgetPage(static.URL, p.url, params...) }

	t.Run("reply", func(t *testing.T) {
		ctx := step(t, browser, 40*time.Second)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(page("token", read.Secret, "session", "test-session")),
			chromedp.Click(chromedp.CSS(".svcw-launcher")),
			chromedp.WaitVisible(chromedp.CSS(".svcw-panel")),
		); err != nil {
			t.Fatalf("open the widget: %v", err)
		}
		sendMessage(t, ctx, "hello")
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-bot: You said: hello"; got != want {
			t.Errorf("reply = %q; want %q\n%s", got, want, p.log())
		}
		if got := evalJS(t, ctx, userBubbles); got != "hello" {
			t.Errorf("user bubbles = %q; want hello", got)
		}
		if got := evalJS(t, ctx, `document.querySelector('.svcw-input').value`); got != "" {
			t.Errorf("input after sending = %q; want it cleared", got)
		}
		if got := evalJS(t, ctx, `document.querySelectorAll('.svcw-banner, .svcw-msg-error, .svcw-typing').length`); got != float64(0) {
			t.Errorf("%v banner, error or typing elements with a token; want none", got)
		}
		if got := evalJS(t, ctx, rootClass); got != "svcw-root svcw-theme-light" {
			t.Errorf("root class = %q; want the light theme", got)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot: %v", err)
		}
		dirs := []string{t.TempDir()}
		if d := os.Getenv("SVC_SCREENSHOT_DIR"); d != "" {
			dirs = append(dirs, d)
		}
		for _, d := range dirs {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(d, "widget.png")
			if err := os.WriteFile(path, png, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("screenshot: %s", path)
		}
	})

	t.Run("no token", func(t *testing.T) {
		ctx := step(t, browser, 30*time.Second)
		const banner = "Replies are unavailable: this widget has no event token."
		if err := chromedp.Do(ctx,
			chromedp.Navigate(page("reply_timeout_ms", "1500", "theme", "dark")),
			chromedp.Click(chromedp.CSS(".svcw-launcher")),
			chromedp.WaitVisible(chromedp.CSS(".svcw-banner")),
		); err != nil {
			t.Fatalf("open the widget: %v", err)
		}
		if got, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".svcw-banner"))); err != nil || got != banner {
			t.Errorf("banner = %q, %v; want %q", got, err, banner)
		}
		if got := evalJS(t, ctx, rootClass); got != "svcw-root svcw-theme-dark" {
			t.Errorf("root class = %q; want the dark theme", got)
		}
		// Enter sends.
		if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(".svcw-input"), "hi there\n")); err != nil {
			t.Fatalf("send with Enter: %v", err)
		}
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-error: No reply: replies are unavailable without an event token."; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		if got := evalJS(t, ctx, userBubbles); got != "hi there" {
			t.Errorf("user bubbles = %q; want hi there", got)
		}
		if got := evalJS(t, ctx, `document.querySelector('.svcw-input').value.trim()`); got != "" {
			t.Errorf("input after sending = %q; want it cleared", got)
		}
	})

	t.Run("too long", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(page("token", read.Secret, "max_length", "5")),
			chromedp.Click(chromedp.CSS(".svcw-launcher")),
		); err != nil {
			t.Fatalf("open the widget: %v", err)
		}
		sendMessage(t, ctx, "too long message")
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-error: Message is too long (16 characters; at most 5)."; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		if got := evalJS(t, ctx, `document.querySelectorAll('.svcw-msg-user').length`); got != float64(0) {
			t.Errorf("%v user bubbles; want none", got)
		}
		if got := evalJS(t, ctx, `document.querySelector('.svcw-input').value`); got != "too long message" {
			t.Errorf("input = %q; want the text kept", got)
		}
	})

	t.Run("refused", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		if err := chromedp.Do(ctx,
			chromedp.Navigate(page("secret", "wrong", "token", "svc_not-a-token-0123456789abcdefghijkl")),
			chromedp.Click(chromedp.CSS(".svcw-launcher")),
		); err != nil {
			t.Fatalf("open the widget: %v", err)
		}
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-error: Replies are unavailable: the event token was refused (HTTP 401)."; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		sendMessage(t, ctx, "hello")
		got := bubbleAt(t, ctx, 2)
		if !strings.HasPrefix(got, "svcw-msg svcw-msg-error: ") || !strings.Contains(got, "secret") {
			t.Errorf("bubble after a wrong secret = %q; want the server's error", got)
		}
	})

	t.Run("no secret", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		console, stop := context.WithCancel(ctx)
		defer stop()
		messages := chromedp.Console(console)
		if err := chromedp.Do(ctx, chromedp.Navigate(page("secret", "", "token", read.Secret))); err != nil {
			t.Fatalf("navigate: %v", err)
		}
		var logged string
		for m, err := range messages {
			if err != nil {
				t.Fatalf("no console error naming data-secret: %v", err)
			}
			if m.Type == chromedp.ConsoleError && strings.Contains(m.Text, "svc-widget") {
				logged = m.Text
				break
			}
		}
		if !strings.Contains(logged, "data-secret") || strings.Contains(logged, "data-server") || strings.Contains(logged, "data-workflow-id") {
			t.Errorf("console error = %q; want it to name data-secret only", logged)
		}
		if got := evalJS(t, ctx, `document.querySelectorAll('.svcw-launcher, .svcw-root, style[data-svcw]').length`); got != float64(0) {
			t.Errorf("%v widget elements on a page without data-secret; want none", got)
		}
	})
}

// scriptedRelay stands in for the server's widget routes (same origin as
// the page) and answers each message with a scripted event stream: the
// chunks split lines, end lines with \r\n, and mix in comments, event: and
// id: lines, other workflows and other event types.
type scriptedRelay struct {
	mu       sync.Mutex
	streams  map[string]chan []string // session id: chunks to write
	connects map[string]int           // session id: event stream requests
	done     chan struct{}            // closed at the end: the streams end
}

func statusEvent(workflow, status string, result, lastErr any) string {
	b, err := json.Marshal(map[string]any{"event": "scheduler-status", "payload": map[string]any{
		"workflow_id": workflow, "status": status, "last_result": result, "last_error": lastErr}})
	if err != nil {
		panic(err)
	}
	return string(b)
}

// onePixelPNG is a 1x1 PNG in base64.
const onePixelPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// script is the stream's answer to a message.
func (f *scriptedRelay) script(msg string) []string {
	switch msg {
	case "text":
		reply := statusEvent("chat", "waiting", map[string]any{"value": "multi\nline", "label": "", "type": "string", "output_type": "value"}, nil)
		half := len(reply) / 2
		return []string{
			"data: " + statusEvent("chat", "running", nil, nil) + "\r\n\r\n",
			": ping\n\n",
			`data: {"event":"node-status","payload":{"node_id":"out","status":"success"}}` + "\n\n",
			"data: " + statusEvent("other", "waiting", map[string]any{"value": "not for this widget"}, nil) + "\n\n",
			"event: message\nid: 7\ndata: " + reply[:half],
			reply[half:] + "\r",
			"\n\r\n",
		}
	case "object":
		reply := statusEvent("chat", "waiting", map[string]any{"value": map[string]any{"a": 1, "b": []any{true, nil}}, "output_type": "value"}, nil)
		i := strings.Index(reply, `,"payload"`)
		// Two data lines, joined by the widget with a line feed.
		return []string{"data: " + reply[:i] + "\ndata: " + reply[i:] + "\n\n"}
	case "fail":
		return []string{"data: " + statusEvent("chat", "error", nil, "boom") + "\n\n"}
	case "image":
		files := []any{
			map[string]any{"name": "pixel.png", "mime_type": "image/png", "data": onePixelPNG},
			map[string]any{"name": "report.pdf", "mime_type": "application/pdf", "data": "JVBERi0="},
		}
		return []string{"data: " + statusEvent("chat", "waiting", map[string]any{"value": map[string]any{"files": files}, "output_type": "media_batch"}, nil) + "\n\n"}
	}
	return nil
}

func (f *scriptedRelay) events(w http.ResponseWriter, r *http.Request) {
	sid := r.URL.Query().Get("session_id")
	if r.URL.Query().Get("workflow_id") != "chat" || sid == "" || r.Header.Get("Accept") != "text/event-stream" {
		http.Error(w, `{"error":"want workflow_id=chat, a session_id and Accept: text/event-stream"}`, http.StatusBadRequest)
		return
	}
	ch := make(chan []string, 8)
	f.mu.Lock()
	f.connects[sid]++
	n := f.connects[sid]
	f.streams[sid] = ch
	f.mu.Unlock()
	switch tok := r.Header.Get("Authorization"); {
	case tok == "Bearer flaky" && n == 1:
		http.Error(w, `{"error":"try later"}`, http.StatusServiceUnavailable)
		return
	case tok != "Bearer good" && tok != "Bearer flaky":
		http.Error(w, `{"error":"Invalid or missing token"}`, http.StatusUnauthorized)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	rc.Flush()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-f.done:
			return
		case chunks := <-ch:
			for _, c := range chunks {
				if _, err := w.Write([]byte(c)); err != nil {
					return
				}
				rc.Flush()
				time.Sleep(50 * time.Millisecond) // separate reads in the browser
			}
		}
	}
}

func (f *scriptedRelay) trigger(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Secret    string `json:"secret"`
		SessionID string `json:"session_id"`
		Body      struct {
			Message   string `json:"message"`
			SessionID string `json:"session_id"`
		} `json:"body"`
	}
	fail := func(status int, msg string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": msg})
	}
	if r.Header.Get("Content-Type") != "application/json" {
		fail(http.StatusUnsupportedMediaType, "want Content-Type: application/json")
		return
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	switch {
	case req.Secret != "s3cret":
		fail(http.StatusUnauthorized, "wrong secret")
		return
	case req.SessionID == "" || req.Body.SessionID != req.SessionID:
		fail(http.StatusBadRequest, fmt.Sprintf("session ids %q and %q", req.SessionID, req.Body.SessionID))
		return
	case req.Body.Message == "reject":
		fail(http.StatusBadRequest, "bad thing")
		return
	case req.Body.Message == "reject-text":
		http.Error(w, "oops", http.StatusBadGateway)
		return
	case req.Body.Message == "drop":
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	f.mu.Lock()
	ch := f.streams[req.SessionID]
	f.mu.Unlock()
	if chunks := f.script(req.Body.Message); chunks != nil && ch != nil {
		ch <- chunks
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"ok":true,"output_node_id":"out"}`))
}

// TestWidgetStreamInBrowser runs svc-widget.js in headless Chromium
// against a scripted relay: the event-stream parser (chunk boundaries,
// \r\n, multi-line data, comments, other fields, other workflows and event
// types), the typing indicator, replies as text, JSON and images, images
// refused, error statuses, trigger failures, a refused event token without
// reconnecting, a reconnect after a failed stream, and the stored session.
func TestWidgetStreamInBrowser(t *testing.T) {
	t.Parallel()
	browser := newBrowser(t)
	relay := &scriptedRelay{streams: map[string]chan []string{}, connects: map[string]int{}, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir("../../examples/widget")))
	mux.HandleFunc("GET /svc-widget.js", func(w http.ResponseWriter, r *http.Request) {
		http.ServeFile(w, r, "../httpapi/assets/svc-widget.js")
	})
	mux.HandleFunc("GET /api/events", relay.events)
	mux.HandleFunc("POST /api/widget/chat/trigger", relay.trigger)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(relay.done) // before Close, which waits for the streams
	page := func(params ...string) string { return widgetPage(srv.URL, srv.URL, params...) }
	open := func(t *testing.T, ctx context.Context, url string) {
		t.Helper()
		if err := chromedp.Do(ctx,
			chromedp.Navigate(url),
			chromedp.Click(chromedp.CSS(".svcw-launcher")),
			chromedp.WaitVisible(chromedp.CSS(".svcw-input")),
		); err != nil {
			t.Fatalf("open the widget: %v", err)
		}
	}

	t.Run("replies", func(t *testing.T) {
		ctx := step(t, browser, 40*time.Second)
		open(t, ctx, page("token", "good", "session", "s1"))
		evalJS(t, ctx, `window.typingSeen = false;
			new MutationObserver(() => { if (document.querySelector('.svcw-typing')) window.typingSeen = true; })
				.observe(document.body, {childList: true, subtree: true}); true`)
		for i, tc := range []struct{ send, want string }{
			{"text", "svcw-msg svcw-msg-bot: multi\nline"},
			{"object", `svcw-msg svcw-msg-bot: {"a":1,"b":[true,null]}`},
			{"fail", "svcw-msg svcw-msg-error: boom"},
			{"reject", "svcw-msg svcw-msg-error: bad thing"},
			{"reject-text", "svcw-msg svcw-msg-error: The message could not be sent (HTTP 502)."},
			{"drop", "svcw-msg svcw-msg-error: The server cannot be reached."},
			{"image", "svcw-msg svcw-msg-bot: report.pdf"},
		} {
			sendMessage(t, ctx, tc.send)
			if got := bubbleAt(t, ctx, i+1); got != tc.want {
				t.Errorf("%s: bubble = %q; want %q", tc.send, got, tc.want)
			}
		}
		if got := evalJS(t, ctx, `document.querySelectorAll('.svcw-msg-bot, .svcw-msg-error').length`); got != float64(7) {
			t.Errorf("%v bot and error bubbles; want 7 (another workflow's result shown?)", got)
		}
		if got := evalJS(t, ctx, `window.typingSeen && !document.querySelector('.svcw-typing')`); got != true {
			t.Errorf("typing indicator shown while running and removed on the reply = %v; want true", got)
		}
		img, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
			const i = document.querySelector('.svcw-msg-bot img.svcw-img');
			return i && i.complete && i.naturalWidth === 1 && i.alt + ' ' + i.src.slice(0, 22);
		})()`, chromedp.WithPollingTimeout(10*time.Second)))
		if err != nil || img != "pixel.png data:image/png;base64," {
			t.Errorf("image = %q, %v; want pixel.png decoded from a data: URL", img, err)
		}
	})

	t.Run("images off", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		open(t, ctx, page("token", "good", "session", "s2", "allow_images", "false"))
		sendMessage(t, ctx, "image")
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-bot: pixel.png\nreport.pdf"; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		if got := evalJS(t, ctx, `document.querySelectorAll('img').length`); got != float64(0) {
			t.Errorf("%v images with data-allow-images=false; want none", got)
		}
	})

	t.Run("token refused", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		open(t, ctx, page("token", "bad", "session", "s3"))
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-error: Replies are unavailable: the event token was refused (HTTP 401)."; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		time.Sleep(2500 * time.Millisecond) // past two backoff steps
		relay.mu.Lock()
		n := relay.connects["s3"]
		relay.mu.Unlock()
		if n != 1 {
			t.Errorf("%d event stream requests after a 401; want 1 (no reconnecting)", n)
		}
		if got := evalJS(t, ctx, `document.querySelectorAll('.svcw-msg').length`); got != float64(1) {
			t.Errorf("%v bubbles; want the one error", got)
		}
	})

	t.Run("reconnect", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		open(t, ctx, page("token", "flaky", "session", "s4"))
		sendMessage(t, ctx, "text") // waits for the stream, up to 3 s
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-bot: multi\nline"; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		relay.mu.Lock()
		n := relay.connects["s4"]
		relay.mu.Unlock()
		if n != 2 {
			t.Errorf("%d event stream requests; want 2 (a 503, then a reconnect)", n)
		}
	})

	t.Run("stored session", func(t *testing.T) {
		ctx := step(t, browser, 20*time.Second)
		open(t, ctx, page("token", "good"))
		sid := evalJS(t, ctx, `localStorage.getItem('svc-widget-session:chat')`)
		if s, _ := sid.(string); len(s) < 16 {
			t.Fatalf("stored session id = %v; want a generated one", sid)
		}
		sendMessage(t, ctx, "text")
		if got, want := bubbleAt(t, ctx, 1), "svcw-msg svcw-msg-bot: multi\nline"; got != want {
			t.Errorf("bubble = %q; want %q", got, want)
		}
		open(t, ctx, page("token", "good"))
		if again := evalJS(t, ctx, `localStorage.getItem('svc-widget-session:chat')`); again != sid {
			t.Errorf("session id after a reload = %v; want %v kept", again, sid)
		}
		relay.mu.Lock()
		n := relay.connects[sid.(string)]
		relay.mu.Unlock()
		if n != 2 {
			t.Errorf("%d event streams of the stored session; want 2 (one per page load)", n)
		}
	})
}
