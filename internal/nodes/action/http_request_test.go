package action

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestHTTPRequestSpec(t *testing.T) {
	t.Parallel()
	s := HTTPRequestSpec(Options{})
	if s.TypeID != "http_request" || s.Category != node.CategoryAction || !s.Enabled {
		t.Errorf("HTTPRequestSpec() = %q in %q enabled %v; want http_request in core_action, enabled", s.TypeID, s.Category, s.Enabled)
	}
	if want := []node.Port{node.InPort}; !reflect.DeepEqual(s.Inputs, want) {
		t.Errorf("Inputs = %v; want %v", s.Inputs, want)
	}
	if want := []node.Port{{ID: "success", Label: "Success"}, {ID: "error", Label: "Error"}}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if s.DefaultOutput() != "success" {
		t.Errorf("DefaultOutput() = %q; want success", s.DefaultOutput())
	}
	var names []string
	for _, f := range s.Fields {
		names = append(names, f.Name)
		if f.Name == "api_key" && !f.Credential {
			t.Errorf("api_key is not credential-resolved")
		}
	}
	if want := []string{"url", "method", "headers", "body", "api_key"}; !reflect.DeepEqual(names, want) {
		t.Errorf("fields = %v; want %v", names, want)
	}
	props := s.InputSchema()["properties"].(map[string]any)
	if key := props["api_key"].(map[string]any); key["x-svc-credential"] != true || key["writeOnly"] != true {
		t.Errorf("api_key schema = %v; want a write-only credential", key)
	}
	if req := s.InputSchema()["required"]; !reflect.DeepEqual(req, []string{"url", "method"}) {
		t.Errorf("required = %v; want [url method]", req)
	}
	if _, ok := node.Default().Lookup("http_request"); !ok {
		t.Errorf("http_request is not registered")
	}
}

func TestHTTPRequestMethods(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Method", r.Method)
		io.WriteString(w, "hello "+r.Method)
	})
	for _, method := range []string{"GET", "head", "Options", "post", "PUT", "patch", "delete"} {
		up := strings.ToUpper(method)
		res, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
			map[string]any{"url": srv.URL + "/m", "method": method}, nodetest.New(nil))
		if err != nil {
			t.Errorf("%s: Run error: %v", method, err)
			continue
		}
		if got := srv.last(t).Method; got != up {
			t.Errorf("%s: server saw method %q; want %q", method, got, up)
		}
		out := res.Output.(map[string]any)
		wantBody := "hello " + up
		if up == "HEAD" {
			wantBody = ""
		}
		if res.Port != "success" || out["status"] != 200 || out["body"] != wantBody {
			t.Errorf("%s: Result = %v on %q; want status 200, body %q on success", method, out, res.Port, wantBody)
		}
		if got := out["headers"].(map[string]any)["x-method"]; got != up {
			t.Errorf("%s: headers[x-method] = %v; want %q", method, got, up)
		}
	}
}

func TestHTTPRequestHeaders(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	_, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), map[string]any{
		"url": srv.URL, "method": "GET",
		"headers": map[string]any{"X-Text": "a b", "X-Int": 42, "X-Float": 1.5, "X-True": true, "x-false": false, "X-Empty": "", "Host": "example.test"},
	}, nodetest.New(nil))
	if err != nil {
		t.Fatalf("Run error: %v", err)
	}
	got := srv.last(t)
	for name, want := range map[string]string{"X-Text": "a b", "X-Int": "42", "X-Float": "1.5", "X-True": "true", "X-False": "false", "User-Agent": "svc/1.0.0"} {
		if v := got.Header.Get(name); v != want {
			t.Errorf("header %s = %q; want %q", name, v, want)
		}
	}
	if _, ok := got.Header["X-Empty"]; !ok {
		t.Errorf("empty header X-Empty was not sent")
	}
	if got.Host != "example.test" {
		t.Errorf("Host = %q; want example.test from the Host header", got.Host)
	}
	// Headers as JSON text, as a form may save them.
	if _, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), map[string]any{
		"url": srv.URL, "method": "GET", "headers": `{"X-From-Text": 7, "User-Agent": "mine"}`,
	}, nodetest.New(nil)); err != nil {
		t.Fatalf("Run with headers as text error: %v", err)
	}
	if h := srv.last(t).Header; h.Get("X-From-Text") != "7" || h.Get("User-Agent") != "mine" {
		t.Errorf("headers = %v; want X-From-Text 7 and User-Agent mine", h)
	}
}

