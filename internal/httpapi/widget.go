package httpapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/widget"
)

// Widget limits of spec/server.md section 8.
const (
	WidgetBodyLimit      = 1 << 20
	WidgetTriggerPerIP   = 20
	WidgetTriggerPerFlow = 60
	WidgetMintPerIP      = 10
	// maxSessionLen bounds a widget session id.
	maxSessionLen = 128
	// relayTimeout bounds the loopback forward to a webhook listener,
	// which answers a relayed request at once.
	relayTimeout = 10 * time.Second
)

// dangerousNodes may not run behind the public widget, whatever the
// --allow-* flags say.
var dangerousNodes = []string{"shell_command", "code", "database"}

//go:embed assets/svc-widget.js
var assets embed.FS

// widgetScript serves GET /svc-widget.js with a 5-minute cache.
func (s *Server) widgetScript(w http.ResponseWriter, r *http.Request) error {
	b, err := assets.ReadFile("assets/svc-widget.js")
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=300")
	http.ServeContent(w, r, "svc-widget.js", time.Time{}, bytes.NewReader(b))
	return nil
}

// widgetLimiters are the widget routes' own rate limits, on top of the
// server-wide one.
type widgetLimiters struct {
	triggerIP, triggerFlow, mintIP *rateLimiter
}

func newWidgetLimiters() widgetLimiters {
	return widgetLimiters{
		triggerIP:   newRateLimiter(WidgetTriggerPerIP, RateWindow, MaxTrackedClients),
		triggerFlow: newRateLimiter(WidgetTriggerPerFlow, RateWindow, MaxTrackedClients),
		mintIP:      newRateLimiter(WidgetMintPerIP, RateWindow, MaxTrackedClients),
	}
}

func rateLimited() error {
	return &Error{Status: http.StatusTooManyRequests, Message: msgRateLimited,
		Header: http.Header{"Retry-After": {strconv.Itoa(int(RateWindow / time.Second))}}}
}

// validSession reports whether a widget session id is at most
// maxSessionLen letters, digits, '-', '_' or '.'.
func validSession(s string) bool {
	if len(s) == 0 || len(s) > maxSessionLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// widgetTarget applies rules 1 to 4 of the widget routes: the workflow has
// a job (404), the job is active (409), its trigger is a Webhook (400),
// and (trigger only) no dangerous node is in it (403).
func (s *Server) widgetTarget(ctx context.Context, id string, trigger bool) (*scheduler.Target, error) {
	row, err := s.store.JobGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "workflow %q has no background job: start it first", id)
	}
	if err != nil {
		return nil, err
	}
	var t *scheduler.Target
	ok := false
	if s.sched != nil {
		t, ok = s.sched.Target(id)
	}
	if row.Status != store.JobActive || !ok {
		return nil, errorf(http.StatusConflict, "the job of workflow %q is not active (%s)", id, row.Status)
	}
	if t.Kind != "webhook" {
		return nil, errorf(http.StatusBadRequest, "the widget needs a Webhook trigger; workflow %q is started by a %s schedule", id, t.Kind)
	}
	if trigger {
		for _, typ := range dangerousNodes {
			if t.Has(typ) {
				return nil, errorf(http.StatusForbidden, "the widget cannot run a workflow that contains a %s node", typ)
			}
		}
	}
	return t, nil
}

// checkWidgetSecret applies rule 5: a secret must be configured (400),
// the given one must be header-safe (400) and match, or be a token minted
// from it (401).
func (s *Server) checkWidgetSecret(id string, t *scheduler.Target, given string, tokens bool) error {
	if t.Secret == "" {
		return errorf(http.StatusBadRequest, "the workflow's Webhook trigger has no secret configured; the widget needs one")
	}
	if !widget.SecretHeaderSafe(given) {
		return errorf(http.StatusBadRequest, "secret: only visible ASCII characters and spaces are allowed")
	}
	if tokens && s.sched.SecretOK(id, t.Secret, given) || subtle.ConstantTimeCompare([]byte(given), []byte(t.Secret)) == 1 {
		return nil
	}
	return errorf(http.StatusUnauthorized, "wrong secret, or an expired token, or a token minted for another workflow")
}

// widgetTriggerBody is the body of POST /api/widget/{id}/trigger.
type widgetTriggerBody struct {
	Secret    string          `json:"secret"`
	Body      json.RawMessage `json:"body"`
	SessionID string          `json:"session_id"`
}

