package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/workflow"
)

// Paging of the workflow list.
const (
	defaultLimit = 100
	maxLimit     = 500
)

type workflowSummary struct {
	ID           string    `json:"id"`
	Name         string    `json:"name"`
	UpdatedAt    time.Time `json:"updated_at"`
	Tags         []string  `json:"tags"`
	CollectionID *string   `json:"collection_id"`
}

func (s *Server) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit", defaultLimit, maxLimit)
	if err != nil {
		return err
	}
	offset, err := queryInt(r, "offset", 0, 0)
	if err != nil {
		return err
	}
	opts := store.ListOptions{Limit: limit, Offset: offset, IDs: grants(r)}
	items, total, err := s.store.WorkflowList(r.Context(), opts)
	if err != nil {
		return err
	}
	out := make([]workflowSummary, len(items))
	for i, it := range items {
		out[i] = workflowSummary{ID: it.ID, Name: it.Name, UpdatedAt: it.UpdatedAt, Tags: it.Tags, CollectionID: it.CollectionID}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": out, "total": total, "limit": limit, "offset": offset})
	return nil
}

// envelope is the body of the save and validate routes: the workflow
// document as a JSON string.
type envelope struct {
	WorkflowJSON *string `json:"workflow_json"`
}

func (s *Server) readEnvelope(w http.ResponseWriter, r *http.Request) (string, error) {
	var env envelope
	if err := s.decodeBody(w, r, &env, false); err != nil {
		return "", err
	}
	if env.WorkflowJSON == nil {
		return "", errorf(http.StatusBadRequest, "workflow_json: is required (the workflow document as a JSON string)")
	}
	return *env.WorkflowJSON, nil
}

// parseIfMatch reads If-Match: a row version, bare or quoted. It reports
// whether the header was sent.
func parseIfMatch(h string) (int64, bool, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false, nil
	}
	if len(h) >= 2 && h[0] == '"' && h[len(h)-1] == '"' {
		h = h[1 : len(h)-1]
	}
	v, err := strconv.ParseInt(h, 10, 64)
	if err != nil || v < 1 {
		return 0, true, errorf(http.StatusBadRequest, "If-Match: must be a row_version, bare or quoted")
	}
	return v, true, nil
}

func etag(v int64) string { return `"` + strconv.FormatInt(v, 10) + `"` }

func (s *Server) saveWorkflow(w http.ResponseWriter, r *http.Request) error {
	want, hasIfMatch, err := parseIfMatch(r.Header.Get("If-Match"))
	if err != nil {
		return err
	}
	raw, err := s.readEnvelope(w, r)
	if err != nil {
		return err
	}
	doc, err := workflow.Parse([]byte(raw))
	if err != nil {
		return errorf(http.StatusBadRequest, "workflow_json: %v", err)
	}
	if err := permitWorkflow(r, doc.ID); err != nil {
		return err
	}
	canonical, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	var ifMatch *int64
	if hasIfMatch {
		ifMatch = &want
	}
	rec := &store.Workflow{ID: doc.ID, Name: doc.Name, Tags: doc.Tags, CollectionID: doc.CollectionID, Doc: canonical}
	version, err := s.store.WorkflowPut(r.Context(), rec, ifMatch)
	var conflict *store.VersionConflictError
	switch {
	case errors.As(err, &conflict):
		return &Error{Status: http.StatusConflict, Message: "workflow changed since it was read",
			Fields: map[string]any{"current_row_version": conflict.Current}}
	case errors.Is(err, store.ErrPrecondition):
		return errorf(http.StatusPreconditionFailed, "workflow no longer exists")
	case err != nil:
		return err
	}
	s.plans.put(doc.ID, version, s.eng.Prepare(doc), ^uint64(0))
	if s.sched != nil {
		s.sched.Saved(context.WithoutCancel(r.Context()), doc.ID)
	}
	w.Header().Set("ETag", etag(version))
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "row_version": version})
	return nil
}

func (s *Server) getWorkflow(w http.ResponseWriter, r *http.Request) error {
	if err := permitWorkflow(r, r.PathValue("id")); err != nil {
		return err
	}
	rec, err := s.store.WorkflowGet(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	if err != nil {
		return err
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, rec.Doc, "", "  "); err != nil {
		return err
	}
	w.Header().Set("ETag", etag(rec.RowVersion))
	writeJSON(w, http.StatusOK, pretty.String())
	return nil
}

func (s *Server) deleteWorkflow(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := permitWorkflow(r, id); err != nil {
		return err
	}
	err := s.store.WorkflowDelete(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, msgNotFound)
	}
	if err != nil {
		return err
	}
	s.plans.drop(id)
	if s.sched != nil {
		s.sched.Forget(id)
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}

// planCache keeps a prepared plan per workflow and row version, so a run
// neither reads nor compiles the document again. Saves and deletes through
// this server keep it current; it holds at most max workflows.
type planCache struct {
	mu  sync.Mutex
	max int
	m   map[string]cachedPlan
	// drops counts deletes, so that a plan read before a delete is not
	// cached after it.
	drops uint64
}

type cachedPlan struct {
	version int64
	plan    *engine.Plan
}

func (c *planCache) get(id string) (cachedPlan, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[id]
	return p, ok
}

func (c *planCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.drops
}

// put caches a plan unless a newer version is cached, or a delete happened
// since generation gen (pass ^uint64(0) to skip that check).
func (c *planCache) put(id string, version int64, p *engine.Plan, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != ^uint64(0) && gen != c.drops {
		return
	}
	if c.m == nil {
		c.m = map[string]cachedPlan{}
	}
	if cur, ok := c.m[id]; ok && cur.version > version {
		return
	}
	if len(c.m) >= c.max {
		for k := range c.m { // drop an arbitrary entry
			delete(c.m, k)
			break
		}
	}
	c.m[id] = cachedPlan{version, p}
}

func (c *planCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
	c.drops++
}

// plan returns the prepared plan of a stored workflow.
func (s *Server) plan(r *http.Request, id string) (*engine.Plan, error) {
	if p, ok := s.plans.get(id); ok {
		return p.plan, nil
	}
	gen := s.plans.generation()
	rec, err := s.store.WorkflowGet(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, msgNotFound)
	}
	if err != nil {
		return nil, err
	}
	doc, err := workflow.Parse(rec.Doc)
	if err != nil {
		return nil, err
	}
	p := s.eng.Prepare(doc)
	s.plans.put(id, rec.RowVersion, p, gen)
	return p, nil
}