func TestHTTPRequestBody(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	tests := []struct {
		name     string
		body     any
		headers  map[string]any
		wantBody string
		wantType string
	}{
		{"no body", nil, nil, "", ""},
		{"empty text", "", nil, "", ""},
		{"text as is", `{"not": "re-encoded"}`, nil, `{"not": "re-encoded"}`, ""},
		{"text with a type", "a,b\n1,2\n", map[string]any{"Content-Type": "text/csv"}, "a,b\n1,2\n", "text/csv"},
		{"object as JSON", map[string]any{"a": 1, "b": []any{true, nil}}, nil, `{"a":1,"b":[true,null]}`, "application/json"},
		{"array as JSON", []any{1, "x"}, nil, `[1,"x"]`, "application/json"},
		{"number as JSON", 42, nil, `42`, "application/json"},
		{"boolean as JSON", false, nil, `false`, "application/json"},
		{"header type wins", map[string]any{"a": 1}, map[string]any{"content-type": "application/vnd.api+json"},
			`{"a":1}`, "application/vnd.api+json"},
	}
	for _, tt := range tests {
		raw := map[string]any{"url": srv.URL, "method": "POST", "body": tt.body, "headers": tt.headers}
		if _, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), raw, nodetest.New(nil)); err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		got := srv.last(t)
		if got.Body != tt.wantBody || got.Header.Get("Content-Type") != tt.wantType {
			t.Errorf("%s: server got body %q type %q; want %q type %q", tt.name, got.Body, got.Header.Get("Content-Type"), tt.wantBody, tt.wantType)
		}
	}
}

func TestHTTPRequestAPIKey(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	tests := []struct {
		name    string
		raw     map[string]any
		want    string
		present bool
	}{
		{"bearer", map[string]any{"api_key": "k-123"}, "Bearer k-123", true},
		{"key trimmed", map[string]any{"api_key": " k-123\n"}, "Bearer k-123", true},
		{"explicit header wins", map[string]any{"api_key": "k-123", "headers": map[string]any{"Authorization": "Basic abc"}}, "Basic abc", true},
		{"header name in any case wins", map[string]any{"api_key": "k-123", "headers": map[string]any{"aUtHoRiZaTiOn": "Token t"}}, "Token t", true},
		{"blank key", map[string]any{"api_key": "  "}, "", false},
		{"no key", map[string]any{}, "", false},
	}
	for _, tt := range tests {
		tt.raw["url"], tt.raw["method"] = srv.URL, "GET"
		if _, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), tt.raw, nodetest.New(nil)); err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		vs, present := srv.last(t).Header["Authorization"]
		if present != tt.present || (present && (len(vs) != 1 || vs[0] != tt.want)) {
			t.Errorf("%s: Authorization = %q (sent %v); want %q (sent %v)", tt.name, vs, present, tt.want, tt.present)
		}
	}
}

