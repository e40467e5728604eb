// Package scheduler runs workflows in the background (spec/server.md,
// Scheduler): one job per workflow, fired by its Schedule trigger (interval,
// cron, once) or by requests to its Webhook trigger's listener. Jobs are
// stored, so that those started with always_on come back after a restart.
//
// Job statuses: a started job is active; Stop makes it stopped; a once
// schedule that has fired is done; a job that cannot go on (its workflow was
// deleted or no longer parses, its listener failed) is error. At shutdown
// the active jobs without always_on become paused: they do not come back by
// themselves, and start resumes them. Firings missed while the server was
// down are not replayed: a restarted job fires next at its next time after
// the restart.
package scheduler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/nodes/trigger"
	"github.com/svcrun/svc/internal/schedule"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/value"
	"github.com/svcrun/svc/internal/workflow"
	"golang.org/x/sync/errgroup"
)

// Publisher receives the scheduler's events (an *events.Hub). Publish must
// not block.
type Publisher interface {
	Publish(events.Event)
}

// Options configure a Scheduler. Store and Engine are required.
type Options struct {
	Store  store.Store
	Engine *engine.Engine
	Events Publisher
	Logger *slog.Logger
	// Secrets returns the values to mask in run results (saved
	// credentials).
	Secrets func() []string
	// Host is the address webhook listeners bind: 127.0.0.1 unless a test
	// says otherwise.
	Host string
	// Tokens verifies widget tokens minted from a Webhook secret (a
	// *widget.Signer); a listener then accepts such a token in place of
	// the secret. Nil accepts the raw secret only.
	Tokens TokenVerifier
}

// TokenVerifier verifies a token minted for a workflow's Webhook secret.
type TokenVerifier interface {
	Verify(workflowID, secret, token string, now time.Time) error
}

// RejectError is a start the scheduler refuses: the workflow is missing,
// not schedulable, its trigger's config is invalid, or its port is taken.
// The REST route answers 400 with its message.
type RejectError struct{ Msg string }

// Error returns the message.
func (e *RejectError) Error() string { return e.Msg }

// ErrClosed is the error of a start after Close.
var ErrClosed = errors.New("scheduler: closed")

func reject(format string, args ...any) error { return &RejectError{fmt.Sprintf(format, args...)} }

// Scheduler runs the background jobs.
type Scheduler struct {
	opts Options
	log  *slog.Logger

	mu        sync.Mutex
	jobs      map[string]*job
	listeners map[int]*listener
	closed    bool

	runs   context.Context // cancelled by Close
	cancel context.CancelFunc
	// running counts the runs and row writes in flight; track adds to it
	// only until Close begins waiting (trackMu orders the two).
	running sync.WaitGroup
	trackMu sync.RWMutex
	closing bool

	// idLocks serializes Start, Stop and Forget of one workflow (a
	// *sync.Mutex per id), so that starts of different workflows wait for
	// their store writes side by side.
	idLocks sync.Map
}

