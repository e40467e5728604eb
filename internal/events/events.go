// Package events is the event hub of svc-server (spec/server.md section 6):
// runs and the scheduler publish events, and each open event stream
// subscribes with a filter. Publishing never blocks the publisher: every
// subscriber has a bounded buffer, and one that falls behind loses events
// (they are counted) instead of slowing runs down. Events are not numbered
// or replayed.
package events

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/svcrun/svc/internal/engine"
)

// Event types of spec/server.md section 6.
const (
	TypeNodeStatus       = "node-status"
	TypeSchedulerStatus  = "scheduler-status"
	TypeSchedulerError   = "scheduler-error"
	TypeSchedulerWarning = "scheduler-warning"
	TypeSchedulerSkip    = "scheduler-skip"
	TypeSchedulerReady   = "scheduler-ready"
)

// DefaultBuffer is how many events a subscriber may fall behind by before
// it loses events.
const DefaultBuffer = 256

// Event is one event. WorkflowID names the workflow the event is about and
// decides who receives it; it is empty for a server-wide event such as
// scheduler-ready, which only unfiltered subscribers receive. Payload must
// encode as a JSON object (nil encodes as {}) and carries workflow_id
// itself when the spec lists it. An Event is shared by every subscriber:
// its Payload must not be changed once published.
type Event struct {
	Type       string
	WorkflowID string
	// Session, when set, is the widget visitor session the event belongs
	// to: only subscribers of that session receive it (a chat reply goes
	// to the visitor who sent the message, and to no one else).
	Session string
	Payload any
}

// MarshalJSON encodes the event as the stream sends it:
// {"event": <type>, "payload": {...}}.
func (e Event) MarshalJSON() ([]byte, error) {
	p := e.Payload
	if p == nil {
		p = struct{}{}
	}
	return json.Marshal(struct {
		Event   string `json:"event"`
		Payload any    `json:"payload"`
	}{e.Type, p})
}

// NodeStatusPayload is the payload of a node-status event.
type NodeStatusPayload struct {
	WorkflowID string `json:"workflow_id"`
	NodeID     string `json:"node_id"`
	Status     string `json:"status"`
}

// Filter selects the events a subscriber receives. The zero Filter
// receives every event, server-wide ones included.
type Filter struct {
	// Workflows, when not nil, narrows the subscriber to events naming one
	// of these workflows (the token's grants, or the one workflow a stream
	// asked for); server-wide events are then never received. A non-nil
	// empty slice receives nothing.
	Workflows []string
	// Session is the widget visitor session of the subscriber: it then
	// receives only the events of that session (Event.Session), as
	// Workflows allows. Without one, it receives no session's events.
	Session string
}

// Options configure a Hub.
type Options struct {
	// Buffer is each subscriber's buffer in events; zero or less means
	// DefaultBuffer.
	Buffer int
}

// Hub fans events out to subscribers. It is safe for concurrent use; the
// zero value is not usable, call New.
type Hub struct {
	buffer  int
	dropped atomic.Uint64

	mu     sync.RWMutex
	subs   map[*Subscription]struct{}
	closed bool
}

// New returns a hub.
func New(opts Options) *Hub {
	if opts.Buffer <= 0 {
		opts.Buffer = DefaultBuffer
	}
	return &Hub{buffer: opts.Buffer, subs: map[*Subscription]struct{}{}}
}

// Subscription is one subscriber's view of a hub.
type Subscription struct {
	hub     *Hub
	ch      chan Event
	allowed map[string]struct{} // nil: every event
	session string
	dropped atomic.Uint64
}

// Subscribe adds a subscriber receiving the events f selects, from now on.
// The subscription ends with its Close or the hub's; on a closed hub it
// starts ended.
func (h *Hub) Subscribe(f Filter) *Subscription {
	s := &Subscription{hub: h, ch: make(chan Event, h.buffer), session: f.Session}
	if f.Workflows != nil {
		s.allowed = make(map[string]struct{}, len(f.Workflows))
		for _, id := range f.Workflows {
			s.allowed[id] = struct{}{}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		close(s.ch)
		return s
	}
	h.subs[s] = struct{}{}
	return s
}

// Publish hands e to every subscriber that selects it, without waiting: a
// subscriber whose buffer is full loses e, and the loss is counted.
// Publishing on a closed hub does nothing.
func (h *Hub) Publish(e Event) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if h.closed {
		return
	}
	for s := range h.subs {
		if !s.wants(e) {
			continue
		}
		select {
		case s.ch <- e:
		default:
			s.dropped.Add(1)
			h.dropped.Add(1)
		}
	}
}

// NodeStatus publishes an engine node-status event, so a Hub can be the
// engine's EventSink.
func (h *Hub) NodeStatus(e engine.NodeEvent) {
	h.Publish(Event{Type: TypeNodeStatus, WorkflowID: e.WorkflowID,
		Payload: NodeStatusPayload{WorkflowID: e.WorkflowID, NodeID: e.NodeID, Status: string(e.Status)}})
}

// Subscribers returns the number of open subscriptions.
func (h *Hub) Subscribers() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.subs)
}

// Dropped returns how many events subscribers have lost in all, over the
// hub's life.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// Close ends every subscription and makes further publishing do nothing.
// It is used at shutdown; closing twice is harmless.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	for s := range h.subs {
		close(s.ch)
	}
	clear(h.subs)
}

// Run waits for ctx to end, then closes the hub. It returns nil.
func (h *Hub) Run(ctx context.Context) error {
	<-ctx.Done()
	h.Close()
	return nil
}

// Events returns the channel of the subscription's events, in the order
// each publisher published them. It is closed when the subscription ends.
func (s *Subscription) Events() <-chan Event { return s.ch }

// Dropped returns how many events this subscriber lost by falling behind.
func (s *Subscription) Dropped() uint64 { return s.dropped.Load() }

// Close ends the subscription; its channel is closed. Closing twice is
// harmless.
func (s *Subscription) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.ch)
	}
}

// wants reports whether the subscriber selects e.
func (s *Subscription) wants(e Event) bool {
	// A widget visitor's stream gets its own session's events and nothing
	// else: not another visitor's, and no run output of the workflow that
	// no visitor sent.
	if e.Session != s.session {
		return false
	}
	if s.allowed == nil {
		return true
	}
	if e.WorkflowID == "" {
		return false
	}
	_, ok := s.allowed[e.WorkflowID]
	return ok
}

var _ engine.EventSink = (*Hub)(nil)
