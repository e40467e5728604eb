//go:build unix

package process

import (
	"os"
	"os/exec"
	"syscall"
)

// shellArgs run a command line.
var shellArgs = []string{"/bin/sh", "-c"}

// ownGroup makes the program the leader of a new process group, so that
// killGroup reaches every process it starts.
func ownGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// killGroup sends SIGKILL to the program's process group. The group
// outlives its leader while any member runs, so this also reaches children
// left behind by a program that has exited.
func killGroup(p *os.Process) {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		p.Kill() //nolint:errcheck // it may be gone already
	}
}

// signalOf returns the signal that ended the process, if one did.
func signalOf(st *os.ProcessState) (int, bool) {
	if st == nil {
		return 0, false
	}
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return 0, false
	}
	return int(ws.Signal()), true
}

// signalName names a signal number for messages.
func signalName(sig int) string { return syscall.Signal(sig).String() }

// cpuLimited reports whether the process was ended by its CPU time limit:
// SIGXCPU, which the kernel sends at the soft limit. (At the hard limit,
// one second later, it sends SIGKILL, which cannot be told apart from any
// other kill.)
func cpuLimited(st *os.ProcessState) bool {
	sig, ok := signalOf(st)
	return ok && syscall.Signal(sig) == syscall.SIGXCPU
}
