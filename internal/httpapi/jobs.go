package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
)

// jobRow is a scheduled job row of spec/server.md section 2.
type jobRow struct {
	WorkflowID   string     `json:"workflow_id"`
	WorkflowName string     `json:"workflow_name"`
	TriggerKind  string     `json:"trigger_kind"`
	Status       string     `json:"status"`
	AlwaysOn     bool       `json:"always_on"`
	RunCount     int64      `json:"run_count"`
	LastRunAt    *time.Time `json:"last_run_at"`
	NextRunAt    *time.Time `json:"next_run_at"`
	CreatedAt    time.Time  `json:"created_at"`
	LastError    *string    `json:"last_error"`
}

func (s *Server) listJobs(w http.ResponseWriter, r *http.Request) error {
	limit, err := queryInt(r, "limit", defaultLimit, maxLimit)
	if err != nil {
		return err
	}
	offset, err := queryInt(r, "offset", 0, 0)
	if err != nil {
		return err
	}
	jobs, total, err := s.store.JobList(r.Context(), store.ListOptions{Limit: limit, Offset: offset, IDs: grants(r)})
	if err != nil {
		return err
	}
	items := make([]jobRow, len(jobs))
	for i, j := range jobs {
		items[i] = jobRow{WorkflowID: j.WorkflowID, WorkflowName: j.WorkflowName, TriggerKind: scheduler.RedactTrigger(j.Trigger),
			Status: j.Status, AlwaysOn: j.AlwaysOn, RunCount: j.RunCount, LastRunAt: utc(j.LastRunAt), NextRunAt: utc(j.NextRunAt),
			CreatedAt: j.CreatedAt.UTC(), LastError: j.LastError}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items, "total": total, "limit": limit, "offset": offset})
	return nil
}

// startBody is the body of POST /api/scheduler/{id}/start. Its fields are
// read one by one, so that a wrong type gets an error naming the field.
type startBody struct {
	AlwaysOn     json.RawMessage `json:"always_on"`
	PortOverride json.RawMessage `json:"port_override"`
}

func (s *Server) startJob(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := permitWorkflow(r, id); err != nil {
		return err
	}
	var body startBody
	if err := s.decodeBody(w, r, &body, true); err != nil {
		return err
	}
	var alwaysOn *bool
	if len(body.AlwaysOn) > 0 && string(body.AlwaysOn) != "null" {
		var b bool
		if json.Unmarshal(body.AlwaysOn, &b) != nil {
			return errorf(http.StatusBadRequest, "always_on: must be true or false")
		}
		alwaysOn = &b
	}
	var port *int
	if len(body.PortOverride) > 0 && string(body.PortOverride) != "null" {
		var n uint16
		if json.Unmarshal(body.PortOverride, &n) != nil {
			return errorf(http.StatusBadRequest, "port_override: must be a whole number from 0 to 65535")
		}
		p := int(n)
		port = &p
	}
	if s.sched == nil {
		return errors.New("scheduler: none attached to this server")
	}
	err := s.sched.Start(r.Context(), id, alwaysOn, port)
	var rej *scheduler.RejectError
	if errors.As(err, &rej) {
		return errorf(http.StatusBadRequest, "%s", rej.Msg)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}

func (s *Server) stopJob(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := permitWorkflow(r, id); err != nil {
		return err
	}
	if s.sched == nil {
		return errors.New("scheduler: none attached to this server")
	}
	if err := s.sched.Stop(r.Context(), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
	return nil
}
