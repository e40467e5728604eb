package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
)

// drain returns the events waiting in a subscription without blocking.
func drain(s *events.Subscription) []events.Event {
	var out []events.Event
	for {
		select {
		case e, ok := <-s.Events():
			if !ok {
				return out
			}
			out = append(out, e)
		default:
			return out
		}
	}
}

func types(es []events.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type+":"+e.WorkflowID)
	}
	return out
}

func TestFilter(t *testing.T) {
	t.Parallel()
	published := []events.Event{
		{Type: events.TypeNodeStatus, WorkflowID: "a"},
		{Type: events.TypeSchedulerReady},
		{Type: events.TypeSchedulerError, WorkflowID: "b"},
		{Type: events.TypeNodeStatus, WorkflowID: "c"},
	}
	for _, tc := range []struct {
		name   string
		filter events.Filter
		want   []string
	}{
		{"all", events.Filter{}, []string{"node-status:a", "scheduler-ready:", "scheduler-error:b", "node-status:c"}},
		{"one workflow", events.Filter{Workflows: []string{"a"}}, []string{"node-status:a"}},
		{"grants", events.Filter{Workflows: []string{"b", "c", "z"}}, []string{"scheduler-error:b", "node-status:c"}},
		{"nothing", events.Filter{Workflows: []string{}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := events.New(events.Options{})
			s := h.Subscribe(tc.filter)
			for _, e := range published {
				h.Publish(e)
			}
			if got := types(drain(s)); !slices.Equal(got, tc.want) {
				t.Errorf("received %v; want %v", got, tc.want)
			}
			if got := s.Dropped(); got != 0 {
				t.Errorf("Dropped() = %d; want 0", got)
			}
		})
	}
}

// A subscriber that never reads loses events once its buffer is full, and
// neither the publisher nor a subscriber that keeps up is held back.
func TestSlowSubscriberDoesNotBlock(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const buffer, n = 4, 1000
		h := events.New(events.Options{Buffer: buffer})
		slow := h.Subscribe(events.Filter{})
		fast := h.Subscribe(events.Filter{Workflows: []string{"w"}})
		var got []int
		done := make(chan struct{})
		go func() {
			defer close(done)
			for e := range fast.Events() {
				got = append(got, e.Payload.(int))
			}
		}()
		for i := range n {
			h.Publish(events.Event{Type: events.TypeNodeStatus, WorkflowID: "w", Payload: i})
			synctest.Wait() // the fast reader takes the event
		}
		fast.Close()
		<-done
		if len(got) != n || got[0] != 0 || got[n-1] != n-1 {
			t.Errorf("fast subscriber received %d events; want %d in order", len(got), n)
		}
		if got, want := slow.Dropped(), uint64(n-buffer); got != want {
			t.Errorf("slow Dropped() = %d; want %d", got, want)
		}
		if got, want := h.Dropped(), uint64(n-buffer); got != want {
			t.Errorf("hub Dropped() = %d; want %d", got, want)
		}
		if got := drain(slow); len(got) != buffer || got[0].Payload != 0 {
			t.Errorf("slow subscriber kept %v; want the first %d", got, buffer)
		}
	})
}

func TestClose(t *testing.T) {
	t.Parallel()
	h := events.New(events.Options{})
	a := h.Subscribe(events.Filter{})
	b := h.Subscribe(events.Filter{Workflows: []string{"w"}})
	h.Publish(events.Event{Type: events.TypeNodeStatus, WorkflowID: "w"})
	a.Close()
	a.Close() // twice is harmless
	if got := h.Subscribers(); got != 1 {
		t.Errorf("Subscribers() after one Close = %d; want 1", got)
	}
	if _, ok := <-a.Events(); !ok {
		t.Errorf("an event buffered before Close was lost")
	}
	if _, ok := <-a.Events(); ok {
		t.Errorf("closed subscription still delivers")
	}
	h.Close()
	h.Close()
	if got := len(drain(b)); got != 1 {
		t.Errorf("b received %d events before the hub closed; want 1", got)
	}
	if _, ok := <-b.Events(); ok {
		t.Errorf("subscription open after the hub closed")
	}
	b.Close() // after the hub: harmless
	h.Publish(events.Event{Type: events.TypeSchedulerReady})
	c := h.Subscribe(events.Filter{})
	if _, ok := <-c.Events(); ok {
		t.Errorf("subscription on a closed hub is open")
	}
	if got := h.Subscribers(); got != 0 {
		t.Errorf("Subscribers() after Close = %d; want 0", got)
	}
}