func TestHTTPRequestResponse(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if ct := q.Get("type"); ct != "" {
			w.Header().Set("Content-Type", ct)
		}
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
		w.Header()["x-raw-lower"] = []string{"a", "b"}
		w.Header().Add("Set-Cookie", "a=1")
		w.Header().Add("Set-Cookie", "b=2")
		io.WriteString(w, q.Get("body"))
	})
	tests := []struct {
		name, ctype, body string
		want              any
	}{
		{"JSON object", "application/json", `{"a": 1, "b": [1.5, "x"]}`, map[string]any{"a": 1, "b": []any{1.5, "x"}}},
		{"JSON with charset", "application/json; charset=utf-8", `[1, 2]`, []any{1, 2}},
		{"JSON suffix type", "application/problem+json", `{"title": "bad"}`, map[string]any{"title": "bad"}},
		{"JSON scalar", "application/json", `"text"`, "text"},
		{"broken JSON stays text", "application/json", `{"a":`, `{"a":`},
		{"empty JSON body is empty text", "application/json", ``, ``},
		{"text that looks like JSON", "text/plain", `{"a": 1}`, `{"a": 1}`},
		{"HTML", "text/html", `<p>hi</p>`, `<p>hi</p>`},
		{"no type given", "", `plain`, `plain`},
	}
	for _, tt := range tests {
		u := srv.URL + "/?type=" + urlQuery(tt.ctype) + "&body=" + urlQuery(tt.body)
		res, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), map[string]any{"url": u, "method": "GET"}, nodetest.New(nil))
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		out := res.Output.(map[string]any)
		if !reflect.DeepEqual(out["body"], tt.want) {
			t.Errorf("%s: body = %#v; want %#v", tt.name, out["body"], tt.want)
		}
		h := out["headers"].(map[string]any)
		for name, want := range map[string]string{"x-multi": "one, two", "set-cookie": "a=1, b=2", "x-raw-lower": "a, b"} {
			if h[name] != want {
				t.Errorf("%s: headers[%s] = %v; want %q", tt.name, name, h[name], want)
			}
		}
		for name := range h {
			if name != strings.ToLower(name) {
				t.Errorf("%s: header name %q is not lower case", tt.name, name)
			}
		}
	}
}

func urlQuery(s string) string {
	r := strings.NewReplacer("%", "%25", "&", "%26", "+", "%2B", " ", "%20", "#", "%23", ";", "%3B", "=", "%3D")
	return r.Replace(s)
}

func TestHTTPRequestSizeLimit(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		if r.URL.Query().Get("chunked") == "" {
			w.Header().Set("Content-Length", strconv.Itoa(n))
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Write(bytes.Repeat([]byte("x"), n))
	})
	for _, tt := range []struct {
		n       int
		chunked bool
		ok      bool
		head    bool
	}{
		{MaxResponseBytes + 1, false, true, true},
		{MaxResponseBytes, false, true, false},
		{MaxResponseBytes, true, true, false},
		{MaxResponseBytes + 1, false, false, false},
		{MaxResponseBytes + 1, true, false, false},
	} {
		name := fmt.Sprintf("%d bytes chunked %v", tt.n, tt.chunked)
		u := fmt.Sprintf("%s/?n=%d", srv.URL, tt.n)
		if tt.chunked {
			u += "&chunked=1"
		}
		method, want := "GET", tt.n
		if tt.head {
			method, want = "HEAD", 0
		}
		res, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), map[string]any{"url": u, "method": method}, nodetest.New(nil))
		if !tt.ok {
			wantRetry(t, name, err, CodeResponseTooLarge, node.NoRetry)
			continue
		}
		if err != nil {
			t.Errorf("%s: Run error: %v", name, err)
			continue
		}
		if got := len(res.Output.(map[string]any)["body"].(string)); got != want {
			t.Errorf("%s %s: body has %d bytes; want %d", method, name, got, want)
		}
	}
}

