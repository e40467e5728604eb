package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/workflow"
)

func (s *Server) health(w http.ResponseWriter, r *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]any{
		"status": "ok", "version": engine.Version, "node_bundled": s.opts.NodeBundled(r.Context()),
	})
	return nil
}

// nodes serves the live registry sorted by type id. The registry does not
// change while the server runs (a plugin reload will swap the engine), so
// the body is built once.
func (s *Server) nodes(w http.ResponseWriter, r *http.Request) error {
	s.catalogMu.Lock()
	if s.catalog == nil {
		specs := s.eng.Registry().Specs()
		descs := make([]node.Descriptor, len(specs))
		for i, sp := range specs {
			descs[i] = sp.Descriptor()
		}
		b, err := json.Marshal(map[string]any{"engine_version": engine.Version, "nodes": descs})
		if err != nil {
			s.catalogMu.Unlock()
			return err
		}
		s.catalog = b
	}
	b := s.catalog
	s.catalogMu.Unlock()
	writeRaw(w, http.StatusOK, b)
	return nil
}

// validate is a dry run: the validation report, always 200 for a well-formed
// envelope; nothing is saved or run.
func (s *Server) validate(w http.ResponseWriter, r *http.Request) error {
	raw, err := s.readEnvelope(w, r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, workflow.Validate([]byte(raw), s.eng.Registry()))
	return nil
}
