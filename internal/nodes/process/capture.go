package process

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// tailWindow is how much of the end of a stream is kept for failure
// messages, whatever part of the stream is kept for the output.
const tailWindow = 64 << 10

// capture collects one output stream of a program: the first keep bytes
// (or the last, with last set), the total count, and the end of the stream
// for failure messages. It is written by one goroutine and read after that
// goroutine has finished.
type capture struct {
	name  string
	keep  int
	last  bool
	flood int64

	buf   []byte // kept bytes; with last, the end of buf
	tail  []byte // with !last: the end of the stream, up to 2*tailWindow
	total int64
}

func newCapture(name string, keep int, last bool, flood int64) *capture {
	return &capture{name: name, keep: keep, last: last, flood: flood}
}

// errFlood reports a stream that passed its flood limit.
type errFlood struct {
	stream string
	limit  int64
}

func (e *errFlood) Error() string {
	return fmt.Sprintf("the program wrote more than %s to %s", size(e.limit), e.stream)
}

// write adds p to the stream. It returns an *errFlood once the stream has
// passed its flood limit; later writes are only counted.
func (c *capture) write(p []byte) error {
	was := c.total
	c.total += int64(len(p))
	if was > c.flood {
		return nil
	}
	if c.last {
		c.buf = slideAppend(c.buf, p, c.keep)
	} else {
		if room := c.keep + 1 - len(c.buf); room > 0 {
			// One byte past keep marks the cut, so that a cut rune is seen.
			c.buf = append(c.buf, p[:min(room, len(p))]...)
		}
		c.tail = slideAppend(c.tail, p, tailWindow)
	}
	if c.total > c.flood {
		return &errFlood{stream: c.name, limit: c.flood}
	}
	return nil
}

// slideAppend appends p to b and, once b holds more than twice n, keeps its
// last n bytes: the end of a long stream in amortised linear time.
func slideAppend(b, p []byte, n int) []byte {
	if len(p) >= n {
		return append(b[:0], p[len(p)-n:]...)
	}
	b = append(b, p...)
	if len(b) > 2*n {
		b = append(b[:0], b[len(b)-n:]...)
	}
	return b
}

// readFrom copies r into the capture until EOF or an error, calling flood
// once when the stream passes its limit, and closes r.
func (c *capture) readFrom(r io.ReadCloser, flood func(error)) {
	defer r.Close()
	buf := make([]byte, 64<<10)
	reported := false
	for {
		n, err := r.Read(buf)
		if n > 0 {
			if ferr := c.write(buf[:n]); ferr != nil && !reported {
				reported = true
				flood(ferr)
			}
		}
		if err != nil {
			return
		}
	}
}

// truncated reports whether more than keep bytes were written.
func (c *capture) truncated() bool { return c.total > int64(c.keep) }

// text returns the kept part of the stream, cut at a character boundary
// when the stream was cut.
func (c *capture) text() string { return c.textWithin(c.keep) }

// textWithin is text with at most n bytes kept: the first n, or with last
// the last n.
func (c *capture) textWithin(n int) string {
	b := c.buf
	if c.last {
		if len(b) > n {
			return string(cutFront(b, len(b)-n))
		}
		if int64(len(b)) < c.total {
			// The stream was longer than buf: buf may start mid-character.
			return string(cutFront(b, 0))
		}
		return string(b)
	}
	if len(b) > n {
		return string(cutBack(b, n))
	}
	return string(b)
}

// end returns the last bytes written, up to tailWindow, starting at a
// character boundary.
func (c *capture) end() string {
	b := c.tail
	if c.last {
		b = c.buf
	}
	from := max(len(b)-tailWindow, 0)
	if from == 0 && int64(len(b)) == c.total {
		return string(b)
	}
	return string(cutFront(b, from))
}

// cutBack returns b[:n], shortened further so that it does not end inside a
// UTF-8 sequence that continued past n.
func cutBack(b []byte, n int) []byte {
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:n]) {
				return b[:i]
			}
			break
		}
	}
	return b[:n]
}

// cutFront returns b[from:], skipping the continuation bytes of a UTF-8
// sequence that began before from.
func cutFront(b []byte, from int) []byte {
	for i := 0; i < utf8.UTFMax-1 && from < len(b) && !utf8.RuneStart(b[from]); i++ {
		from++
	}
	return b[from:]
}

// size formats a byte count for messages: 10 MB, 256 MB, 1.5 KB, 12 bytes.
func size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// isFlood reports whether err is a flood.
func isFlood(err error) bool {
	var f *errFlood
	return errors.As(err, &f)
}
