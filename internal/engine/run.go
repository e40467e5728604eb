package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svcrun/svc/internal/expr"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// nstatus is a node's state in the current scope (the run, or the current
// iteration of its loop).
type nstatus uint8

const (
	stWaiting nstatus = iota
	stReady
	stRunning
	stSuccess
	stSkipped
	stFailed
)

type nstate struct {
	status  nstatus
	pending int // live wires in not yet resolved
	fired   int
	inputs  []node.Input
	input   any
}

// resultOut is the output of a result node (Output) as it completed.
type resultOut struct {
	node int
	v    any
}

// failure is why a run failed.
type failure struct {
	code, msg, nodeID string
}

var errRunTimeout = errors.New("run exceeded its time limit")

// loopState is a running loop.
type loopState struct {
	items              []any
	total              int
	itemVar, indexVar  string
	i                  int // current iteration
	remaining          int // body nodes not resolved in this iteration
	stop               bool
	last               int // body node whose output came last in this iteration
	results            []any
	resultsBytes       int64
	capped             bool
	overlay            map[string]any
	merged             map[string]any
	mergedVer, mergedI uint64
}

// maxAllResults caps a loop's all_results (spec/nodes.md: 256 MB serialized).
const maxAllResults = 256 << 20

// iterationBytes estimates a loop output's own map, without the items.
const iterationBytes = 384

type run struct {
	e    *Engine
	p    *plan
	req  Request
	id   string
	wfID string

	ctx     context.Context
	cancel  context.CancelFunc
	started time.Time
	runInfo map[string]any // $run, built by runVar

	varsMu  sync.Mutex
	vars    atomic.Pointer[map[string]any]
	varsVer atomic.Uint64

	// mu guards outputs, hasOut and ok, which node goroutines read through
	// Env.Source. Only the run goroutine writes them.
	mu      sync.RWMutex
	outputs []any
	hasOut  []bool
	ok      []bool // succeeded in the current scope

	// The fields below belong to the run goroutine.
	view      map[string]any // $node, rebuilt when dirty
	viewDirty bool
	exprEnv   expr.Env
	st        []nstate
	loops     []loopState
	ready     []int
	settleQ   []int
	loopQ     []int
	inflight  int
	done      chan *job
	fail      *failure
	cancelled bool
	timings   []Timing
	results   []resultOut // outputs of result nodes, in completion order

	log   *runLog
	mask  *masker
	meter *meter
}

func newRun(e *Engine, p *plan, req Request) *run {
	n := len(p.nodes)
	r := &run{
		e: e, p: p, req: req, id: req.RunID, wfID: p.wf.ID,
		started: time.Now(),
		outputs: make([]any, n), hasOut: make([]bool, n), ok: make([]bool, n),
		st: make([]nstate, n), loops: make([]loopState, len(p.loops)),
		timings: make([]Timing, n),
		mask:    newMasker(p.secrets, req.Secrets),
	}
	r.meter = newMeter(r, e.opts.SampleInterval)
	r.log = &runLog{meter: r.meter}
	// Variables maps are never written (setVar copies), so one source
	// alone is used as it is.
	var vars map[string]any
	switch {
	case len(req.Variables) == 0 && p.wf.Variables != nil:
		vars = p.wf.Variables
	case len(p.wf.Variables) == 0 && req.Variables != nil:
		vars = req.Variables
	default:
		vars = make(map[string]any, len(p.wf.Variables)+len(req.Variables))
		maps.Copy(vars, p.wf.Variables)
		maps.Copy(vars, req.Variables)
	}
	r.vars.Store(&vars)
	r.meter.addOverhead(value.Size(vars))
	for i := range r.st {
		r.st[i].pending = p.nodes[i].need
	}
	return r
}

// refuse ends a run that must not start.
func (r *run) refuse() *Result {
	r.fail = r.p.refusal
	r.log.add(LogEntry{At: time.Now(), Level: "error", NodeID: r.fail.nodeID, Message: r.fail.msg})
	return r.finish()
}

