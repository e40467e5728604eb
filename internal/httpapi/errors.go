package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"strconv"
)

// Error is an HTTP failure with a short, deliberate message for the client.
// Fields are added to the {error} body; Header is set on the response.
type Error struct {
	Status  int
	Message string
	Fields  map[string]any
	Header  http.Header
}

// Error returns the status and message.
func (e *Error) Error() string { return strconv.Itoa(e.Status) + " " + e.Message }

// errorf returns an *Error.
func errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// Messages fixed by the specification.
const (
	msgInvalidToken   = "Invalid or missing token"
	msgInternal       = "internal server error"
	msgAlreadyRunning = "workflow already running"
	msgNotFound       = "workflow not found"
	msgACLDenied      = "token ACL does not permit access to this workflow"
	msgServerWide     = "token is restricted to specific workflows and cannot use server-wide routes"
	msgTokenAdmin     = "admin scope required for token management"
	msgRevokeSelf     = "Cannot revoke the token you are currently using"
	msgRateLimited    = "rate limit exceeded"
	msgTooManyStreams = "too many active SSE connections"
)

// handler is a route handler; its error is written by serveError.
type handler func(w http.ResponseWriter, r *http.Request) error

func (s *Server) serve(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.serveError(w, r, err)
		}
	}
}

// serveError is the one place errors become responses. An *Error is
// written as it says; anything else is a 500 whose cause goes only to the
// log.
func (s *Server) serveError(w http.ResponseWriter, r *http.Request, err error) {
	var e *Error
	if !errors.As(err, &e) {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			e = errorf(http.StatusRequestEntityTooLarge, "request body is larger than %d bytes", tooBig.Limit)
		} else {
			s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
			e = &Error{Status: http.StatusInternalServerError, Message: msgInternal}
		}
	}
	for k, v := range e.Header {
		w.Header()[k] = v
	}
	body := map[string]any{"error": e.Message}
	maps.Copy(body, e.Fields)
	writeJSON(w, e.Status, body)
}

// writeJSON writes v as a JSON response.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal server error"}`)
	}
	writeRaw(w, status, b)
}

// writeRaw writes bytes that are already JSON.
func writeRaw(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Security-Policy", "default-src 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}
