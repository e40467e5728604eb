package process

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"time"
)

// killGrace is how long the readers may take to drain after the process
// group was killed; a process that left the group and still holds a pipe
// is then cut off.
const killGrace = 2 * time.Second

// spawn describes one program run: the command and where its streams go.
type spawn struct {
	cmd *exec.Cmd
	// stdout receives fd 1; stderr fd 2, and may be the same capture (one
	// pipe, in the order written). extra are fds 3, 4, ...
	stdout, stderr *capture
	extra          []*capture
	// started, when set, is called with the pid right after the start (to
	// apply resource limits); an error is logged by the caller, not fatal.
	started func(pid int) error
}

// exit is how a run ended.
type exit struct {
	state *os.ProcessState
	// stopped is why the process group was killed: a flood (*errFlood) or
	// the context's cause; nil when the program ended on its own.
	stopped error
	// startedErr is what started returned.
	startedErr error
	elapsed    time.Duration
}

// run starts the program in its own process group and returns once it has
// exited and every pipe it writes to is closed: a child that keeps the
// program's output open is waited for too. When ctx ends or a stream
// floods, the whole group is killed. The error is only about starting.
func (s *spawn) run(ctx context.Context) (exit, error) {
	var (
		readers []*os.File
		writers []*os.File
		caps    []*capture
	)
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	pipe := func(c *capture) (*os.File, error) {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("pipe: %w", err)
		}
		readers, writers, caps = append(readers, r), append(writers, w), append(caps, c)
		return w, nil
	}
	fail := func(err error) (exit, error) {
		closeAll(readers)
		closeAll(writers)
		return exit{}, err
	}

	w, err := pipe(s.stdout)
	if err != nil {
		return fail(err)
	}
	s.cmd.Stdout = w
	if s.stderr == s.stdout {
		s.cmd.Stderr = w
	} else {
		if w, err = pipe(s.stderr); err != nil {
			return fail(err)
		}
		s.cmd.Stderr = w
	}
	for _, c := range s.extra {
		if w, err = pipe(c); err != nil {
			return fail(err)
		}
		s.cmd.ExtraFiles = append(s.cmd.ExtraFiles, w)
	}
	ownGroup(s.cmd)
	// A stdin that is not a file is copied by os/exec; WaitDelay keeps a
	// child that never reads it from holding Wait forever.
	s.cmd.WaitDelay = killGrace

	begin := time.Now()
	if err := s.cmd.Start(); err != nil {
		return fail(err)
	}
	closeAll(writers)
	var out exit
	if s.started != nil {
		out.startedErr = s.started(s.cmd.Process.Pid)
	}

	floods := make(chan error, 1)
	flood := func(err error) {
		select {
		case floods <- err:
		default:
		}
	}
	var wg sync.WaitGroup
	for i, r := range readers {
		wg.Go(func() { caps[i].readFrom(r, flood) })
	}
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	exited := make(chan struct{})
	go func() {
		s.cmd.Wait() //nolint:errcheck // the state says how it ended
		close(exited)
	}()

	var grace <-chan time.Time
	kill := func(why error) {
		if out.stopped != nil {
			return
		}
		out.stopped = why
		killGroup(s.cmd.Process)
		grace = time.After(killGrace)
	}
	done := ctx.Done()
	for exited != nil || drained != nil {
		select {
		case <-exited:
			exited = nil
		case <-drained:
			drained = nil
		case err := <-floods:
			kill(err)
		case <-done:
			done = nil
			kill(context.Cause(ctx))
		case <-grace:
			// Something outside the group holds a pipe: stop reading.
			grace = nil
			closeAll(readers)
		}
	}
	out.elapsed = time.Since(begin)
	out.state = s.cmd.ProcessState
	return out, nil
}

// exitCode is the program's exit status, or 128 plus the signal that
// killed it, as shells report it.
func exitCode(st *os.ProcessState) int {
	if st == nil {
		return -1
	}
	if sig, ok := signalOf(st); ok {
		return 128 + sig
	}
	return st.ExitCode()
}
