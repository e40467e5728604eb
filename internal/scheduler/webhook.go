package scheduler

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/nodes/trigger"
	"github.com/svcrun/svc/internal/value"
	"github.com/svcrun/svc/internal/workflow"
)

// MaxTimestampAge is how old an x-webhook-timestamp may be.
const MaxTimestampAge = 5 * time.Minute

// SessionHeader marks a request relayed by the widget route: the listener
// answers 202 at once, and the run's scheduler-status events go only to
// the event streams of the session it names.
const SessionHeader = "X-Svc-Widget-Session"

// SecretOK compares a request's x-webhook-secret with the configured
// secret in constant time, or verifies it as a widget token minted from
// that secret for this workflow. The widget route checks with it too.
func (s *Scheduler) SecretOK(workflowID, secret, given string) bool {
	if subtle.ConstantTimeCompare([]byte(given), []byte(secret)) == 1 {
		return true
	}
	return s.opts.Tokens != nil && s.opts.Tokens.Verify(workflowID, secret, given, time.Now()) == nil
}

// hookConfig is a Webhook trigger's decoded config.
type hookConfig struct {
	path, method, secret string
	timeout, dedup       time.Duration
	validateTimestamp    bool
}

func newHookConfig(c node.Config) *hookConfig {
	return &hookConfig{
		path:              trigger.WebhookPath(c.String("path")),
		method:            strings.ToUpper(c.String("method")),
		secret:            c.String("secret"),
		timeout:           time.Duration(c.Int("timeout_secs")) * time.Second,
		dedup:             time.Duration(c.Int("dedup_window_secs")) * time.Second,
		validateTimestamp: c.Bool("validate_timestamp"),
	}
}

// triggerJSON is the stored form of a job's trigger.
func triggerJSON(n *workflow.Node) []byte {
	b, _ := json.Marshal(map[string]any{"type": n.NodeTypeID, "node_id": n.ID, "config": n.Config})
	return b
}

// RedactTrigger returns a stored trigger as shown by the API: a Webhook
// secret is replaced by <redacted>.
func RedactTrigger(stored []byte) string {
	var t map[string]any
	if json.Unmarshal(stored, &t) != nil {
		return string(stored)
	}
	if cfg, ok := t["config"].(map[string]any); ok {
		if _, has := cfg["secret"]; has {
			cfg["secret"] = "<redacted>"
		}
	}
	b, _ := json.Marshal(t)
	return string(b)
}

// listener is a Webhook port: one HTTP server on Host:port shared by the
// jobs listening on it, each on its own path.
type listener struct {
	s     *Scheduler
	port  int
	srv   *http.Server
	mu    sync.RWMutex
	paths map[string]*job
}

// listen registers a webhook job's path on its port, binding the port
// first if no job listens there yet. s.mu is held.
func (s *Scheduler) listen(j *job) error {
	l := s.listeners[j.port]
	if l == nil {
		ln, err := net.Listen("tcp", net.JoinHostPort(s.opts.Host, strconv.Itoa(j.port)))
		if err != nil {
			return reject("port %d is not available: %v", j.port, err)
		}
		l = &listener{s: s, port: j.port, paths: map[string]*job{}}
		l.srv = &http.Server{Handler: l, ReadHeaderTimeout: 10 * time.Second}
		go l.srv.Serve(ln)
		s.listeners[j.port] = l
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if other := l.paths[j.hook.path]; other != nil && other.id != j.id {
		if len(l.paths) == 0 {
			l.close()
			delete(s.listeners, j.port)
		}
		return reject("port %d path %s is already used by workflow %q", j.port, j.hook.path, other.id)
	}
	l.paths[j.hook.path] = j
	return nil
}

// unlisten removes a job's path, closing the port when it was the last.
// s.mu is held.
func (s *Scheduler) unlisten(j *job) {
	l := s.listeners[j.port]
	if l == nil {
		return
	}
	l.mu.Lock()
	if l.paths[j.hook.path] == j {
		delete(l.paths, j.hook.path)
	}
	empty := len(l.paths) == 0
	l.mu.Unlock()
	if empty {
		l.close()
		delete(s.listeners, j.port)
	}
}

func (l *listener) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if l.srv.Shutdown(ctx) != nil {
		l.srv.Close()
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal server error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

// ServeHTTP answers a webhook request: path and method, secret, timestamp,
// body cap, dedup; then a run, whose Output is the response when it ends
// within timeout_secs (else 202 with the run's id).
func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.RLock()
	j := l.paths[r.URL.Path]
	l.mu.RUnlock()
	if j == nil || j.stopped.Load() {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": "no webhook listens on this path"})
		return
	}
	h := j.hook
	if h.method != "ANY" && r.Method != h.method {
		w.Header().Set("Allow", h.method)
		writeJSON(w, http.StatusMethodNotAllowed, map[string]any{"error": "this webhook accepts " + h.method})
		return
	}
	if h.secret != "" && !l.s.SecretOK(j.id, h.secret, r.Header.Get("x-webhook-secret")) {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": "missing or wrong x-webhook-secret"})
		return
	}
	if h.validateTimestamp {
		if status, msg := checkTimestamp(r.Header.Get("x-webhook-timestamp"), time.Now()); status != 0 {
			writeJSON(w, status, map[string]any{"error": msg})
			return
		}
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, trigger.WebhookBodyLimit))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeJSON(w, http.StatusRequestEntityTooLarge, map[string]any{"error": fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)})
			return
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": "cannot read the request body"})
		return
	}
	if h.dedup > 0 && len(raw) > 0 && j.seen(raw, h.dedup, time.Now()) {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "deduplicated": true})
		return
	}
	payload := requestPayload(r, raw)
	if session, relayed := r.Header[http.CanonicalHeaderKey(SessionHeader)]; relayed {
		// Relayed by the widget: acknowledge receipt now; the output goes
		// out as a scheduler-status event to the sender's session only.
		sid := ""
		if len(session) > 0 {
			sid = session[0]
		}
		if !l.s.track() {
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "the workflow cannot run now"})
			return
		}
		go func() {
			defer l.s.running.Done()
			l.s.runJob(j, "webhook", payload, false, sid)
		}()
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "status": "accepted"})
		return
	}
	done := make(chan []byte, 1)
	runID := make(chan string, 1)
	go func() {
		res := l.s.runJob(j, "webhook", payload, false, "")
		if res == nil {
			done <- nil
			return
		}
		runID <- res.ExecutionID
		var out any = map[string]any{"ok": true, "execution_id": res.ExecutionID}
		if len(res.Outputs) > 0 {
			out = outputValue(res.Outputs[len(res.Outputs)-1])
		}
		if !res.Success {
			msg := ""
			if res.Error != nil {
				msg = *res.Error
			}
			out = map[string]any{"error": msg, "execution_id": res.ExecutionID}
		}
		b := value.Encode(out)
		if !res.Success {
			b = append([]byte{'!'}, b...)
		}
		done <- b
	}()
	t := time.NewTimer(h.timeout)
	defer t.Stop()
	select {
	case b := <-done:
		switch {
		case b == nil:
			writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": "the workflow cannot run now"})
		case b[0] == '!':
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write(b[1:])
		default:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			w.Write(b)
		}
	case <-t.C:
		writeJSON(w, http.StatusAccepted, map[string]any{"ok": true, "status": "running",
			"message": "the workflow is still running; its result arrives as a scheduler-status event"})
	case <-r.Context().Done():
	}
}

