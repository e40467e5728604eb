package process

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestLimitCode(t *testing.T) {
	t.Parallel()
	// A busy loop with no wall-clock limit is stopped by its CPU limit
	// (one second for a zero timeout) with SIGXCPU.
	var limits string
	cmd := exec.Command("/bin/sh", "-c", "while :; do :; done")
	c := newCapture("stdout", 100, false, 1000)
	ex, err := (&spawn{cmd: cmd, stdout: c, stderr: c, started: func(pid int) error {
		err := limitCode(pid, 0, 256<<20)
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
		limits = string(b)
		return err
	}}).run(bounded(t))
	if err != nil || ex.startedErr != nil {
		t.Fatalf("run = %v, limits %v; want no errors", err, ex.startedErr)
	}
	if !cpuLimited(ex.state) {
		t.Errorf("state = %v; want killed by SIGXCPU", ex.state)
	}
	for _, want := range []string{"Max cpu time              1                    2", "Max data size             268435456            268435456", "Max core file size        0                    0"} {
		if !strings.Contains(limits, want) {
			t.Errorf("/proc/pid/limits:\n%s\nwant a line %q", limits, want)
		}
	}
}
