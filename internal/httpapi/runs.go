package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/store"
)

// runningAfter is how long a run goes before it is recorded as running.
const runningAfter = 50 * time.Millisecond

// runBody is the optional body of POST /api/workflows/{id}/run.
type runBody struct {
	InitialVariables map[string]any `json:"initial_variables"`
}

// runWorkflow runs a stored workflow synchronously. It waits up to
// WorkflowWait for the workflow's lock (429 after), then up to MaxQueueWait
// for a run slot (503 with Retry-After after). The run is cancelled when
// the client disconnects or the server shuts down. The result is recorded
// in the run history before the response is written; runtime failure is
// 200 with success false.
func (s *Server) runWorkflow(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if err := permitWorkflow(r, id); err != nil {
		return err
	}
	var body runBody
	if err := s.decodeBody(w, r, &body, true); err != nil {
		return err
	}
	vars, err := objectValue("initial_variables", body.InitialVariables)
	if err != nil {
		return err
	}
	plan, err := s.plan(r, id)
	if err != nil {
		return err
	}
	unlock, err := s.lockWorkflow(r.Context(), id)
	if err != nil {
		return err
	}
	release, err := s.acquireSlot(r.Context())
	if err != nil {
		unlock()
		return err
	}
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.runs, cancel)
	runID := engine.NewRunID()
	started := time.Now()
	// A run still going after runningAfter is recorded as running, so that
	// a crash leaves a trace the next start marks failed; most runs end
	// sooner and cost one write.
	record := time.AfterFunc(runningAfter, func() {
		_ = s.store.RunStart(context.Background(), &store.Run{ID: runID, WorkflowID: id, Status: store.RunRunning, Trigger: "manual", StartedAt: started})
	})
	req := engine.Request{Plan: plan, RunID: runID, Variables: vars, Trigger: "manual", Admin: isAdmin(r)}
	if s.creds != nil {
		req.Secrets = s.creds.Values()
	}
	res := s.eng.Run(ctx, req)
	record.Stop()
	stop()
	cancel()
	release()
	unlock()

	b, err := res.MarshalJSON()
	if err != nil {
		return err
	}
	rec := &store.Run{ID: runID, WorkflowID: id, Status: res.Status, Trigger: "manual", StartedAt: started,
		FinishedAt: res.FinishedAt, ErrorCode: res.ErrorCode, Result: b}
	if res.Error != nil {
		rec.Error = *res.Error
	}
	if err := s.store.RunFinish(context.WithoutCancel(r.Context()), rec); err != nil {
		return err
	}
	if r.Context().Err() != nil {
		return nil // the client is gone
	}
	writeRaw(w, http.StatusOK, b)
	return nil
}

// lockWorkflow takes a workflow's run lock, waiting up to WorkflowWait.
func (s *Server) lockWorkflow(ctx context.Context, id string) (func(), error) {
	v, _ := s.locks.LoadOrStore(id, make(chan struct{}, 1))
	lock := v.(chan struct{})
	unlock := func() { <-lock }
	select {
	case lock <- struct{}{}:
		return unlock, nil
	default:
	}
	t := time.NewTimer(s.opts.WorkflowWait)
	defer t.Stop()
	select {
	case lock <- struct{}{}:
		return unlock, nil
	case <-t.C:
		return nil, errorf(http.StatusTooManyRequests, msgAlreadyRunning)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// acquireSlot takes a slot of the global run semaphore, waiting up to
// MaxQueueWait.
func (s *Server) acquireSlot(ctx context.Context) (func(), error) {
	release := func() { <-s.slots }
	select {
	case s.slots <- struct{}{}:
		return release, nil
	default:
	}
	t := time.NewTimer(s.opts.MaxQueueWait)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return release, nil
	case <-t.C:
		retry := max(1, int(s.opts.MaxQueueWait/time.Second))
		return nil, &Error{Status: http.StatusServiceUnavailable, Message: "no run slot is free; try again later",
			Header: http.Header{"Retry-After": {strconv.Itoa(retry)}}}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
