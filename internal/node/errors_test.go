package node_test

import (
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/svcrun/svc/internal/node"
)

func TestErrors(t *testing.T) {
	t.Parallel()
	cause := io.ErrUnexpectedEOF

	e := node.Errorf("HTTP_ERROR", "fetch: %w", cause)
	if e.Code != "HTTP_ERROR" || e.Retry != node.NoRetry || e.Error() != "fetch: unexpected EOF" {
		t.Errorf("Errorf = %+v; want code HTTP_ERROR, no retry, message %q", e, "fetch: unexpected EOF")
	}
	if !errors.Is(e, cause) {
		t.Errorf("errors.Is(Errorf(%%w cause), cause) = false; want true")
	}
	if e := node.Errorf("X", "no cause %d", 1); e.Err != nil || e.Error() != "no cause 1" {
		t.Errorf("Errorf without %%w = %+v; want no Err and message %q", e, "no cause 1")
	}

	c := node.ConfigError("timeout", "must be %s", "positive")
	if c.Code != node.CodeInvalidConfig || c.Field != "timeout" || c.Error() != "timeout: must be positive" {
		t.Errorf("ConfigError = %+v; want INVALID_CONFIG naming timeout", c)
	}
	f := node.FieldError("INVALID_PORT", "port", "is %d", 80)
	if f.Code != "INVALID_PORT" || f.Field != "port" || f.Error() != "port: is 80" {
		t.Errorf("FieldError = %+v; want INVALID_PORT naming port", f)
	}

	r := node.RetryableError(node.CodeRateLimited, 3*time.Second, cause)
	if r.Retry != node.Retryable || r.After != 3*time.Second || r.Code != node.CodeRateLimited || !errors.Is(r, cause) {
		t.Errorf("RetryableError = %+v; want retryable RATE_LIMITED after 3s wrapping the cause", r)
	}

	tests := []struct {
		err  error
		want string
	}{
		{e, "HTTP_ERROR"},
		{fmt.Errorf("step: %w", c), node.CodeInvalidConfig},
		{errors.Join(errors.New("x"), r), node.CodeRateLimited},
		{cause, node.CodeInternal},
		{&node.Error{Message: "no code"}, node.CodeInternal},
	}
	for _, tt := range tests {
		if got := node.CodeOf(tt.err); got != tt.want {
			t.Errorf("CodeOf(%v) = %q; want %q", tt.err, got, tt.want)
		}
	}

	// The message falls back to the cause, then to the code.
	if got := (&node.Error{Code: "C", Err: cause}).Error(); got != cause.Error() {
		t.Errorf("Error() without message = %q; want %q", got, cause.Error())
	}
	if got := (&node.Error{Code: "C"}).Error(); got != "C" {
		t.Errorf("Error() with only a code = %q; want %q", got, "C")
	}
}