// lockID locks a workflow's starts and stops; call the result to unlock.
func (s *Scheduler) lockID(id string) (unlock func()) {
	v, _ := s.idLocks.LoadOrStore(id, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// track counts a run or a row write in flight; it reports false once Close
// has begun, and then nothing new may start.
func (s *Scheduler) track() bool {
	s.trackMu.RLock()
	defer s.trackMu.RUnlock()
	if s.closing {
		return false
	}
	s.running.Add(1)
	return true
}

// New returns a scheduler with no jobs; Resume starts the stored ones.
func New(opts Options) *Scheduler {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Host == "" {
		opts.Host = "127.0.0.1"
	}
	if opts.Secrets == nil {
		opts.Secrets = func() []string { return nil }
	}
	s := &Scheduler{opts: opts, log: opts.Logger.With("component", "scheduler"),
		jobs: map[string]*job{}, listeners: map[int]*listener{}}
	s.runs, s.cancel = context.WithCancel(context.Background())
	return s
}

func (s *Scheduler) publish(typ, workflowID string, payload map[string]any) {
	s.publishSession(typ, workflowID, "", payload)
}

// publishSession publishes an event that only the streams of a widget
// session receive (all streams when session is empty).
func (s *Scheduler) publishSession(typ, workflowID, session string, payload map[string]any) {
	if s.opts.Events != nil {
		s.opts.Events.Publish(events.Event{Type: typ, WorkflowID: workflowID, Session: session, Payload: payload})
	}
}

// job is a started job.
type job struct {
	id   string
	kind string // interval, cron, once, webhook
	spec *schedule.Spec
	hook *hookConfig
	port int
	plan *engine.Plan
	// outputNode is the id of the workflow's last Output node, or "";
	// types lists its node types.
	outputNode string
	types      map[string]bool
	stopped    atomic.Bool
	busy       atomic.Bool // a scheduled run is in progress

	// Row writes after runs are coalesced: one writer at a time per job
	// (saving), which writes again while dirty, so that a burst of
	// webhook runs costs about one write per store commit.
	saving atomic.Bool
	dirty  atomic.Bool
	// unsaved is set when the row changed after its last write; Close
	// writes such rows.
	unsaved atomic.Bool
	// wmu orders the row writes: a write after a run never lands after
	// the write of Stop.
	wmu sync.Mutex

	mu    sync.Mutex // guards what follows
	row   store.Job
	timer *time.Timer
	next  time.Time
	dedup map[[32]byte]time.Time
}

// findTrigger finds the workflow's background trigger: the first enabled
// Schedule or Webhook node.
func findTrigger(doc *workflow.Workflow) *workflow.Node {
	for i := range doc.Nodes {
		n := &doc.Nodes[i]
		if !n.Disabled && (n.NodeTypeID == "schedule" || n.NodeTypeID == "webhook") {
			return n
		}
	}
	return nil
}

// Start starts (or restarts) a workflow's job. alwaysOn nil keeps the
// stored setting (false for a job never started); port overrides a Webhook
// trigger's port.
func (s *Scheduler) Start(ctx context.Context, id string, alwaysOn *bool, port *int) error {
	defer s.lockID(id)()
	rec, err := s.opts.Store.WorkflowGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return reject("workflow %q not found", id)
	}
	if err != nil {
		return err
	}
	doc, err := workflow.Parse(rec.Doc)
	if err != nil {
		return reject("workflow %q does not parse: %v", id, err)
	}
	trig := findTrigger(doc)
	if trig == nil {
		return reject("workflow %q cannot run in the background: it has no enabled Schedule or Webhook trigger", id)
	}
	spec, ok := s.opts.Engine.Registry().Lookup(trig.NodeTypeID)
	if !ok {
		return reject("node %q: type %q is not registered", trig.ID, trig.NodeTypeID)
	}
	cfg, err := spec.Decode(trig.Config)
	if err != nil {
		return reject("node %q: %v (%s)", trig.ID, err, node.CodeOf(err))
	}
	j := &job{id: id, plan: s.opts.Engine.Prepare(doc), types: map[string]bool{}}
	for _, n := range doc.Nodes {
		j.types[n.NodeTypeID] = true
		if n.NodeTypeID == "output" && !n.Disabled {
			j.outputNode = n.ID
		}
	}
	switch trig.NodeTypeID {
	case "webhook":
		j.kind = "webhook"
		j.hook = newHookConfig(cfg)
		j.port = cfg.Int("port")
		if port != nil {
			if *port < 1024 || *port > 65535 {
				return reject("port_override: %d is outside 1024 to 65535 (%s)", *port, "INVALID_PORT")
			}
			j.port = *port
		}
	case "schedule":
		sp, err := trigger.ParseSchedule(cfg)
		if err != nil {
			return reject("node %q: %v (%s)", trig.ID, err, node.CodeOf(err))
		}
		j.spec, j.kind = sp, sp.Kind
		next, ok := sp.Next(time.Time{}, time.Now().UTC())
		if !ok {
			return reject("node %q: the schedule can never fire (a once run_at in the past, or a date that does not exist)", trig.ID)
		}
		j.next = next
	}
	if fs := j.plan.Findings(); len(fs) > 0 {
		msgs := make([]string, len(fs))
		for i, f := range fs {
			msgs[i] = f.Check + ": " + f.Message
		}
		return reject("workflow %q is not valid: %s", id, strings.Join(msgs, "; "))
	}

	prev, err := s.opts.Store.JobGet(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		prev = &store.Job{CreatedAt: time.Now()}
	case err != nil:
		return err
	}
	j.row = *prev
	j.row.WorkflowID, j.row.WorkflowName, j.row.Status = id, doc.Name, store.JobActive
	j.row.LastError = nil
	if alwaysOn != nil {
		j.row.AlwaysOn = *alwaysOn
	}
	j.row.PortOverride = port
	j.row.Trigger = triggerJSON(trig)
	j.row.NextRunAt = nil
	if !j.next.IsZero() {
		next := j.next
		j.row.NextRunAt = &next
	}

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	old := s.jobs[id]
	if old != nil {
		old.mu.Lock()
		sameTrigger := old.kind == j.kind && bytes.Equal(old.row.Trigger, j.row.Trigger)
		if sameTrigger && j.spec != nil && !old.next.IsZero() {
			// A restart with the trigger unchanged (a save) keeps the
			// schedule: an interval does not start over.
			j.next = old.next
			next := j.next
			j.row.NextRunAt = &next
		}
		j.row.RunCount, j.row.LastRunAt = max(j.row.RunCount, old.row.RunCount), newer(j.row.LastRunAt, old.row.LastRunAt)
		old.mu.Unlock()
	}
	// A webhook takes its path before the old job lets go of its own, so
	// that a restart on the same port and path drops no request.
	if j.kind == "webhook" {
		if err := s.listen(j); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.Unlock()

	// The row is written without s.mu, so that starts of other workflows
	// (a resume of many) share store commits; lockID keeps this one's
	// start and stop in order.
	err = s.opts.Store.JobPut(ctx, &j.row)

	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.closed {
		err = ErrClosed
	}
	if err != nil {
		if j.kind == "webhook" && !s.closed {
			s.unlisten(j)
			if old != nil && old.kind == "webhook" && s.jobs[id] == old {
				if err := s.listen(old); err != nil {
					s.log.Error("cannot restore a webhook listener", "workflow_id", id, "err", err)
				}
			}
		}
		return err
	}
	if old != nil {
		s.disarm(old)
	}
	s.jobs[id] = j
	if j.kind != "webhook" {
		s.arm(j)
	}
	s.publishStatus(j, "waiting", nil, "")
	if n, ok := value.NumberOrText(trig.Config["interval_secs"]); ok && j.kind == schedule.KindInterval && n < schedule.MinIntervalSecs {
		s.publish(events.TypeSchedulerWarning, id, map[string]any{"workflow_id": id,
			"message": fmt.Sprintf("interval_secs %v is below the minimum of %d: the job fires every %d seconds", n, schedule.MinIntervalSecs, schedule.MinIntervalSecs)})
	}
	return nil
}

// Stop stops a workflow's job; stopping a job that is not running is no
// error. The stored row says stopped.
func (s *Scheduler) Stop(ctx context.Context, id string) error {
	defer s.lockID(id)()
	s.mu.Lock()
	j := s.jobs[id]
	if j != nil {
		s.disarm(j)
		delete(s.jobs, id)
	}
	s.mu.Unlock()
	if j == nil {
		row, err := s.opts.Store.JobGet(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if row.Status == store.JobDone || row.Status == store.JobStopped {
			return nil // a once job that fired stays done
		}
		row.Status, row.NextRunAt = store.JobStopped, nil
		return s.opts.Store.JobPut(ctx, row)
	}
	j.wmu.Lock()
	defer j.wmu.Unlock()
	j.mu.Lock()
	j.row.Status, j.row.NextRunAt = store.JobStopped, nil
	row := j.row
	j.mu.Unlock()
	if err := s.opts.Store.JobPut(ctx, &row); err != nil {
		return err
	}
	s.publishStatus(j, "stopped", nil, "")
	return nil
}

// Forget stops a deleted workflow's job without writing its row (the
// delete removed it).
func (s *Scheduler) Forget(id string) {
	defer s.lockID(id)()
	s.mu.Lock()
	defer s.mu.Unlock()
	if j := s.jobs[id]; j != nil {
		s.disarm(j)
		delete(s.jobs, id)
	}
}

// disarm stops a job's timer or listener path. s.mu is held.
func (s *Scheduler) disarm(j *job) {
	j.stopped.Store(true)
	j.mu.Lock()
	if j.timer != nil {
		j.timer.Stop()
	}
	j.mu.Unlock()
	if j.kind == "webhook" {
		s.unlisten(j)
	}
}

// arm sets the job's timer for j.next.
func (s *Scheduler) arm(j *job) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.next.IsZero() {
		return
	}
	d := time.Until(j.next)
	if j.timer == nil {
		j.timer = time.AfterFunc(d, func() { s.fire(j) })
		return
	}
	j.timer.Reset(d)
}

// Resume starts the jobs stored with always_on after a restart and marks
// the other active ones paused. It publishes scheduler-ready.
func (s *Scheduler) Resume(ctx context.Context) error {
	var active []store.Job
	for offset := 0; ; offset += 500 {
		rows, _, err := s.opts.Store.JobList(ctx, store.ListOptions{Limit: 500, Offset: offset})
		if err != nil {
			return err
		}
		for _, r := range rows {
			if r.Status == store.JobActive {
				active = append(active, r)
			}
		}
		if len(rows) < 500 {
			break
		}
	}
	// Workers resume side by side, so that their row writes share store
	// commits; the first hard error (closed, cancelled, a store failure)
	// stops them.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(resumeWorkers)
	for i := range active {
		r := &active[i]
		g.Go(func() error { return s.resume(gctx, r) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	s.mu.Lock()
	n := len(s.jobs)
	s.mu.Unlock()
	s.publish(events.TypeSchedulerReady, "", map[string]any{"job_count": n, "timestamp": time.Now().UTC().Format(time.RFC3339Nano)})
	return nil
}

// resumeWorkers is how many stored jobs Resume starts at once.
const resumeWorkers = 16

// resume starts one stored active job again (always_on) or marks it
// paused; a job that cannot start is marked error with a scheduler-error.
func (s *Scheduler) resume(ctx context.Context, r *store.Job) error {
	if !r.AlwaysOn {
		r.Status, r.NextRunAt = store.JobPaused, nil
		return s.opts.Store.JobPut(ctx, r)
	}
	err := s.Start(ctx, r.WorkflowID, nil, r.PortOverride)
	if err == nil || errors.Is(err, ErrClosed) || ctx.Err() != nil {
		return err
	}
	var rej *RejectError
	if !errors.As(err, &rej) {
		return err
	}
	msg := err.Error()
	r.Status, r.LastError, r.NextRunAt = store.JobError, &msg, nil
	if err := s.opts.Store.JobPut(ctx, r); err != nil {
		return err
	}
	s.publish(events.TypeSchedulerError, r.WorkflowID, map[string]any{"workflow_id": r.WorkflowID, "message": "cannot resume: " + msg})
	return nil
}

// Close stops every job, cancels the runs in flight and waits for them, and
// marks the active jobs without always_on paused.
func (s *Scheduler) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	jobs := s.jobs
	s.jobs = map[string]*job{}
	for _, j := range jobs {
		s.disarm(j)
	}
	for _, l := range s.listeners {
		l.close()
	}
	s.listeners = map[int]*listener{}
	s.mu.Unlock()
	s.cancel()
	s.trackMu.Lock()
	s.closing = true
	s.trackMu.Unlock()
	s.running.Wait()
	// Write the rows that change (pausing) or that runs changed since
	// their last write, side by side so that they share store commits.
	var (
		g    errgroup.Group
		mu   sync.Mutex
		errs []error
	)
	g.SetLimit(resumeWorkers)
	for _, j := range jobs {
		j.mu.Lock()
		row := j.row
		j.mu.Unlock()
		pause := row.Status == store.JobActive && !row.AlwaysOn
		if !pause && !j.unsaved.Load() {
			continue
		}
		if pause {
			row.Status, row.NextRunAt = store.JobPaused, nil
		}
		g.Go(func() error {
			if err := s.opts.Store.JobPut(ctx, &row); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
			return nil
		})
	}
	g.Wait()
	return errors.Join(errs...)
}

// fire is a timer's firing of a scheduled job.
func (s *Scheduler) fire(j *job) {
	if j.stopped.Load() {
		return
	}
	now := time.Now().UTC()
	j.mu.Lock()
	scheduled := j.next
	next, more := j.spec.Next(scheduled, now)
	if more {
		j.next = next
	} else {
		j.next = time.Time{}
	}
	j.mu.Unlock()
	if more {
		s.arm(j)
	}
	if !j.busy.CompareAndSwap(false, true) {
		s.publish(events.TypeSchedulerSkip, j.id, map[string]any{"workflow_id": j.id,
			"reason": "the previous run of this workflow is still running"})
		return
	}
	defer j.busy.Store(false)
	payload := map[string]any{"fired_at": now.UTC().Format(time.RFC3339Nano),
		"scheduled_at": scheduled.UTC().Format(time.RFC3339Nano), "mode": j.kind}
	s.runJob(j, "schedule", payload, !more, "")
}

// runJob runs a job's workflow once, records the run and the job's row,
// and publishes its status. last marks the final run of a once schedule.
// It returns nil without running once Close has begun.
func (s *Scheduler) runJob(j *job, kind string, payload any, last bool, session string) *engine.Result {
	if !s.track() {
		return nil // closing
	}
	defer s.running.Done()
	s.publishStatus(j, "running", nil, session)
	runID := engine.NewRunID()
	res := s.opts.Engine.Run(s.runs, engine.Request{Plan: j.plan, RunID: runID, Trigger: kind,
		Payload: payload, HasPayload: true, Secrets: s.opts.Secrets()})
	b, err := res.MarshalJSON()
	if err == nil {
		rec := &store.Run{ID: runID, WorkflowID: j.id, Status: res.Status, Trigger: kind, StartedAt: res.StartedAt,
			FinishedAt: res.FinishedAt, ErrorCode: res.ErrorCode, Result: b}
		if res.Error != nil {
			rec.Error = *res.Error
		}
		err = s.opts.Store.RunFinish(context.WithoutCancel(s.runs), rec)
	}
	if err != nil {
		s.log.Error("cannot record a background run", "workflow_id", j.id, "err", err)
	}

	j.mu.Lock()
	j.row.RunCount++
	started := res.StartedAt
	j.row.LastRunAt = &started
	j.row.LastError = res.Error
	j.row.NextRunAt = nil
	if !j.next.IsZero() {
		next := j.next
		j.row.NextRunAt = &next
	}
	status := "waiting"
	if last {
		j.row.Status, status = store.JobDone, "done"
	}
	if res.Error != nil && !last {
		status = "error"
	}
	j.mu.Unlock()
	j.unsaved.Store(true)
	if last {
		s.writeRow(j)
	} else {
		s.saveRow(j)
	}
	if last {
		s.mu.Lock()
		if s.jobs[j.id] == j {
			delete(s.jobs, j.id)
		}
		s.mu.Unlock()
	}
	s.publishStatus(j, status, res, session)
	return res
}

// saveRow writes the job's row after a run without waiting, coalescing
// the writes of runs that end while one is in flight.
func (s *Scheduler) saveRow(j *job) {
	j.dirty.Store(true)
	if !j.saving.CompareAndSwap(false, true) {
		return // the writer in flight writes again
	}
	if !s.track() {
		j.saving.Store(false)
		return // closing: Close writes the row
	}
	go func() {
		defer s.running.Done()
		for {
			for j.dirty.Swap(false) {
				s.writeRow(j)
			}
			j.saving.Store(false)
			// A run that ended between the last write and now left dirty
			// set and found saving taken: take it over.
			if !j.dirty.Load() || !j.saving.CompareAndSwap(false, true) {
				return
			}
		}
	}()
}

// writeRow writes the job's row unless the job was stopped.
func (s *Scheduler) writeRow(j *job) {
	j.wmu.Lock()
	defer j.wmu.Unlock()
	if j.stopped.Load() {
		return // Stop, Forget, a restart or Close writes or removes the row
	}
	j.unsaved.Store(false) // before the copy: a change after it sets it again
	j.mu.Lock()
	row := j.row
	j.mu.Unlock()
	if err := s.opts.Store.JobPut(context.WithoutCancel(s.runs), &row); err != nil {
		j.unsaved.Store(true)
		s.log.Error("cannot record a job", "workflow_id", j.id, "err", err)
	}
}

// fail ends a job that cannot go on: status error, an error event.
func (s *Scheduler) fail(j *job, cause error) {
	msg := cause.Error()
	s.mu.Lock()
	if s.jobs[j.id] == j {
		s.disarm(j)
		delete(s.jobs, j.id)
	}
	s.mu.Unlock()
	j.wmu.Lock()
	j.mu.Lock()
	j.row.Status, j.row.LastError, j.row.NextRunAt = store.JobError, &msg, nil
	row := j.row
	j.mu.Unlock()
	if err := s.opts.Store.JobPut(context.WithoutCancel(s.runs), &row); err != nil {
		s.log.Error("cannot record a job", "workflow_id", j.id, "err", err)
	}
	j.wmu.Unlock()
	s.publish(events.TypeSchedulerError, j.id, map[string]any{"workflow_id": j.id, "message": msg})
	s.publishStatus(j, "error", nil, "")
}

// Saved tells the scheduler that a workflow was saved: its job, if it has
// one running, restarts on the new version, trigger included (a new port,
// path or schedule takes effect; an unchanged interval keeps its next
// firing). A version that cannot run in the background ends the job with
// status error and a scheduler-error event.
func (s *Scheduler) Saved(ctx context.Context, id string) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil {
		return
	}
	j.mu.Lock()
	port := j.row.PortOverride
	j.mu.Unlock()
	err := s.Start(ctx, id, nil, port)
	var rej *RejectError
	switch {
	case errors.As(err, &rej):
		s.fail(j, fmt.Errorf("the saved workflow cannot run in the background: %s", rej.Msg))
	case err != nil && !errors.Is(err, ErrClosed):
		s.log.Error("cannot restart a job on its saved workflow", "workflow_id", id, "err", err)
	}
}

// newer returns the later of two times, either of which may be nil.
func newer(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.After(*a)) {
		return b
	}
	return a
}

// publishStatus sends a scheduler-status event with the job's row.
func (s *Scheduler) publishStatus(j *job, status string, res *engine.Result, session string) {
	if s.opts.Events == nil {
		return
	}
	if c, ok := s.opts.Events.(interface{ Subscribers() int }); ok && c.Subscribers() == 0 {
		return // nobody listens: skip building the payload
	}
	j.mu.Lock()
	row := j.row
	j.mu.Unlock()
	var last any
	if res != nil && len(res.Outputs) > 0 {
		last = res.Outputs[len(res.Outputs)-1]
	}
	s.publishSession(events.TypeSchedulerStatus, j.id, session, map[string]any{
		"workflow_id": j.id, "workflow_name": row.WorkflowName, "status": status, "run_count": row.RunCount,
		"last_run_at": timeOrNil(row.LastRunAt), "next_run_at": timeOrNil(row.NextRunAt), "last_error": row.LastError,
		"trigger_type": j.kind, "last_result": last,
	})
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// Target is what the widget relay needs of a running job.
type Target struct {
	// Kind is the trigger: interval, cron, once or webhook.
	Kind string
	// Port, Path and Secret are the Webhook listener's.
	Port         int
	Path, Secret string
	// OutputNode is the id of the workflow's last Output node, or "".
	OutputNode string
	types      map[string]bool
}

// Has reports whether the workflow holds a node of type typeID.
func (t *Target) Has(typeID string) bool { return t.types[typeID] }

// Target returns the running job of a workflow, or false when none runs.
func (s *Scheduler) Target(id string) (*Target, bool) {
	s.mu.Lock()
	j := s.jobs[id]
	s.mu.Unlock()
	if j == nil {
		return nil, false
	}
	t := &Target{Kind: j.kind, Port: j.port, OutputNode: j.outputNode, types: j.types}
	if j.hook != nil {
		t.Path, t.Secret = j.hook.path, j.hook.secret
	}
	return t, true
}

// Jobs reports the workflow ids of the jobs running now.
func (s *Scheduler) Jobs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.jobs))
	for id := range s.jobs {
		ids = append(ids, id)
	}
	return ids
}