// widgetTrigger is POST /api/widget/{workflow_id}/trigger: it relays a
// browser message to the workflow's Webhook listener over loopback and
// acknowledges receipt; the output arrives as a scheduler-status event on
// the sender's session.
func (s *Server) widgetTrigger(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("workflow_id")
	now := time.Now()
	if !s.widgetLimits.triggerIP.allow(s.clientKey(r), now) || !s.widgetLimits.triggerFlow.allow(id, now) {
		return rateLimited()
	}
	var body widgetTriggerBody
	if err := s.decodeWidgetBody(w, r, &body); err != nil {
		return err
	}
	if body.SessionID != "" && !validSession(body.SessionID) {
		return errorf(http.StatusBadRequest, "session_id: at most %d letters, digits, '-', '_' or '.'", maxSessionLen)
	}
	t, err := s.widgetTarget(r.Context(), id, true)
	if err != nil {
		return err
	}
	if err := s.checkWidgetSecret(id, t, body.Secret, true); err != nil {
		return err
	}
	if err := s.relay(r.Context(), t, body); err != nil {
		return err
	}
	var out any
	if t.OutputNode != "" {
		out = t.OutputNode
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "output_node_id": out})
	return nil
}

// relay forwards a widget message to the listener (rule 6) and translates
// its rejections without revealing why.
func (s *Server) relay(ctx context.Context, t *scheduler.Target, body widgetTriggerBody) error {
	ctx, cancel := context.WithTimeout(ctx, relayTimeout)
	defer cancel()
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(t.Port)) + t.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body.Body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-webhook-secret", body.Secret)
	req.Header.Set(scheduler.SessionHeader, body.SessionID)
	resp, err := s.relayClient.Do(req)
	if err != nil {
		s.log.Warn("widget relay: the webhook listener cannot be reached", "port", t.Port, "err", err)
		return errorf(http.StatusBadGateway, "the workflow's webhook listener cannot be reached")
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	switch st := resp.StatusCode; {
	case st >= 200 && st < 300:
		return nil
	case st == http.StatusUnauthorized:
		return errorf(st, "the webhook refused the secret (wrong, expired, or minted for another workflow)")
	case st == http.StatusNotFound || st == http.StatusMethodNotAllowed:
		return errorf(st, "the webhook does not accept this request (path or method)")
	case st == http.StatusRequestEntityTooLarge:
		return errorf(st, "the message is larger than the webhook accepts")
	default:
		return errorf(st, "the webhook refused the request")
	}
}

// widgetMintBody is the body of POST /api/widget/{id}/mint-token.
type widgetMintBody struct {
	Secret  string          `json:"secret"`
	TTLSecs json.RawMessage `json:"ttl_secs"`
}

// widgetMint is POST /api/widget/{workflow_id}/mint-token: it exchanges
// the raw Webhook secret for a token valid for that workflow until it
// expires.
func (s *Server) widgetMint(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("workflow_id")
	if !s.widgetLimits.mintIP.allow(s.clientKey(r), time.Now()) {
		return rateLimited()
	}
	var body widgetMintBody
	if err := s.decodeWidgetBody(w, r, &body); err != nil {
		return err
	}
	ttl := widget.DefaultTTL
	if len(body.TTLSecs) > 0 && string(body.TTLSecs) != "null" {
		var f float64
		if json.Unmarshal(body.TTLSecs, &f) != nil {
			return errorf(http.StatusBadRequest, "ttl_secs: must be a number of seconds")
		}
		ttl = time.Duration(min(max(f, 0), 1e6)) * time.Second
	}
	t, err := s.widgetTarget(r.Context(), id, false)
	if err != nil {
		return err
	}
	// Only the raw secret mints: a token cannot extend itself.
	if err := s.checkWidgetSecret(id, t, body.Secret, false); err != nil {
		return err
	}
	if s.opts.WidgetTokens == nil {
		return errors.New("widget: no token signer attached to this server")
	}
	tok, exp := s.opts.WidgetTokens.Mint(id, t.Secret, ttl, time.Now())
	writeJSON(w, http.StatusOK, map[string]any{"token": tok, "expires_at": exp.UTC().Format(time.RFC3339),
		"ttl_secs": int(widget.ClampTTL(ttl) / time.Second)})
	return nil
}

// decodeWidgetBody reads a widget route's body under its 1 MiB limit.
func (s *Server) decodeWidgetBody(w http.ResponseWriter, r *http.Request, dst any) error {
	r.Body = http.MaxBytesReader(w, r.Body, WidgetBodyLimit)
	return s.decodeBody(w, r, dst, false)
}
