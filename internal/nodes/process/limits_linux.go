package process

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// sandboxPartial is the Code node's _sandbox_partial: true only where a
// sandbox runs with some of its limits missing (macOS). Linux runs no
// sandbox, it applies resource limits (limitCode).
const sandboxPartial = false

// limitCode applies the Code node's resource limits to the started runtime
// (pid): CPU time of the timeout plus one second (SIGXCPU, then SIGKILL a
// second later), a data segment of dataLimit bytes (the memory it writes
// to: heap, buffers, thread stacks; unlike RLIMIT_AS it does not count the
// address space V8 only reserves, which runs to gigabytes), and no core
// files. The runtime runs for a moment before the limits apply; CPU time
// counts from its start anyway.
func limitCode(pid int, cpu time.Duration, dataLimit uint64) error {
	secs := uint64((cpu + time.Second - 1) / time.Second)
	set := []struct {
		name     string
		resource int
		lim      unix.Rlimit
	}{
		{"RLIMIT_CPU", unix.RLIMIT_CPU, unix.Rlimit{Cur: secs + 1, Max: secs + 2}},
		{"RLIMIT_DATA", unix.RLIMIT_DATA, unix.Rlimit{Cur: dataLimit, Max: dataLimit}},
		{"RLIMIT_CORE", unix.RLIMIT_CORE, unix.Rlimit{}},
	}
	for _, s := range set {
		// Stay within the hard limits the server itself runs under: only a
		// privileged process may raise them.
		var old unix.Rlimit
		if err := unix.Prlimit(pid, s.resource, nil, &old); err == nil {
			s.lim.Cur, s.lim.Max = min(s.lim.Cur, old.Max), min(s.lim.Max, old.Max)
		}
		if err := unix.Prlimit(pid, s.resource, &s.lim, nil); errors.Is(err, unix.ESRCH) {
			return nil // it has ended already
		} else if err != nil {
			return fmt.Errorf("prlimit %s: %w", s.name, err)
		}
	}
	return nil
}
