package app_test

import (
	"errors"
	"io"
	"syscall"
	"testing"
	"time"
)

// TestServerEvents checks the wiring of the event hub: a run's node-status
// events reach an open stream, and SIGTERM ends the stream and the server
// although the stream would stay open.
func TestServerEvents(t *testing.T) {
	t.Parallel()
	p := start(t, []string{"SVC_TOKEN=" + testToken}, "--data-dir", t.TempDir())
	c := p.client(t, testToken)
	stream, err := c.Events(t.Context(), "w")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	if _, err := c.SaveWorkflow(t.Context(), []byte(doc("w")), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunWorkflow(t.Context(), "w", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 6 { // t, s and o: running, then success
		if e, err := stream.Next(); err != nil || e.Event != "node-status" || e.WorkflowID != "w" {
			t.Fatalf("event %d = %+v, %v; want node-status of w", i, e, err)
		}
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	if e, err := stream.Next(); !errors.Is(err, io.EOF) {
		t.Errorf("Next() after SIGTERM = %+v, %v; want io.EOF", e, err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.log())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15 s after SIGTERM with a stream open")
	}
}
