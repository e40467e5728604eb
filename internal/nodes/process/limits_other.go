//go:build !linux

package process

import "time"

// sandboxPartial is the Code node's _sandbox_partial. svc runs no sandbox
// on this system yet, so it is false; CPU and memory limits are Linux-only.
const sandboxPartial = false

// limitCode does nothing: resource limits are applied on Linux only.
func limitCode(int, time.Duration, uint64) error { return nil }