func TestHTTPRequestErrorStatus(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "3") // only a 429's is honoured
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"error": "status %d"}`, code)
	})
	for _, code := range []int{400, 401, 404, 500, 502, 503, 504} {
		u := fmt.Sprintf("%s/%d?token=secret-in-query", srv.URL, code)
		raw := map[string]any{"url": u, "method": "POST"}

		// Error wired: the response leaves through it.
		env := nodetest.New(nil)
		env.Node = "fetch"
		env.Wired = map[string]bool{"error": true}
		res, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), raw, env)
		if err != nil {
			t.Errorf("%d wired: Run error: %v", code, err)
		} else {
			out := res.Output.(map[string]any)
			if res.Port != "error" || out["status"] != code || out["code"] != CodeHTTPError || out["node_id"] != "fetch" ||
				!reflect.DeepEqual(out["body"], map[string]any{"error": fmt.Sprintf("status %d", code)}) ||
				out["headers"].(map[string]any)["content-type"] != "application/json" {
				t.Errorf("%d wired: Result = %v on %q; want the response with code HTTP_ERROR on error", code, out, res.Port)
			}
		}

		// Not wired: the node fails, never retryable, carrying the status.
		_, err = nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), raw, nodetest.New(nil))
		ne := wantRetry(t, fmt.Sprint(code, " not wired"), err, CodeHTTPError, node.NoRetry)
		var se *StatusError
		if !errors.As(err, &se) || se.Status != code {
			t.Errorf("%d not wired: error %v carries status %v; want %d", code, err, se, code)
		}
		if ne != nil && (ne.After != 0 || !strings.Contains(ne.Message, strconv.Itoa(code)) ||
			!strings.Contains(ne.Message, fmt.Sprintf(`"status %d"`, code)) || strings.Contains(ne.Message, "secret-in-query")) {
			t.Errorf("%d not wired: message %q after %v; want the status and body, no query, no wait", code, ne.Message, ne.After)
		}
	}
}

func TestHTTPRequestErrorSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", errorBodyBytes) // two bytes each
	if got := errorSnippet([]byte(long)); !strings.HasSuffix(got, " ...") || len(got) > errorBodyBytes+4 {
		t.Errorf("errorSnippet(%d bytes) = %d bytes ending %q; want at most %d and a cut mark", len(long), len(got), got[len(got)-6:], errorBodyBytes+4)
	}
	if got := errorSnippet([]byte("a\n  b\tc ")); got != "a b c" {
		t.Errorf("errorSnippet = %q; want %q", got, "a b c")
	}
}

func TestHTTPRequestRateLimited(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if ra := r.URL.Query().Get("ra"); ra != "" {
			w.Header().Set("Retry-After", ra)
		}
		w.WriteHeader(http.StatusTooManyRequests)
	})
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	for _, tt := range []struct {
		ra    string
		after time.Duration
		slack time.Duration
	}{
		{"", 0, 0},
		{"7", 7 * time.Second, 0},
		{"0", 0, 0},
		{"-3", 0, 0},
		{"soon", 0, 0},
		{"86400", MaxRetryAfter, 0},
		{date, 90 * time.Second, 2 * time.Second},
	} {
		for _, wired := range []bool{false, true} {
			env := nodetest.New(nil)
			env.Wired = map[string]bool{"error": wired}
			_, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
				map[string]any{"url": srv.URL + "/?ra=" + urlQuery(tt.ra), "method": "POST"}, env)
			ne := wantRetry(t, fmt.Sprintf("Retry-After %q wired %v", tt.ra, wired), err, node.CodeRateLimited, node.Retryable)
			if ne != nil && (ne.After < tt.after-tt.slack || ne.After > tt.after) {
				t.Errorf("Retry-After %q: After = %v; want %v", tt.ra, ne.After, tt.after)
			}
		}
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tt := range []struct {
		h    string
		want time.Duration
	}{
		{"", 0}, {"12", 12 * time.Second}, {" 12 ", 12 * time.Second}, {"301", MaxRetryAfter},
		{"99999999999999999999", 0}, {"1.5", 0},
		{now.Add(time.Minute).Format(http.TimeFormat), time.Minute},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{now.Add(time.Hour).Format(http.TimeFormat), MaxRetryAfter},
	} {
		if got := retryAfter(tt.h, now); got != tt.want {
			t.Errorf("retryAfter(%q) = %v; want %v", tt.h, got, tt.want)
		}
	}
}

// TestHTTPRequestTimeout checks rule 4: a timeout is retryable for GET,
// HEAD, OPTIONS, PUT and DELETE, never for POST or PATCH, whether the
// headers or the body are late.
func TestHTTPRequestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("stall") == "body" {
			w.Header().Set("Content-Length", "100")
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	want := map[string]node.Retry{
		"GET": node.Retryable, "HEAD": node.Retryable, "OPTIONS": node.Retryable, "PUT": node.Retryable,
		"DELETE": node.Retryable, "POST": node.NoRetry, "PATCH": node.NoRetry,
	}
	for _, stall := range []string{"headers", "body"} {
		for _, method := range Methods {
			if method == "HEAD" && stall == "body" {
				continue // a HEAD response has no body to wait for
			}
			_, err := nodetest.Run(t.Context(), HTTPRequestSpec(fast),
				map[string]any{"url": srv.URL + "/?stall=" + stall, "method": method}, nodetest.New(nil))
			wantRetry(t, method+" stalled "+stall, err, CodeTimeout, want[method])
		}
	}
}

// TestHTTPRequestConnectionRefused checks that a connection that cannot be
// made is retryable for every method, POST included: nothing was sent.
func TestHTTPRequestConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, method := range Methods {
		_, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
			map[string]any{"url": "http://" + addr + "/x", "method": method}, nodetest.New(nil))
		ne := wantRetry(t, method+" refused", err, CodeConnectionFailed, node.Retryable)
		if ne != nil && !strings.Contains(ne.Message, "refused") {
			t.Errorf("%s: message %q; want it to say the connection was refused", method, ne.Message)
		}
	}
}

// TestHTTPRequestUntrustedCertificate checks that a refused certificate
// fails TLS_ERROR, which retrying cannot fix, before anything is sent.
func TestHTTPRequestUntrustedCertificate(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is logged
	srv.StartTLS()
	t.Cleanup(srv.Close)
	_, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), map[string]any{"url": srv.URL, "method": "GET"}, nodetest.New(nil))
	wantRetry(t, "self-signed certificate", err, CodeTLSError, node.NoRetry)
	// HTTPS to a plain port: net/http reports it without a TLS error
	// type, so it counts as a connection that could not be made.
	plain := newServer(t, nil)
	_, err = nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
		map[string]any{"url": strings.Replace(plain.URL, "http:", "https:", 1), "method": "POST"}, nodetest.New(nil))
	wantRetry(t, "https to a plain port", err, CodeConnectionFailed, node.Retryable)
	if hits.Load() != 0 || plain.count() != 0 {
		t.Errorf("handlers ran %d and %d times; want 0", hits.Load(), plain.count())
	}
}

func TestHTTPRequestRedirects(t *testing.T) {
	t.Parallel()
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/"))
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/%d", n-1), http.StatusFound)
			return
		}
		io.WriteString(w, "arrived")
	})
	// A chain of MaxRedirectRequests requests is followed to its end.
	hops := MaxRedirectRequests - 1
	res, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
		map[string]any{"url": fmt.Sprintf("%s/%d", srv.URL, hops), "method": "GET", "api_key": "k"}, nodetest.New(nil))
	if err != nil {
		t.Fatalf("%d redirects: Run error: %v", hops, err)
	}
	if out := res.Output.(map[string]any); out["body"] != "arrived" || out["status"] != 200 {
		t.Errorf("%d redirects: output %v; want 200 arrived", hops, out)
	}
	if got := srv.last(t).Header.Get("Authorization"); got != "Bearer k" {
		t.Errorf("Authorization after a same-host redirect = %q; want it kept", got)
	}
	before := srv.count()
	_, err = nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
		map[string]any{"url": fmt.Sprintf("%s/%d", srv.URL, hops+1), "method": "GET"}, nodetest.New(nil))
	wantRetry(t, "too many redirects", err, CodeTooManyRedirects, node.NoRetry)
	if got := srv.count() - before; got != MaxRedirectRequests {
		t.Errorf("a refused chain sent %d requests; want %d", got, MaxRedirectRequests)
	}
}

// TestHTTPRequestInvalidConfig checks that a bad config fails before any
// request is sent.
func TestHTTPRequestInvalidConfig(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	tests := []struct {
		name        string
		raw         map[string]any
		code, field string
		mention     string
	}{
		{"unknown method", map[string]any{"method": "FETCH"}, CodeInvalidMethod, "method", ""},
		{"method not text", map[string]any{"method": 5}, CodeInvalidMethod, "method", ""},
		{"CONNECT refused", map[string]any{"method": "connect"}, CodeInvalidMethod, "method", ""},
		{"missing method", map[string]any{"method": " "}, node.CodeInvalidConfig, "method", ""},
		{"missing url", map[string]any{"url": ""}, node.CodeInvalidConfig, "url", ""},
		{"ftp url", map[string]any{"url": "ftp://127.0.0.1/x"}, CodeInvalidURL, "url", ""},
		{"no scheme", map[string]any{"url": "127.0.0.1:8080/x"}, CodeInvalidURL, "url", ""},
		{"no host", map[string]any{"url": "http:///x"}, CodeInvalidURL, "url", ""},
		{"unparsable url", map[string]any{"url": "http://[::1"}, CodeInvalidURL, "url", ""},
		{"file url", map[string]any{"url": "file:///etc/passwd"}, CodeInvalidURL, "url", ""},
		{"headers not an object", map[string]any{"headers": `["a"]`}, node.CodeInvalidConfig, "headers", ""},
		{"headers broken JSON", map[string]any{"headers": `{"a":`}, node.CodeInvalidConfig, "headers", ""},
		{"header object value", map[string]any{"headers": map[string]any{"X-Ok": "1", "X-Obj": map[string]any{"a": 1}}},
			node.CodeInvalidConfig, "headers", `"X-Obj"`},
		{"header array value", map[string]any{"headers": map[string]any{"X-List": []any{"a"}}}, node.CodeInvalidConfig, "headers", `"X-List"`},
		{"header null value", map[string]any{"headers": map[string]any{"X-Null": nil}}, node.CodeInvalidConfig, "headers", `"X-Null"`},
		{"header line break", map[string]any{"headers": map[string]any{"X-Inject": "a\r\nX-Evil: 1"}}, node.CodeInvalidConfig, "headers", `"X-Inject"`},
		{"bad header name", map[string]any{"headers": map[string]any{"Bad Name": "v"}}, node.CodeInvalidConfig, "headers", `"Bad Name"`},
		{"api_key control character", map[string]any{"api_key": "ab\x00cd"}, node.CodeInvalidConfig, "api_key", ""},
	}
	for _, tt := range tests {
		raw := map[string]any{"url": srv.URL, "method": "GET"}
		for k, v := range tt.raw {
			raw[k] = v
		}
		_, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}), raw, nodetest.New(nil))
		nodetest.WantError(t, tt.name, err, tt.code, tt.field)
		if err != nil && !strings.Contains(err.Error(), tt.mention) {
			t.Errorf("%s: error %q; want it to name %s", tt.name, err, tt.mention)
		}
	}
	if n := srv.count(); n != 0 {
		t.Errorf("the server received %d requests; want 0", n)
	}
}

func TestHTTPRequestCancelled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	release := make(chan struct{})
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := nodetest.Run(ctx, HTTPRequestSpec(Options{}), map[string]any{"url": srv.URL, "method": "GET"}, nodetest.New(nil))
	ne := wantRetry(t, "cancelled", err, CodeRequestFailed, node.NoRetry)
	if ne != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("error %v does not wrap context.Canceled", err)
	}
}

func TestHTTPRequestLogs(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	env := nodetest.New(nil)
	if _, err := nodetest.Run(t.Context(), HTTPRequestSpec(Options{}),
		map[string]any{"url": srv.URL + "/path?token=hidden", "method": "get"}, env); err != nil {
		t.Fatalf("Run error: %v", err)
	}
	if want := "GET " + srv.URL + "/path: 200 (2 bytes)"; !env.Logged(want) || env.Logged("hidden") {
		t.Errorf("log = %q; want %q without the query", env.Log(), want)
	}
}

// TestNewHTTPRequestDirect builds the node without a spec, as a program
// embedding it would.
func TestNewHTTPRequestDirect(t *testing.T) {
	t.Parallel()
	srv := newServer(t, nil)
	h, err := NewHTTPRequest(Request{Method: "put", URL: srv.URL, Body: map[string]any{"k": "v"}}, Options{}, nil)
	if err != nil {
		t.Fatalf("NewHTTPRequest error: %v", err)
	}
	for range 2 { // a runner may be reused
		if _, err := h.Run(t.Context(), nodetest.New(nil)); err != nil {
			t.Fatalf("Run error: %v", err)
		}
		if got := srv.last(t); got.Method != "PUT" || got.Body != `{"k":"v"}` {
			t.Errorf("server got %s %q; want PUT {\"k\":\"v\"}", got.Method, got.Body)
		}
	}
}