func TestRunClosesOnCancel(t *testing.T) {
	t.Parallel()
	h := events.New(events.Options{})
	s := h.Subscribe(events.Filter{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- h.Run(ctx) }()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v; want nil", err)
	}
	if _, ok := <-s.Events(); ok {
		t.Errorf("subscription open after Run returned")
	}
}

// Publishers, subscribers and Close all at once, for the race detector.
func TestConcurrent(t *testing.T) {
	t.Parallel()
	h := events.New(events.Options{Buffer: 8})
	var wg, pub sync.WaitGroup
	for p := range 4 {
		pub.Go(func() {
			for i := range 500 {
				h.Publish(events.Event{Type: events.TypeNodeStatus, WorkflowID: fmt.Sprint(i % 3), Payload: p})
			}
		})
	}
	for i := range 8 {
		wg.Go(func() {
			for range 50 {
				s := h.Subscribe(events.Filter{Workflows: []string{fmt.Sprint(i % 3)}})
				for range drain(s) {
				}
				s.Close()
			}
		})
	}
	s := h.Subscribe(events.Filter{})
	wg.Go(func() {
		for range s.Events() {
		}
	})
	pub.Wait()
	h.Close() // ends the reader above
	wg.Wait()
}

func TestNodeStatusAndWireForm(t *testing.T) {
	t.Parallel()
	h := events.New(events.Options{})
	s := h.Subscribe(events.Filter{Workflows: []string{"w"}})
	var sink engine.EventSink = h
	sink.NodeStatus(engine.NodeEvent{RunID: "r", WorkflowID: "w", NodeID: "n", NodeTypeID: "output", Status: engine.StatusSuccess})
	got := drain(s)
	if len(got) != 1 {
		t.Fatalf("received %v; want one node-status event", got)
	}
	b, err := json.Marshal(got[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"event":"node-status","payload":{"workflow_id":"w","node_id":"n","status":"success"}}`; string(b) != want {
		t.Errorf("wire form %s; want %s", b, want)
	}
	b, _ = json.Marshal(events.Event{Type: events.TypeSchedulerReady})
	if want := `{"event":"scheduler-ready","payload":{}}`; string(b) != want {
		t.Errorf("nil payload: %s; want %s", b, want)
	}
}

// TestSessions: an event with a session reaches only the subscribers of
// that session, and a session's subscriber receives nothing else.
func TestSessions(t *testing.T) {
	t.Parallel()
	h := events.New(events.Options{})
	defer h.Close()
	all := h.Subscribe(events.Filter{})
	a := h.Subscribe(events.Filter{Workflows: []string{"w"}, Session: "a"})
	b := h.Subscribe(events.Filter{Session: "b"})
	h.Publish(events.Event{Type: "x", WorkflowID: "w", Session: "a"})
	h.Publish(events.Event{Type: "y", WorkflowID: "w", Session: "b"})
	h.Publish(events.Event{Type: "z", WorkflowID: "w"})
	for name, tc := range map[string]struct {
		s    *events.Subscription
		want []string
	}{
		"no session": {all, []string{"z:w"}},
		"session a":  {a, []string{"x:w"}},
		"session b":  {b, []string{"y:w"}},
	} {
		if got := types(drain(tc.s)); !slices.Equal(got, tc.want) {
			t.Errorf("%s received %v; want %v", name, got, tc.want)
		}
	}
}
