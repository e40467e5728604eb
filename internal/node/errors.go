package node

import (
	"errors"
	"fmt"
	"time"
)

// Error codes shared by many node types (spec/nodes.md section 7). Node
// specific codes are declared with their node.
const (
	CodeInvalidConfig       = "INVALID_CONFIG"
	CodeExpression          = "EXPRESSION_ERROR"
	CodeSourceNotFound      = "SOURCE_NOT_FOUND"
	CodeRateLimited         = "RATE_LIMITED"
	CodeUpstreamUnavailable = "UPSTREAM_UNAVAILABLE"
	CodeOutputFlood         = "OUTPUT_FLOOD"
	CodeDBError             = "DB_ERROR"
	CodeInvalidPort         = "INVALID_PORT"
	// CodeNotAnArray fails a node that needs an array and finds something
	// else (Loop, JSON array_get).
	CodeNotAnArray = "NOT_AN_ARRAY"
	// CodeInternal is given to an error that is not an *Error, and to a
	// node that panicked.
	CodeInternal = "INTERNAL_ERROR"
)

// Retry says whether the engine may run a failed node again (rule 4 of
// spec/nodes.md). Retries happen only when the node's retry settings
// enable them.
type Retry int

const (
	// NoRetry: repeating could create something twice, or cannot help.
	NoRetry Retry = iota
	// Retryable: repeating is safe and may succeed.
	Retryable
)

// Error is a node failure with its code. The engine reads it with errors.As;
// an error of any other type fails the node with INTERNAL_ERROR and is
// never retried.
type Error struct {
	Code    string
	Field   string // config field the error is about, if any
	Message string
	Retry   Retry
	// After is the wait a retryable failure asks for (a 429's Retry-After);
	// zero leaves the wait to the node's backoff setting.
	After time.Duration
	Err   error
}

// Error returns the message, else the cause, else the code.
func (e *Error) Error() string {
	if e.Message != "" {
		return e.Message
	}
	if e.Err != nil {
		return e.Err.Error()
	}
	return e.Code
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns a non-retryable error with a code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Code: code, Message: err.Error(), Err: errors.Unwrap(err)}
}

// ConfigError returns an INVALID_CONFIG error naming the field.
func ConfigError(field, format string, args ...any) *Error {
	return &Error{Code: CodeInvalidConfig, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// FieldError returns an error with a node-specific code naming the field.
func FieldError(code, field, format string, args ...any) *Error {
	return &Error{Code: code, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// RetryableError returns a retryable error with a code and message.
func RetryableError(code string, after time.Duration, err error) *Error {
	return &Error{Code: code, Message: err.Error(), Retry: Retryable, After: after, Err: err}
}

// CodeOf returns the code of err: the Code of an *Error in its chain, else
// INTERNAL_ERROR.
func CodeOf(err error) string {
	var ne *Error
	if errors.As(err, &ne) && ne.Code != "" {
		return ne.Code
	}
	return CodeInternal
}
