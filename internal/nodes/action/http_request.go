package action

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(HTTPRequestSpec(Options{})) }

// Error codes of HTTP Request. A 429 fails with node.CodeRateLimited.
const (
	// CodeInvalidMethod: method is not one of Methods.
	CodeInvalidMethod = "INVALID_METHOD"
	// CodeInvalidURL: url is not an http or https URL with a host.
	CodeInvalidURL = "INVALID_URL"
	// CodeHTTPError: the response status is 400 or more (429 aside) and
	// nothing is wired to the Error port. The cause is a *StatusError.
	CodeHTTPError = "HTTP_ERROR"
	// CodeResponseTooLarge: the response body is over MaxResponseBytes.
	CodeResponseTooLarge = "RESPONSE_TOO_LARGE"
	// CodeConnectionFailed: no connection could be made (refused, no such
	// host, over DialTimeout). Nothing was sent, so it is retryable for
	// every method.
	CodeConnectionFailed = "CONNECTION_FAILED"
	// CodeTLSError: the server's certificate or TLS handshake was refused.
	// Never retried: repeating cannot change the certificate.
	CodeTLSError = "TLS_ERROR"
	// CodeTimeout: the response did not arrive in full within the request
	// timeout. Retryable for GET, HEAD, OPTIONS, PUT and DELETE only.
	CodeTimeout = "TIMEOUT"
	// CodeRequestFailed: the connection broke after the request started.
	// Retryable for GET, HEAD, OPTIONS, PUT and DELETE only.
	CodeRequestFailed = "REQUEST_FAILED"
	// CodeTooManyRedirects: a redirect chain reached MaxRedirectRequests.
	CodeTooManyRedirects = "TOO_MANY_REDIRECTS"
)

// Limits of HTTP Request.
const (
	// MaxResponseBytes is the largest response body read (10 MB).
	MaxResponseBytes = 10 << 20
	// DialTimeout bounds making a connection (spec/nodes.md rule 4).
	DialTimeout = 10 * time.Second
	// MaxRedirectRequests ends a redirect chain after this many requests,
	// as net/http's default policy does: 9 redirects are followed, the
	// 10th fails TOO_MANY_REDIRECTS.
	MaxRedirectRequests = 10
	// MaxRetryAfter caps the wait a 429's Retry-After asks for, as the
	// engine caps its own backoff.
	MaxRetryAfter = 5 * time.Minute
	// errorBodyBytes is how much of a response body an HTTP_ERROR message
	// shows.
	errorBodyBytes = 1 << 10
)

// PortSuccess is the port a response with a status below 400 leaves through.
const PortSuccess = "success"

// Methods are the HTTP methods HTTP Request sends.
var Methods = []string{"GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH", "DELETE"}

// idempotent methods may be repeated after a timeout (spec/nodes.md rule 4).
var idempotent = map[string]bool{"GET": true, "HEAD": true, "OPTIONS": true, "PUT": true, "DELETE": true}

var (
	errRequestTimeout   = errors.New("request timed out")
	errTooManyRedirects = fmt.Errorf("stopped after %d redirects", MaxRedirectRequests)
)

