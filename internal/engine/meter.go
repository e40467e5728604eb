package engine

import (
	"sync"
	"sync/atomic"
	"time"
)

// meter does a run's byte accounting: the bytes each node's output holds,
// the executor's own overhead (run state, variables, log), and samples of
// their total over time. Sizes are estimates (value.Size), not heap
// measurements: Go cannot attribute heap bytes to a goroutine.
type meter struct {
	r        *run
	overhead atomic.Int64
	total    atomic.Int64
	nodes    []nodeMeter

	mu       sync.Mutex
	begin    time.Time
	end      time.Time
	interval time.Duration
	history  []Sample
	peak     Sample
	minimum  int64
	sum      float64
	count    int
	timer    *time.Timer
}

type nodeMeter struct {
	bytes     atomic.Int64
	startedMs atomic.Int64 // 0 until the node first runs
}

// Sample is the run's bytes at a moment.
type Sample struct {
	AtMs  int64 `json:"at_ms"`
	Bytes int64 `json:"bytes"`
}

// maxHistory bounds a run's samples; when full, every other sample is
// dropped and the interval doubles.
const maxHistory = 1024

// runBaseBytes and nodeStateBytes estimate the executor's fixed state.
const (
	runBaseBytes   = 2048
	nodeStateBytes = 160
)

func newMeter(r *run, interval time.Duration) *meter {
	m := &meter{r: r, interval: interval, nodes: make([]nodeMeter, len(r.p.nodes)), begin: r.started}
	m.addOverhead(runBaseBytes + nodeStateBytes*int64(len(r.p.nodes)))
	return m
}

func (m *meter) addOverhead(d int64) {
	m.overhead.Add(d)
	m.total.Add(d)
}

// setNode sets the bytes held by a node's output.
func (m *meter) setNode(i int, b int64) {
	old := m.nodes[i].bytes.Swap(b)
	m.total.Add(b - old)
}

func (m *meter) nodeStarted(i int, at time.Time) {
	m.nodes[i].startedMs.CompareAndSwap(0, at.UnixMilli())
}

// start takes the baseline sample and samples on a timer from then on. The
// timer runs its function only when it fires, so a run shorter than the
// interval costs no goroutine.
func (m *meter) start() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.begin = time.Now()
	m.record(m.begin)
	m.timer = time.AfterFunc(m.interval, m.tick)
}

func (m *meter) tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.end.IsZero() {
		return
	}
	m.record(time.Now())
	m.timer.Reset(m.interval)
}

// stop ends sampling and takes the final sample.
func (m *meter) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.timer == nil {
		return
	}
	m.timer.Stop()
	m.end = time.Now()
	m.record(m.end)
}

// record adds a sample; m.mu is held.
func (m *meter) record(now time.Time) {
	s := Sample{AtMs: now.UnixMilli(), Bytes: m.total.Load()}
	if m.count == 0 || s.Bytes > m.peak.Bytes {
		m.peak = s
	}
	if m.count == 0 || s.Bytes < m.minimum {
		m.minimum = s.Bytes
	}
	m.sum += float64(s.Bytes)
	m.count++
	if len(m.history) == maxHistory {
		kept := m.history[:0]
		for i := 0; i < len(m.history); i += 2 {
			kept = append(kept, m.history[i])
		}
		m.history = kept
		m.interval *= 2
	}
	m.history = append(m.history, s)
}

// PerfReport is a run's performance report (spec/server.md section 2).
type PerfReport struct {
	WorkflowID         string   `json:"workflow_id"`
	Status             string   `json:"status"` // running, success or failed
	StartedAtMs        int64    `json:"started_at_ms"`
	FinishedAtMs       int64    `json:"finished_at_ms"`
	DurationMs         int64    `json:"duration_ms"`
	SamplingIntervalMs int64    `json:"sampling_interval_ms"`
	BaselineBytes      int64    `json:"baseline_bytes"`
	FinalBytes         int64    `json:"final_bytes"`
	PeakBytes          int64    `json:"peak_bytes"`
	PeakAtMs           int64    `json:"peak_at_ms"`
	MinimumBytes       int64    `json:"minimum_bytes"`
	AverageBytes       int64    `json:"average_bytes"`
	DeltaBytes         int64    `json:"delta_bytes"`
	SampleCount        int      `json:"sample_count"`
	History            []Sample `json:"history"`
}

