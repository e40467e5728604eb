package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/svcrun/svc/internal/value"
)

// Route is one entry of the route table: its pattern and the scope it
// needs ("" for a public route).
type Route struct {
	Pattern string
	Scope   string
}

// routes registers every route. The table is the one place a route is
// added; Routes lists it for the authorization tests.
func (s *Server) routes() {
	for _, rt := range s.table() {
		h := rt.h
		if rt.Scope != "" {
			h = s.authed(rt.Scope, rt.denied, h)
		}
		s.mux.HandleFunc(rt.Pattern, s.serve(h))
	}
	// Unknown routes are 404 with an empty body, so that a client can tell
	// an older server (no such route) from a missing resource.
	// A known path with another method is 405 with Allow.
	s.mux.HandleFunc("/", s.notFound)
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	w.WriteHeader(http.StatusNotFound)
}

type route struct {
	Route
	h handler
	// denied is the 403 message of a missing scope, when not the usual
	// "<scope> scope required".
	denied string
}

func (s *Server) table() []route {
	return []route{
		{Route{"GET /api/health", ""}, s.health, ""},
		{Route{"GET /svc-widget.js", ""}, s.widgetScript, ""},
		{Route{"POST /api/widget/{workflow_id}/trigger", ""}, s.widgetTrigger, ""},
		{Route{"POST /api/widget/{workflow_id}/mint-token", ""}, s.widgetMint, ""},
		{Route{"GET /api/workflows", ScopeRead}, s.listWorkflows, ""},
		{Route{"POST /api/workflows", ScopeWrite}, s.saveWorkflow, ""},
		{Route{"GET /api/workflows/{id}", ScopeRead}, s.getWorkflow, ""},
		{Route{"DELETE /api/workflows/{id}", ScopeWrite}, s.deleteWorkflow, ""},
		{Route{"POST /api/workflows/{id}/run", ScopeWrite}, s.runWorkflow, ""},
		{Route{"GET /api/nodes", ScopeRead}, s.nodes, ""},
		{Route{"POST /api/validate-workflow", ScopeRead}, s.validate, ""},
		{Route{"GET /api/events", ScopeRead}, s.streamEvents, ""},

		{Route{"GET /api/scheduler", ScopeRead}, s.listJobs, ""},
		{Route{"POST /api/scheduler/{id}/start", ScopeWrite}, s.startJob, ""},
		{Route{"POST /api/scheduler/{id}/stop", ScopeWrite}, s.stopJob, ""},

		{Route{"GET /api/credentials", ScopeRead}, s.listCredentials, ""},
		{Route{"POST /api/credentials", ScopeWrite}, s.saveCredential, ""},
		{Route{"DELETE /api/credentials/{id}", ScopeWrite}, s.deleteCredential, ""},

		{Route{"GET /api/tokens", ScopeAdmin}, s.listTokens, msgTokenAdmin},
		{Route{"POST /api/tokens", ScopeAdmin}, s.createToken, msgTokenAdmin},
		{Route{"DELETE /api/tokens/{id}", ScopeAdmin}, s.revokeToken, msgTokenAdmin},
		{Route{"GET /api/tokens/{id}/workflows", ScopeAdmin}, s.listGrants, msgTokenAdmin},
		{Route{"POST /api/tokens/{id}/workflows/{workflow_id}", ScopeAdmin}, s.addGrant, msgTokenAdmin},
		{Route{"DELETE /api/tokens/{id}/workflows/{workflow_id}", ScopeAdmin}, s.removeGrant, msgTokenAdmin},
	}
}

// Routes lists the registered routes with their scopes.
func (s *Server) Routes() []Route {
	t := s.table()
	out := make([]Route, len(t))
	for i, rt := range t {
		out[i] = rt.Route
	}
	return out
}

// readBody reads a request body up to the limit. An empty body reads as nil.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	return io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.BodyLimit))
}

// decodeBody reads a JSON object body into dst; an empty body leaves dst
// as it is when optional is set.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, dst any, optional bool) error {
	b, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(b)) == 0 {
		if optional {
			return nil
		}
		return errorf(http.StatusBadRequest, "request body is empty; it must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(dst); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return errorf(http.StatusBadRequest, "%s: must be %s", te.Field, jsonKind(te.Type.Kind().String()))
		}
		return errorf(http.StatusBadRequest, "request body is not a valid JSON object")
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "request body holds more than one JSON value")
	}
	return nil
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "bool":
		return "true or false"
	}
	return "a number"
}

// queryInt reads a non-negative integer query parameter with a default and
// a maximum (a larger value is clamped).
func queryInt(r *http.Request, name string, def, maxV int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, errorf(http.StatusBadRequest, "%s: must be a whole number, 0 or more", name)
	}
	if maxV > 0 && n > maxV {
		n = maxV
	}
	return n, nil
}

// objectValue converts a decoded JSON object into the value model.
func objectValue(field string, m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	v, err := value.FromJSON(m)
	if err != nil {
		return nil, errorf(http.StatusBadRequest, "%s: %v", field, err)
	}
	return v.(map[string]any), nil
}