// HTTPRequestSpec is the HTTP Request node: it sends one request and
// outputs the response's status, headers and body.
func HTTPRequestSpec(opts Options) *node.Spec {
	client := newClient()
	return &node.Spec{
		TypeID:      "http_request",
		DisplayName: "HTTP Request",
		Category:    node.CategoryAction,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Sends an HTTP request and outputs the response's status, headers and body (parsed when it is JSON).",
		Fields: []node.Field{
			{Name: "url", Kind: node.KindText, Required: true, Code: CodeInvalidURL,
				Description: "http or https URL"},
			{Name: "method", Kind: node.KindEnum, Enum: Methods, FoldCase: true, Required: true, Code: CodeInvalidMethod,
				Description: "GET, HEAD, OPTIONS, POST, PUT, PATCH or DELETE, in any letter case"},
			{Name: "headers", Kind: node.KindObject,
				Description: "request headers; each value text, a number or a boolean"},
			{Name: "body", Kind: node.KindAny,
				Description: "text is sent as it is; any other JSON value is sent as JSON with Content-Type application/json unless a header sets one"},
			{Name: "api_key", Kind: node.KindText, Credential: true,
				Description: "sent as Authorization: Bearer <key> unless headers set Authorization"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{{ID: PortSuccess, Label: "Success"}, node.ErrorPort},
		Output: node.Object(map[string]any{
			"status":  node.T("integer", "response status code"),
			"body":    node.T("", "the response body: parsed when its Content-Type is JSON, else text; empty text for HEAD"),
			"headers": node.T("object", "response headers by lower-case name; repeated headers joined with \", \""),
			"error":   node.T("string", "Error port only: what failed"),
			"code":    node.T("string", "Error port only: the error code"),
			"node_id": node.T("string", "Error port only: this node's id"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return NewHTTPRequest(Request{
				Method:  c.String("method"),
				URL:     c.String("url"),
				Headers: c.Object("headers"),
				Body:    c.Value("body"),
				APIKey:  c.String("api_key"),
			}, opts, client)
		},
	}
}

// newClient returns the client of one spec: net/http's default transport
// (proxy from the environment, HTTP/2, 10 s TLS handshake) with a 10 s dial
// timeout, and net/http's redirect policy with a typed error past the limit.
func newClient() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: DialTimeout, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(_ *http.Request, via []*http.Request) error {
			if len(via) >= MaxRedirectRequests {
				return errTooManyRedirects
			}
			return nil
		},
	}
}

// Request is an HTTP Request node's config.
type Request struct {
	// Method is one of Methods, in any letter case.
	Method string
	// URL is an http or https URL.
	URL string
	// Headers values are text, numbers or booleans. A Host header sets the
	// request's host.
	Headers map[string]any
	// Body is nil for none, text sent as it is, or a value sent as JSON.
	Body any
	// APIKey, when not blank, is sent as a bearer token unless Headers set
	// Authorization.
	APIKey string
}

// HTTPRequest is a configured HTTP Request node.
type HTTPRequest struct {
	method  string
	url     *url.URL
	header  http.Header
	host    string
	body    []byte
	client  *http.Client
	timeout time.Duration
}

// NewHTTPRequest checks a config and returns the node. client nil means a
// client of its own.
func NewHTTPRequest(r Request, opts Options, client *http.Client) (*HTTPRequest, error) {
	h := &HTTPRequest{client: client, timeout: opts.requestTimeout(), header: http.Header{}}
	if h.client == nil {
		h.client = newClient()
	}
	h.method = strings.ToUpper(strings.TrimSpace(r.Method))
	if !slices.Contains(Methods, h.method) {
		return nil, node.FieldError(CodeInvalidMethod, "method", "%q is not one of %s", r.Method, strings.Join(Methods, ", "))
	}
	u, err := parseURL(r.URL)
	if err != nil {
		return nil, err
	}
	h.url = u
	// Sorted, so that the first bad header reported is always the same.
	for _, name := range slices.Sorted(maps.Keys(r.Headers)) {
		v, err := headerValue(name, r.Headers[name])
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(name, "Host") {
			h.host = v
			continue
		}
		h.header.Add(name, v)
	}
	switch b := r.Body.(type) {
	case nil:
	case string:
		h.body = []byte(b)
	default:
		h.body = value.Encode(b)
		if h.header.Get("Content-Type") == "" {
			h.header.Set("Content-Type", "application/json")
		}
	}
	if key := strings.TrimSpace(r.APIKey); key != "" && h.header.Get("Authorization") == "" {
		if !validHeaderValue(key) {
			return nil, node.ConfigError("api_key", "holds a control character")
		}
		h.header.Set("Authorization", "Bearer "+key)
	}
	if h.header.Get("User-Agent") == "" {
		h.header.Set("User-Agent", "svc/"+node.BuiltinVersion)
	}
	return h, nil
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, node.FieldError(CodeInvalidURL, "url", "is not a valid URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, node.FieldError(CodeInvalidURL, "url", "must start with http:// or https://")
	}
	if u.Hostname() == "" {
		return nil, node.FieldError(CodeInvalidURL, "url", "has no host")
	}
	return u, nil
}

// headerValue checks a header and renders its value as text.
func headerValue(name string, v any) (string, error) {
	if !validHeaderName(name) {
		return "", node.ConfigError("headers", "%q is not a valid header name", name)
	}
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case bool:
		s = value.Text(t)
	default:
		if _, ok := value.Number(v); !ok {
			return "", node.ConfigError("headers", "header %q must be text, a number or a boolean, not %s", name, value.TypeName(v))
		}
		s = value.Text(v)
	}
	if !validHeaderValue(s) {
		return "", node.ConfigError("headers", "header %q holds a line break or control character", name)
	}
	return s, nil
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s holds no control character but tab.
func validHeaderValue(s string) bool {
	for i := range len(s) {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// StatusError is the cause of an HTTP_ERROR failure.
type StatusError struct {
	// Status is the response status code.
	Status int
}

// Error returns the status line, such as "HTTP 404 Not Found".
func (e *StatusError) Error() string {
	return strings.TrimSpace(fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status)))
}

// Run sends the request and reads the response. A status of 400 or more
// leaves through the Error port when it is wired, else fails HTTP_ERROR; a
// 429 always fails RATE_LIMITED, retryable after its Retry-After.
func (h *HTTPRequest) Run(ctx context.Context, env node.Env) (node.Result, error) {
	rctx, cancel := context.WithTimeoutCause(ctx, h.timeout, errRequestTimeout)
	defer cancel()
	// connected is set once a connection is had: a failure before it sent
	// nothing and may be repeated for every method.
	var connected atomic.Bool
	rctx = httptrace.WithClientTrace(rctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { connected.Store(true) },
	})
	var body io.Reader = http.NoBody
	if len(h.body) > 0 {
		body = bytes.NewReader(h.body)
	}
	req, err := http.NewRequestWithContext(rctx, h.method, h.url.String(), body)
	if err != nil {
		return node.Result{}, node.FieldError(CodeInvalidURL, "url", "%v", err)
	}
	req.Header = h.header.Clone()
	if h.host != "" {
		req.Host = h.host
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return node.Result{}, h.failure(ctx, rctx, err, connected.Load())
	}
	defer resp.Body.Close()
	var data []byte
	if h.method != http.MethodHead {
		// A HEAD response has no body; its Content-Length describes the
		// GET response, so it is not held against the limit.
		data, err = readBody(resp)
	}
	if err != nil {
		var ne *node.Error
		if errors.As(err, &ne) {
			return node.Result{}, err
		}
		return node.Result{}, h.failure(ctx, rctx, err, true)
	}
	out := map[string]any{
		"status":  resp.StatusCode,
		"body":    responseBody(resp, data),
		"headers": responseHeaders(resp.Header),
	}
	env.Logger().Info(fmt.Sprintf("%s %s: %d (%d bytes)", h.method, h.where(), resp.StatusCode, len(data)))
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		after := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		return node.Result{}, &node.Error{
			Code:    node.CodeRateLimited,
			Message: fmt.Sprintf("%s %s answered 429 Too Many Requests (retry after %s)", h.method, h.where(), after),
			Retry:   node.Retryable, After: after,
			Err: &StatusError{Status: resp.StatusCode},
		}
	case resp.StatusCode >= 400:
		se := &StatusError{Status: resp.StatusCode}
		msg := fmt.Sprintf("%s %s answered %s", h.method, h.where(), se.Error())
		if snippet := errorSnippet(data); snippet != "" {
			msg += ": " + snippet
		}
		if env.Connected(node.PortError) {
			out["error"], out["code"], out["node_id"] = msg, CodeHTTPError, env.NodeID()
			return node.Result{Output: out, Port: node.PortError}, nil
		}
		return node.Result{}, &node.Error{Code: CodeHTTPError, Message: msg, Err: se}
	}
	return node.Result{Output: out, Port: PortSuccess}, nil
}