func (r *run) execute(parent context.Context) *Result {
	var cancel context.CancelFunc
	r.ctx, cancel = context.WithTimeoutCause(parent, r.e.opts.MaxDuration, errRunTimeout)
	defer cancel()
	r.cancel = cancel
	r.meter.start()
	for i := range r.p.nodes {
		pn := &r.p.nodes[i]
		if pn.owner >= 0 || pn.need > 0 {
			continue
		}
		if pn.disabled {
			r.skip(i)
			continue
		}
		st := &r.st[i]
		st.status = stReady
		if r.req.HasPayload {
			st.input = r.req.Payload
		} else {
			st.input = map[string]any{}
		}
		r.ready = append(r.ready, i)
	}
	r.schedule()
	r.meter.stop()
	return r.finish()
}

func (r *run) stopping() bool { return r.fail != nil || r.cancelled }

// schedule is the run loop: it settles wires, advances loops, dispatches
// ready nodes and collects their completions until no work is left.
func (r *run) schedule() {
	for {
		r.drain()
		if !r.stopping() && r.ctx.Err() != nil {
			r.interrupt()
		}
		if !r.stopping() {
			for len(r.ready) > 0 && r.inflight < r.e.opts.MaxParallel {
				i := r.ready[0]
				r.ready = r.ready[1:]
				j := r.prepare(i)
				if r.inflight == 0 && len(r.ready) == 0 {
					r.runJob(j)
					r.complete(j)
					break
				}
				r.inflight++
				if r.done == nil {
					r.done = make(chan *job, len(r.p.nodes))
				}
				go func() {
					r.runJob(j)
					r.done <- j
				}()
			}
		}
		if r.inflight == 0 {
			if r.stopping() || (len(r.ready) == 0 && len(r.settleQ) == 0 && len(r.loopQ) == 0) {
				return
			}
			continue
		}
		if r.stopping() {
			j := <-r.done
			r.inflight--
			r.complete(j)
			continue
		}
		select {
		case j := <-r.done:
			r.inflight--
			r.complete(j)
		case <-r.ctx.Done():
			r.interrupt()
		}
	}
}

// interrupt records why the run context ended: the caller cancelled it or
// the time limit passed. A node failure has already set r.fail.
func (r *run) interrupt() {
	if r.fail != nil {
		return
	}
	if errors.Is(context.Cause(r.ctx), errRunTimeout) {
		r.fail = &failure{code: CodeRunTimeout, msg: fmt.Sprintf("run exceeded the limit of %s", r.e.opts.MaxDuration)}
		return
	}
	r.cancelled = true
}

// drain settles nodes whose wires are all resolved and ends finished loop
// iterations, until nothing more follows.
func (r *run) drain() {
	for len(r.settleQ) > 0 || len(r.loopQ) > 0 {
		if r.stopping() {
			r.settleQ, r.loopQ = r.settleQ[:0], r.loopQ[:0]
			return
		}
		for len(r.settleQ) > 0 {
			i := r.settleQ[0]
			r.settleQ = r.settleQ[1:]
			if r.st[i].fired > 0 && !r.p.nodes[i].disabled {
				r.st[i].status = stReady
				r.ready = append(r.ready, i)
			} else {
				r.skip(i)
			}
		}
		if len(r.loopQ) > 0 {
			l := r.loopQ[0]
			r.loopQ = r.loopQ[1:]
			r.endIteration(l)
		}
	}
}

func (r *run) emit(i int, s Status, code string) {
	sink := r.e.opts.Events
	if sink == nil {
		return
	}
	iter := -1
	if o := r.p.nodes[i].owner; o >= 0 {
		iter = r.loops[o].i
	}
	sink.NodeStatus(NodeEvent{
		RunID: r.id, WorkflowID: r.wfID, NodeID: r.p.nodes[i].id, NodeTypeID: r.p.nodes[i].spec.TypeID,
		Status: s, Iteration: iter, ErrorCode: code, At: time.Now(),
	})
}

