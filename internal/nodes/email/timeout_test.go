package email

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
)

// The tests in this file shorten the package's time limits, so they are not
// parallel: parallel tests start only after every sequential test is done,
// and they read the limits.

// shorten sets a time limit for the rest of the test.
func shorten(t *testing.T, limit *time.Duration, d time.Duration) {
	t.Helper()
	old := *limit
	*limit = d
	t.Cleanup(func() { *limit = old })
}

// within reports if f took longer than max.
func within(t *testing.T, max time.Duration, f func()) {
	t.Helper()
	start := time.Now()
	f()
	if d := time.Since(start); d > max {
		t.Errorf("took %s; want at most %s", d, max)
	}
}

// TestConnectTimeout: a connection not made within connectTimeout cannot be
// made (rule 4), which is retryable.
func TestConnectTimeout(t *testing.T) {
	shorten(t, &connectTimeout, 100*time.Millisecond)
	dial := func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done() // a SYN nobody answers
		return nil, ctx.Err()
	}
	ts := &testServer{}
	within(t, 5*time.Second, func() {
		_, _, err := send(t, Options{Dial: dial}, ts.config(map[string]any{"smtp_host": "127.0.0.1", "smtp_port": 587}))
		wantFailure(t, "connect timeout", err, CodeConnection, node.Retryable, "no connection within 100ms")
	})
}

// TestGreetingTimeout: a server that accepts and never greets fails the
// greeting step after stepTimeout; nothing was sent, so it is retryable.
func TestGreetingTimeout(t *testing.T) {
	shorten(t, &stepTimeout, 200*time.Millisecond)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent until the test ends
		}
	}()
	ts := &testServer{}
	raw := ts.config(map[string]any{"smtp_host": "127.0.0.1", "smtp_port": l.Addr().(*net.TCPAddr).Port})
	within(t, 5*time.Second, func() {
		_, _, err := send(t, Options{}, raw)
		wantFailure(t, "silent server", err, CodeConnection, node.Retryable, "greeting", "no answer within 200ms")
	})
}

// TestStepTimeout: a RCPT left unanswered fails after stepTimeout, though
// every step before it was quick. No message was sent: retryable.
func TestStepTimeout(t *testing.T) {
	shorten(t, &stepTimeout, 500*time.Millisecond)
	for _, implicit := range []bool{false, true} {
		ts := startServer(t, serverConfig{implicit: implicit, users: alice, stallRcpt: true})
		within(t, 5*time.Second, func() {
			_, _, err := send(t, ts.options(), ts.config(map[string]any{"username": "alice", "password": "s3cret pass"}))
			wantFailure(t, "stalled RCPT", err, CodeConnection, node.Retryable, "RCPT TO:<rcpt@example.com>", "no answer within 500ms")
		})
	}
}

// TestReplyTimeoutAfterBody: the server reads the whole message and never
// answers. It may have the message, so the node fails
// SMTP_DELIVERY_UNCERTAIN and is not retried. The step limit does not apply
// to the body, which has dataTimeout.
func TestReplyTimeoutAfterBody(t *testing.T) {
	shorten(t, &stepTimeout, 5*time.Second)
	shorten(t, &dataTimeout, 300*time.Millisecond)
	for _, implicit := range []bool{false, true} {
		ts := startServer(t, serverConfig{implicit: implicit, stallReply: true})
		within(t, 4*time.Second, func() {
			_, _, err := send(t, ts.options(), ts.config(nil))
			wantFailure(t, "no reply after the body", err, CodeDeliveryUncertain, node.NoRetry, "no reply within 300ms", "may have been delivered")
		})
		if n := len(ts.messages()); n != 1 {
			t.Errorf("server read %d messages; want 1", n)
		}
	}
}

// TestBodyTimeout: a server that stops reading in the middle of the body
// cannot have the message, whose final dot was never written: retryable.
func TestBodyTimeout(t *testing.T) {
	shorten(t, &dataTimeout, 500*time.Millisecond)
	ts := startServer(t, serverConfig{stallBody: true})
	opts := ts.options()
	opts.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err == nil {
			c.(*net.TCPConn).SetWriteBuffer(32 << 10) // keep the bytes in flight few
		}
		return c, err
	}
	body := strings.Repeat(strings.Repeat("x", 70)+"\n", 60_000) // 4 MiB
	within(t, 5*time.Second, func() {
		_, _, err := send(t, opts, ts.config(map[string]any{"body": body}))
		wantFailure(t, "body not read", err, CodeConnection, node.Retryable, "message", "could not be sent completely", "cannot have accepted")
	})
}