// where names the request's target for messages and logs, without the
// query or user info, which may hold secrets.
func (h *HTTPRequest) where() string { return h.url.Scheme + "://" + h.url.Host + h.url.EscapedPath() }

// failure classifies a request that got no complete response (spec/nodes.md
// rule 4): a connection that could not be made is retryable for every
// method; a timeout or a broken exchange only for idempotent methods.
func (h *HTTPRequest) failure(ctx, rctx context.Context, err error, connected bool) error {
	if ctx.Err() != nil {
		// The run ended (cancelled, or its time limit); the engine reports it.
		return &node.Error{Code: CodeRequestFailed, Message: fmt.Sprintf("%s %s stopped: %v", h.method, h.where(), context.Cause(ctx)), Err: ctx.Err()}
	}
	var (
		cve *tls.CertificateVerificationError
		rhe tls.RecordHeaderError
		ale tls.AlertError
	)
	switch {
	case errors.As(err, &cve) || errors.As(err, &rhe) || errors.As(err, &ale):
		return &node.Error{Code: CodeTLSError, Message: fmt.Sprintf("%s %s: TLS failed: %v", h.method, h.where(), cause(err)), Err: err}
	case errors.Is(err, errTooManyRedirects):
		return &node.Error{Code: CodeTooManyRedirects, Message: fmt.Sprintf("%s %s: %v", h.method, h.where(), errTooManyRedirects), Err: err}
	case !connected:
		return node.RetryableError(CodeConnectionFailed, 0, fmt.Errorf("%s %s: cannot connect: %w", h.method, h.where(), cause(err)))
	}
	retry := node.NoRetry
	if idempotent[h.method] {
		retry = node.Retryable
	}
	var netErr net.Error
	if errors.Is(context.Cause(rctx), errRequestTimeout) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return &node.Error{Code: CodeTimeout, Retry: retry, Err: err,
			Message: fmt.Sprintf("%s %s: no complete response within %s", h.method, h.where(), h.timeout)}
	}
	return &node.Error{Code: CodeRequestFailed, Retry: retry, Err: err,
		Message: fmt.Sprintf("%s %s: %v", h.method, h.where(), cause(err))}
}