// skip marks a node skipped: it will not run in this scope, and no wire
// leaves it. A skipped loop skips its whole body.
func (r *run) skip(i int) {
	r.st[i].status = stSkipped
	r.emit(i, StatusSkipped, "")
	pn := &r.p.nodes[i]
	if pn.loop >= 0 {
		r.skipBody(pn.loop)
	}
	r.route(i, "", nil)
	r.resolved(i)
}

func (r *run) skipBody(l int) {
	for _, b := range r.p.loops[l].body {
		if r.st[b].status == stWaiting {
			r.st[b].status = stSkipped
			r.emit(b, StatusSkipped, "")
		}
	}
}

// route fires the live wires that leave a node's port and resolves the
// others as dead. An empty port kills every wire. A loop's each_item wires
// belong to its iterations and are left alone.
func (r *run) route(i int, port string, v any) {
	pn := &r.p.nodes[i]
	for _, ei := range pn.out {
		pe := &r.p.edges[ei]
		if !pe.live || (pn.loop >= 0 && pe.fromPort == portEachItem) {
			continue
		}
		if port != "" && pe.fromPort == port {
			r.fire(ei, v)
		} else {
			r.kill(ei)
		}
	}
}

func (r *run) fire(ei int, v any) {
	pe := &r.p.edges[ei]
	st := &r.st[pe.to]
	st.fired++
	st.input = v
	st.inputs = append(st.inputs, node.Input{From: r.p.nodes[pe.from].id, FromPort: pe.fromPort, Port: pe.toPort, Value: v})
	r.kill(ei)
}

func (r *run) kill(ei int) {
	t := r.p.edges[ei].to
	r.st[t].pending--
	if r.st[t].pending == 0 && r.st[t].status == stWaiting {
		r.settleQ = append(r.settleQ, t)
	}
}

// resolved notes that a node is finished in its scope; the last body node
// of an iteration ends the iteration.
func (r *run) resolved(i int) {
	if o := r.p.nodes[i].owner; o >= 0 {
		ls := &r.loops[o]
		ls.remaining--
		if ls.remaining == 0 {
			r.loopQ = append(r.loopQ, o)
		}
	}
}

// setOutput publishes a node's output.
func (r *run) setOutput(i int, v any) { r.publish(i, v, value.Size(v)) }

// publish publishes a node's output with the bytes it is accounted for. A
// loop's outputs share the source array, which its source node already
// accounts for, so they are not sized by walking.
func (r *run) publish(i int, v any, size int64) {
	r.mu.Lock()
	r.outputs[i] = v
	r.hasOut[i] = true
	r.ok[i] = true
	r.mu.Unlock()
	r.viewDirty = true
	r.meter.setNode(i, size)
	if o := r.p.nodes[i].owner; o >= 0 {
		r.loops[o].last = i
	}
}

// job is one execution of a node.
type job struct {
	env    nodeEnv
	idx    int
	runner node.Runner
	raw    map[string]any // evaluated config, when it has expression fields
	err    error          // set by prepare or runJob on failure
	res    node.Result
	// tries counts the attempts; start and dur time them.
	tries int
	start time.Time
	dur   time.Duration
}

