//go:build !unix

package action

import "os/exec"

// ownProcessGroup leaves cmd as it is: stopping it kills the process alone.
func ownProcessGroup(*exec.Cmd) {}