// cause drops the *url.Error wrapper, whose text repeats the whole URL.
func cause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// readBody reads the response body up to MaxResponseBytes.
func readBody(resp *http.Response) ([]byte, error) {
	tooLarge := func() error {
		return node.Errorf(CodeResponseTooLarge, "the response body is larger than %d bytes (10 MB)", MaxResponseBytes)
	}
	if resp.ContentLength > MaxResponseBytes {
		return nil, tooLarge()
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxResponseBytes {
		return nil, tooLarge()
	}
	return data, nil
}

// responseBody is the body as the node outputs it: parsed when the
// Content-Type is JSON (application/json or any +json type) and it parses,
// else text. A HEAD response has no body, so it is empty text.
func responseBody(resp *http.Response, data []byte) any {
	if len(data) > 0 && isJSON(resp.Header.Get("Content-Type")) {
		if v, err := value.Decode(data); err == nil {
			return v
		}
	}
	return string(data)
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
}

// responseHeaders keys headers by lower-case name and joins the values of a
// header sent several times with ", ".
func responseHeaders(hdr http.Header) map[string]any {
	out := make(map[string]any, len(hdr))
	for k, vs := range hdr {
		out[strings.ToLower(k)] = strings.Join(vs, ", ")
	}
	return out
}

// retryAfter reads a Retry-After header (seconds or an HTTP date), capped
// at MaxRetryAfter; zero when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	var d time.Duration
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(MaxRetryAfter/time.Second) {
			return MaxRetryAfter
		}
		d = time.Duration(secs) * time.Second
	} else if t, err := http.ParseTime(h); err == nil {
		d = t.Sub(now).Round(time.Second)
	}
	return min(max(d, 0), MaxRetryAfter)
}

// errorSnippet is the start of a body for an error message: at most
// errorBodyBytes, valid UTF-8, on one line.
func errorSnippet(data []byte) string {
	cut := len(data) > errorBodyBytes
	if cut {
		data = data[:errorBodyBytes]
	}
	// A character cut in two becomes "?", as any invalid byte does.
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(data), "?")), " ")
	if cut {
		s += " ..."
	}
	return s
}

var _ node.Runner = (*HTTPRequest)(nil)