// prepare marks a node running and evaluates its expression fields. It runs
// on the run goroutine, which owns everything an expression reads.
func (r *run) prepare(i int) *job {
	pn := &r.p.nodes[i]
	st := &r.st[i]
	st.status = stRunning
	r.emit(i, StatusRunning, "")
	j := &job{idx: i, start: time.Now()}
	j.env = nodeEnv{r: r, idx: i, input: st.input, inputs: st.inputs}
	if pn.owner >= 0 {
		j.env.overlay = r.loops[pn.owner].overlay
	}
	r.meter.nodeStarted(i, j.start)
	if len(pn.cfg.dynamic) == 0 {
		return j
	}
	env := &r.exprEnv
	env.Vars = r.varsFor(pn.owner)
	env.Run = nil
	if pn.cfg.usesRun {
		env.Run = r.runVar()
	}
	env.Input = st.input
	env.Node = nil
	if pn.cfg.usesNode {
		env.Node = r.nodeView()
	}
	raw := maps.Clone(pn.cfg.raw)
	for _, f := range pn.cfg.dynamic {
		var (
			v   any
			err error
		)
		switch {
		case f.deep:
			v, _, err = evalDeep(raw[f.name], env)
		case f.tmpl != nil:
			v, err = f.tmpl.Eval(env)
		default:
			src, isStr := raw[f.name].(string)
			if !isStr {
				continue // a credential reference, resolved in runJob
			}
			_, err = expr.Compile(src) // a template that does not compile
		}
		if err != nil {
			j.err = &node.Error{Code: node.CodeExpression, Field: f.name, Message: f.name + ": " + err.Error(), Err: err}
			return j
		}
		raw[f.name] = v
		if s, isStr := v.(string); isStr && f.secret && s != "" {
			r.mask.add(s)
		}
	}
	j.raw = raw
	return j
}

// runVar returns $run, built on first use.
func (r *run) runVar() map[string]any {
	if r.runInfo == nil {
		trigger := r.req.Trigger
		if trigger == "" {
			trigger = "manual"
		}
		r.runInfo = map[string]any{
			"id": r.id, "workflow_id": r.wfID, "trigger": trigger,
			"started_at": r.started.UTC().Format(time.RFC3339Nano),
		}
	}
	return r.runInfo
}

// varsFor returns $vars for a node: the run's variables, with the loop's
// item and index variables on top inside a loop body.
func (r *run) varsFor(owner int) map[string]any {
	vars := *r.vars.Load()
	if owner < 0 {
		return vars
	}
	ls := &r.loops[owner]
	ver := r.varsVer.Load()
	if ls.merged == nil || ls.mergedVer != ver || ls.mergedI != uint64(ls.i) {
		m := make(map[string]any, len(vars)+2)
		maps.Copy(m, vars)
		maps.Copy(m, ls.overlay)
		ls.merged, ls.mergedVer, ls.mergedI = m, ver, uint64(ls.i)
	}
	return ls.merged
}

// nodeView returns $node: every output produced so far, including a body
// node's output from an earlier iteration.
func (r *run) nodeView() map[string]any {
	if r.view == nil || r.viewDirty {
		m := make(map[string]any, len(r.outputs))
		for i, ok := range r.hasOut {
			if ok {
				m[r.p.nodes[i].id] = r.outputs[i]
			}
		}
		r.view, r.viewDirty = m, false
	}
	return r.view
}

// runJob builds the node's runner and runs it, with retries. It runs on the
// node's own goroutine, or inline on the run goroutine.
func (r *run) runJob(j *job) {
	defer func() { j.dur = time.Since(j.start) }()
	if j.err != nil {
		return
	}
	pn := &r.p.nodes[j.idx]
	if j.raw == nil {
		j.runner, j.err = pn.cfg.static(pn.spec)
	} else {
		j.runner, j.err = r.build(pn, j.raw)
	}
	if j.err != nil {
		return
	}
	for {
		j.tries++
		j.res, j.err = r.invoke(j)
		if j.err == nil || r.ctx.Err() != nil {
			return
		}
		wait, again := retryWait(pn, j.err, j.tries)
		if !again {
			return
		}
		j.env.Logger().Warn(fmt.Sprintf("attempt %d of %d failed (%s); retrying in %s",
			j.tries, pn.retry.MaxAttempts, node.CodeOf(j.err), wait))
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return
		}
	}
}

