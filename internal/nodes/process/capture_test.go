package process

import (
	"errors"
	"strings"
	"testing"
)

func TestCaptureFirst(t *testing.T) {
	t.Parallel()
	c := newCapture("stdout", 5, false, 20)
	for _, p := range []string{"ab", "cdé", "fgh"} {
		if err := c.write([]byte(p)); err != nil {
			t.Fatalf("write(%q) = %v; want nil", p, err)
		}
	}
	// "abcdé" is 6 bytes: the é would be cut, so it is left out.
	if c.text() != "abcd" || !c.truncated() || c.total != 9 {
		t.Errorf("text %q, truncated %v, total %d; want abcd, true, 9", c.text(), c.truncated(), c.total)
	}
	if c.end() != "abcdéfgh" {
		t.Errorf("end = %q; want the whole stream", c.end())
	}
	err := c.write(make([]byte, 12))
	var f *errFlood
	if !errors.As(err, &f) || !strings.Contains(err.Error(), "20 bytes to stdout") {
		t.Errorf("write past the flood limit = %v; want an *errFlood naming 20 bytes and stdout", err)
	}
	if err := c.write([]byte("x")); err != nil || c.total != 22 {
		t.Errorf("write after the flood = %v, total %d; want nil, 22", err, c.total)
	}
}

func TestCaptureLast(t *testing.T) {
	t.Parallel()
	c := newCapture("stdout", 6, true, 1<<20)
	c.write([]byte("abc")) //nolint:errcheck // no flood
	c.write([]byte("déf")) //nolint:errcheck // no flood
	for n, want := range map[int]string{6: "bcdéf", 4: "déf", 3: "éf", 2: "f", 0: ""} {
		if got := c.textWithin(n); got != want {
			t.Errorf("textWithin(%d) of abcdéf = %q; want %q", n, got, want)
		}
	}
	if !c.truncated() {
		t.Errorf("truncated = false after 7 bytes; want true")
	}
	// A write longer than keep replaces what was kept; the start of the
	// kept bytes may then be inside a character.
	c.write([]byte("xx€€")) //nolint:errcheck // no flood
	if got := c.text(); got != "€€" {
		t.Errorf("text = %q; want €€", got)
	}
	// Many small writes keep the buffer bounded.
	for range 1000 {
		c.write([]byte("0123456789")) //nolint:errcheck // no flood
	}
	if len(c.buf) > 12 || c.text() != "456789" {
		t.Errorf("buffer %d bytes, text %q; want at most 12 bytes, 456789", len(c.buf), c.text())
	}
}

func TestCutRunes(t *testing.T) {
	t.Parallel()
	b := []byte("a€b") // a, 3 bytes, b
	for n, want := range map[int]string{0: "", 1: "a", 2: "a", 3: "a", 4: "a€", 5: "a€b"} {
		if got := string(cutBack(b, n)); got != want {
			t.Errorf("cutBack(%q, %d) = %q; want %q", b, n, got, want)
		}
	}
	for from, want := range map[int]string{0: "a€b", 1: "€b", 2: "b", 3: "b", 4: "b", 5: ""} {
		if got := string(cutFront(b, from)); got != want {
			t.Errorf("cutFront(%q, %d) = %q; want %q", b, from, got, want)
		}
	}
}

func TestSize(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{12: "12 bytes", 1536: "1.5 KB", 10 << 20: "10 MB", 256 << 20: "256 MB", 3 << 19: "1.5 MB"} {
		if got := size(n); got != want {
			t.Errorf("size(%d) = %q; want %q", n, got, want)
		}
	}
}