// outputValue is the value field of an Output node's output: what a
// webhook caller receives.
func outputValue(out any) any {
	if m, ok := out.(map[string]any); ok {
		if v, ok := m["value"]; ok {
			return v
		}
	}
	return out
}

// checkTimestamp reads x-webhook-timestamp (Unix seconds, Unix
// milliseconds, or RFC 3339): 400 when missing or unreadable, 401 when
// more than MaxTimestampAge away from now.
func checkTimestamp(h string, now time.Time) (int, string) {
	h = strings.TrimSpace(h)
	if h == "" {
		return http.StatusBadRequest, "x-webhook-timestamp is required"
	}
	var ts time.Time
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n > 1e12 {
			ts = time.UnixMilli(n)
		} else {
			ts = time.Unix(n, 0)
		}
	} else if t, err := time.Parse(time.RFC3339Nano, h); err == nil {
		ts = t
	} else {
		return http.StatusBadRequest, "x-webhook-timestamp must be Unix seconds or an RFC 3339 time"
	}
	if d := now.Sub(ts); d > MaxTimestampAge || d < -MaxTimestampAge {
		return http.StatusUnauthorized, "x-webhook-timestamp is more than 5 minutes away from the server's time"
	}
	return 0, ""
}

// seen reports whether body was seen within window, and remembers it.
func (j *job) seen(body []byte, window time.Duration, now time.Time) bool {
	sum := sha256.Sum256(body)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.dedup == nil {
		j.dedup = map[[32]byte]time.Time{}
	}
	for k, at := range j.dedup {
		if now.Sub(at) >= window {
			delete(j.dedup, k)
		}
	}
	if at, ok := j.dedup[sum]; ok && now.Sub(at) < window {
		return true
	}
	j.dedup[sum] = now
	return false
}

// requestPayload is the Webhook node's output: body (JSON when it parses,
// else text), headers (lower-case names, repeated values joined), method,
// path, query, and files for an attachments array; error when the body
// was sent as JSON but does not parse.
func requestPayload(r *http.Request, raw []byte) map[string]any {
	var body any
	var bodyErr error
	if len(bytes.TrimSpace(raw)) > 0 {
		if v, err := value.Decode(raw); err == nil {
			body = v
		} else {
			body, bodyErr = string(raw), err
		}
	}
	headers := make(map[string]any, len(r.Header))
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	query := map[string]any{}
	for k, v := range r.URL.Query() {
		query[k] = strings.Join(v, ",")
	}
	p := map[string]any{"body": body, "headers": headers, "method": r.Method, "path": r.URL.Path, "query": query}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); bodyErr != nil && (mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		// A body sent as JSON that does not parse leaves the trigger
		// through its Error port.
		p["error"] = map[string]any{"code": trigger.CodeInvalidBody, "message": "the body is sent as JSON but does not parse: " + bodyErr.Error()}
	}
	if m, ok := body.(map[string]any); ok {
		if atts, ok := m["attachments"].([]any); ok {
			p["files"] = attachmentFiles(atts)
		}
	}
	return p
}

// attachmentFiles turns attachment objects into file objects (name,
// mime_type, data as base64, size). An entry that is not an object, or
// whose data is not base64, is left out.
func attachmentFiles(atts []any) []any {
	files := []any{}
	for _, a := range atts {
		m, ok := a.(map[string]any)
		if !ok {
			continue
		}
		data := first(m, "data", "content", "base64")
		if i := strings.Index(data, ";base64,"); strings.HasPrefix(data, "data:") && i > 0 {
			data = data[i+len(";base64,"):]
		}
		decoded, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			continue
		}
		mime := first(m, "mime_type", "content_type", "type")
		if mime == "" {
			mime = http.DetectContentType(decoded)
		}
		files = append(files, map[string]any{"name": first(m, "name", "filename"), "mime_type": mime,
			"data": base64.StdEncoding.EncodeToString(decoded), "size": len(decoded)})
	}
	return files
}

func first(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
