//go:build !unix

package process

import (
	"os"
	"os/exec"
)

// shellArgs run a command line.
var shellArgs = []string{"cmd.exe", "/C"}

// ownGroup does nothing here: only Unix systems have process groups.
func ownGroup(*exec.Cmd) {}

// killGroup kills the program only: its children are not reached.
func killGroup(p *os.Process) { p.Kill() } //nolint:errcheck // it may be gone already

// signalOf reports no signal: there are none.
func signalOf(*os.ProcessState) (int, bool) { return 0, false }

// signalName names a signal number for messages.
func signalName(sig int) string { return "signal" }

// cpuLimited is false: there is no CPU limit here.
func cpuLimited(*os.ProcessState) bool { return false }