// build resolves credential references, decodes the config and constructs
// the runner.
func (r *run) build(pn *pnode, raw map[string]any) (node.Runner, error) {
	for _, f := range pn.cfg.dynamic {
		id, isRef := node.CredentialRef(raw[f.name])
		if !isRef || !f.credential {
			continue
		}
		if r.e.opts.Credentials == nil {
			return nil, node.FieldError(node.CodeInvalidConfig, f.name, "names a saved credential, but no credential store is attached")
		}
		secret, err := r.e.opts.Credentials.CredentialValue(r.ctx, id)
		if err != nil {
			return nil, node.FieldError(node.CodeInvalidConfig, f.name, "the saved credential cannot be read: %v", err)
		}
		r.mask.add(secret)
		raw[f.name] = secret
	}
	cfg, err := pn.spec.Decode(raw)
	if err != nil {
		return nil, err
	}
	return pn.spec.New(cfg)
}

// invoke calls the node, turning a panic into an INTERNAL_ERROR failure.
func (r *run) invoke(j *job) (res node.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			r.e.opts.Logger.Error("node panicked", "run_id", r.id, "node_id", r.p.nodes[j.idx].id,
				"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = node.Errorf(node.CodeInternal, "node %s failed unexpectedly (internal error)", r.p.nodes[j.idx].id)
		}
	}()
	return j.runner.Run(r.ctx, &j.env)
}

// retryWait decides whether a failed attempt is tried again (rule 4 of
// spec/nodes.md): only when the node's retry setting is on, attempts are
// left, and the node's typed error says repeating is safe. The wait doubles
// from backoff_ms each attempt, capped at five minutes, and is at least what
// the error asks for (a 429's Retry-After).
func retryWait(pn *pnode, err error, tries int) (time.Duration, bool) {
	rt := pn.retry
	if rt == nil || !rt.Enabled || tries >= rt.MaxAttempts {
		return 0, false
	}
	var ne *node.Error
	if !errors.As(err, &ne) || ne.Retry != node.Retryable {
		return 0, false
	}
	wait := time.Duration(rt.BackoffMs) * time.Millisecond << (tries - 1)
	if limit := 5 * time.Minute; wait > limit || wait < 0 {
		wait = limit
	}
	return max(wait, ne.After), true
}

// complete applies a finished job to the run.
func (r *run) complete(j *job) {
	i := j.idx
	pn := &r.p.nodes[i]
	st := &r.st[i]
	t := &r.timings[i]
	if t.Runs == 0 {
		t.StartedAtMs = j.start.UnixMilli()
	}
	t.Runs++
	t.Attempts += j.tries
	t.DurationMs += float64(j.dur.Microseconds()) / 1000
	if j.err != nil {
		r.failed(i, j.err)
		return
	}
	if j.res.Iterate != nil && pn.loop >= 0 {
		r.startLoop(i, j.res.Iterate)
		return
	}
	st.status = stSuccess
	if !j.res.Stop || j.res.Output != nil {
		r.setOutput(i, j.res.Output)
	}
	r.emit(i, StatusSuccess, "")
	if pn.spec.Result {
		r.results = append(r.results, resultOut{i, j.res.Output})
	}
	if r.stopping() {
		return
	}
	switch {
	case j.res.Stop:
		if pn.owner >= 0 {
			r.loops[pn.owner].stop = true
		}
		r.route(i, "", nil)
	default:
		port := j.res.Port
		if port == "" {
			port = pn.spec.DefaultOutput()
		}
		r.route(i, port, j.res.Output)
	}
	r.resolved(i)
}