// report returns the performance report so far. A running run's report
// ends at the time of the reading.
func (m *meter) report(status string) *PerfReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	p := &PerfReport{
		WorkflowID: m.r.wfID, Status: status,
		StartedAtMs: m.begin.UnixMilli(), SamplingIntervalMs: m.interval.Milliseconds(),
		PeakBytes: m.peak.Bytes, PeakAtMs: m.peak.AtMs, MinimumBytes: m.minimum,
		SampleCount: m.count, History: append([]Sample(nil), m.history...),
	}
	end := m.end
	if end.IsZero() {
		// A running run: the reading itself is the last sample.
		end = time.Now()
		now := Sample{AtMs: end.UnixMilli(), Bytes: m.total.Load()}
		p.History = append(p.History, now)
		p.SampleCount++
		if now.Bytes > p.PeakBytes {
			p.PeakBytes, p.PeakAtMs = now.Bytes, now.AtMs
		}
		p.MinimumBytes = min(p.MinimumBytes, now.Bytes)
	}
	p.FinishedAtMs = end.UnixMilli()
	p.DurationMs = end.Sub(m.begin).Milliseconds()
	p.BaselineBytes = p.History[0].Bytes
	p.FinalBytes = p.History[len(p.History)-1].Bytes
	sum := m.sum
	if m.end.IsZero() {
		sum += float64(p.FinalBytes)
	}
	p.AverageBytes = int64(sum / float64(p.SampleCount))
	p.DeltaBytes = p.FinalBytes - p.BaselineBytes
	return p
}

// LiveRun is a running run's byte breakdown (GET /api/memory).
type LiveRun struct {
	RunID       string `json:"run_id"`
	WorkflowID  string `json:"workflow_id"`
	StartedAtMs int64  `json:"started_at_ms"`
	// LiveBytes is the executor's overhead alone, without node bytes.
	LiveBytes int64      `json:"live_bytes"`
	Nodes     []LiveNode `json:"nodes"`
}

// LiveNode is the bytes one node of a running run holds.
type LiveNode struct {
	NodeID      string `json:"node_id"`
	NodeTypeID  string `json:"node_type_id"`
	StartedAtMs int64  `json:"started_at_ms"`
	LiveBytes   int64  `json:"live_bytes"`
}

func (m *meter) live() LiveRun {
	lr := LiveRun{RunID: m.r.id, WorkflowID: m.r.wfID, StartedAtMs: m.r.started.UnixMilli(),
		LiveBytes: m.overhead.Load(), Nodes: []LiveNode{}}
	for i := range m.nodes {
		started := m.nodes[i].startedMs.Load()
		if started == 0 {
			continue
		}
		pn := &m.r.p.nodes[i]
		lr.Nodes = append(lr.Nodes, LiveNode{NodeID: pn.id, NodeTypeID: pn.spec.TypeID,
			StartedAtMs: started, LiveBytes: m.nodes[i].bytes.Load()})
	}
	return lr
}

// Live returns the byte breakdown of every run in progress.
func (e *Engine) Live() []LiveRun {
	e.mu.Lock()
	runs := make([]*run, 0, len(e.live))
	for _, r := range e.live {
		runs = append(runs, r)
	}
	e.mu.Unlock()
	out := make([]LiveRun, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.meter.live())
	}
	return out
}

// LivePerformance returns the performance report so far of every run in
// progress.
func (e *Engine) LivePerformance() []*PerfReport {
	e.mu.Lock()
	runs := make([]*run, 0, len(e.live))
	for _, r := range e.live {
		runs = append(runs, r)
	}
	e.mu.Unlock()
	out := make([]*PerfReport, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.meter.report("running"))
	}
	return out
}
