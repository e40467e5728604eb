package mcpbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/client"
)

// op names a server call in messages: the route and, for workflows, the id.
type op struct {
	route string // "GET /api/workflows/{id}"
	id    string // workflow id, when the route has one
}

// timedOut is a server call (or a run) that did not answer in time.
type timedOut struct {
	after time.Duration
	run   bool
}

func (e *timedOut) Error() string {
	secs := int(e.after / time.Second)
	if e.run {
		return fmt.Sprintf("Timed out after %ds: the run did not finish within wait_secs. The bridge closed the request, "+
			"so the server cancelled the run and its result is lost (no tool can look it up later). "+
			"Call run_workflow again with a larger wait_secs (at most %d).", secs, maxWaitSecs)
	}
	return fmt.Sprintf("Timed out after %ds: the server did not answer in time (--timeout-secs %d).", secs, secs)
}

// message turns the error of a server call into the text of a failed tool
// result, in the forms of the spec's errors table (spec/nodes.md section 7).
// The bridge never retries: a wait the server asks for is passed on.
func (b *Bridge) message(o op, err error, redirect string) string {
	var te *timedOut
	if errors.As(err, &te) {
		return te.Error()
	}
	var ce *client.Error
	if errors.As(err, &ce) {
		return b.statusMessage(o, ce, redirect)
	}
	if errors.Is(err, context.Canceled) {
		return "Cancelled: the client cancelled the call before the server answered."
	}
	var ue *url.Error
	var ne net.Error
	if errors.As(err, &ue) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		cause := err
		if ue != nil {
			cause = ue.Err
		}
		return fmt.Sprintf("Cannot reach the server at %s: %v. Check SVC_URL (or --url) and that svc-server is running there.",
			b.url, cause)
	}
	return fmt.Sprintf("The server's answer to %s could not be read (%v): is SVC_URL (%s) a svc server?", o.route, err, b.url)
}

func (b *Bridge) statusMessage(o op, e *client.Error, redirect string) string {
	msg := strings.TrimSpace(e.Message)
	text := http.StatusText(e.Status)
	switch {
	case e.Status == http.StatusUnauthorized:
		return "401 Unauthorized: the server refused the token (" + orDefault(msg, "Invalid or missing token") +
			"). SVC_TOKEN is wrong, expired or revoked; ask for a new token and restart the bridge with it."
	case e.Status == http.StatusForbidden:
		return "403 Forbidden by the server: " + orDefault(msg, "access denied") +
			". The token's scopes or its workflow list do not allow this call."
	case e.Status == http.StatusNotFound && msg == "":
		return "404: this server has no such route (" + o.route + "): it is older than this bridge " +
			"(or SVC_URL does not point at a svc server). Update svc-server to use this tool."
	case e.Status == http.StatusNotFound:
		what := ""
		if o.id != "" {
			what = fmt.Sprintf(" (id %q; list_workflows shows the ids)", o.id)
		}
		return "404 Not found: " + msg + what
	case e.Status == http.StatusConflict && e.CurrentRowVersion > 0:
		return fmt.Sprintf("409 Conflict: %s; current_row_version %d. Read it again with get_workflow, "+
			"apply the change to that version, and save with if_match_row_version %d.",
			orDefault(msg, "the workflow changed since it was read"), e.CurrentRowVersion, e.CurrentRowVersion)
	case e.Status == http.StatusTooManyRequests:
		return "429 Too Many Requests: " + orDefault(msg, "too many requests") + retryAfter(e.RetryAfter) +
			". The bridge does not retry."
	case e.Status == http.StatusServiceUnavailable:
		return "503 Service Unavailable: " + orDefault(msg, "the server is at its run limit") + retryAfter(e.RetryAfter) +
			". The bridge does not retry."
	case e.Status >= 300 && e.Status < 400:
		to := ""
		if redirect != "" {
			to = " to " + redirect
		}
		return fmt.Sprintf("%d %s: the server redirects%s, and the bridge does not follow redirects. "+
			"Set SVC_URL (or --url) to the server's own address.", e.Status, text, to)
	case e.Status == http.StatusInternalServerError:
		return "500 Internal Server Error: " + orDefault(msg, "internal server error") + " (the cause is in the server's log)."
	}
	if msg == "" {
		return fmt.Sprintf("%d %s", e.Status, text)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, text, msg)
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func retryAfter(h string) string {
	h = strings.TrimSpace(h)
	if h == "" {
		return " (retry later)"
	}
	if strings.Trim(h, "0123456789") == "" {
		return " (retry after " + h + " s)"
	}
	return " (retry after " + h + ")"
}