// failed handles a node failure: through the error port when one is wired,
// else by failing the run.
func (r *run) failed(i int, err error) {
	pn := &r.p.nodes[i]
	r.st[i].status = stFailed
	if r.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		// The run ended under the node: cancelled, timed out, or another
		// node failed.
		r.emit(i, StatusError, CodeCancelled)
		r.interrupt()
		return
	}
	code := node.CodeOf(err)
	msg := err.Error()
	r.emit(i, StatusError, code)
	r.logNode(slog.LevelError, i, fmt.Sprintf("failed (%s): %s", code, msg))
	if r.stopping() {
		return
	}
	if pn.errorRoute {
		out := map[string]any{"error": msg, "code": code, "node_id": pn.id}
		r.setOutput(i, out)
		r.mu.Lock()
		r.ok[i] = false
		r.mu.Unlock()
		r.route(i, node.PortError, out)
		r.resolved(i)
		return
	}
	r.fail = &failure{code: code, msg: fmt.Sprintf("node %s: %s", pn.id, msg), nodeID: pn.id}
	r.cancel()
}

func (r *run) logNode(level slog.Level, i int, msg string) {
	r.log.add(LogEntry{At: time.Now(), Level: levelName(level), NodeID: r.p.nodes[i].id, Message: msg})
}

// startLoop begins the iterations of a loop node.
func (r *run) startLoop(i int, it *node.Iteration) {
	l := r.p.nodes[i].loop
	r.loops[l] = loopState{
		items: it.Items, total: it.Total, itemVar: it.ItemVar, indexVar: it.IndexVar,
		results: make([]any, 0, min(len(it.Items), 1024)),
	}
	if len(it.Items) == 0 {
		r.skipBody(l)
		r.finishLoop(l)
		return
	}
	r.startIteration(l)
}

func (r *run) startIteration(l int) {
	ls := &r.loops[l]
	pl := &r.p.loops[l]
	item := ls.items[ls.i]
	out := map[string]any{"items": ls.items, "total": ls.total, "item": item, "index": ls.i, "done": false}
	out[ls.itemVar] = item
	out[ls.indexVar] = ls.i
	ls.overlay = map[string]any{ls.itemVar: item, ls.indexVar: ls.i}
	ls.last = -1
	ls.remaining = len(pl.body)
	r.mu.Lock()
	for _, b := range pl.body {
		r.ok[b] = false
	}
	r.mu.Unlock()
	r.publish(pl.node, out, iterationBytes+value.Size(item)+ls.resultsBytes)
	for _, b := range pl.body {
		st := &r.st[b]
		*st = nstate{pending: r.p.nodes[b].need, inputs: st.inputs[:0]}
	}
	for _, ei := range pl.each {
		r.fire(ei, out)
	}
}

// endIteration records the iteration's result and starts the next one, or
// ends the loop after the last item or a Stop.
func (r *run) endIteration(l int) {
	ls := &r.loops[l]
	if ls.last >= 0 && !ls.capped {
		v := r.outputs[ls.last]
		size := value.Size(v)
		if ls.resultsBytes+size > maxAllResults {
			ls.capped = true
			r.logNode(slog.LevelWarn, r.p.loops[l].node, "all_results reached its 256 MB cap; later iterations are not added")
		} else {
			ls.results = append(ls.results, v)
			ls.resultsBytes += size
		}
	}
	ls.i++
	if ls.stop || ls.i >= len(ls.items) {
		r.finishLoop(l)
		return
	}
	if r.ctx.Err() != nil {
		r.interrupt()
		return
	}
	r.startIteration(l)
}

func (r *run) finishLoop(l int) {
	ls := &r.loops[l]
	i := r.p.loops[l].node
	out := map[string]any{
		"items": ls.items[:ls.i], "total": ls.total, "all_results": ls.results, "done": true,
		"item": nil, "index": nil,
	}
	if ls.i > 0 {
		out["item"], out["index"] = ls.items[ls.i-1], ls.i-1
	}
	r.st[i].status = stSuccess
	r.publish(i, out, iterationBytes+ls.resultsBytes)
	r.emit(i, StatusSuccess, "")
	r.route(i, portDone, out)
	r.resolved(i)
}
