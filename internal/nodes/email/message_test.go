package email

import (
	"bytes"
	"io"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"testing"
	"time"
)

func TestEncodeSubject(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 1000)
	tests := []struct {
		in      string
		encoded bool
	}{
		{"", false},
		{"Plain ASCII subject", false},
		{"tab\tkept", false},
		{strings.Repeat("word ", 100), false},
		{"Café", true},
		{"日本語の件名", true},
		{"control \x01 char", true},
		{"looks like =?utf-8?q?x?= an encoded word", true},
		{"a URL " + long, true},
	}
	for _, tt := range tests {
		got := encodeSubject(tt.in)
		if encoded := got != tt.in; encoded != tt.encoded {
			t.Errorf("encodeSubject(%.40q) = %.60q; want encoded %v", tt.in, got, tt.encoded)
		}
		if tt.encoded {
			for w := range strings.FieldsSeq(got) {
				if len(w) > 75 || !strings.HasPrefix(w, "=?utf-8?") {
					t.Errorf("encodeSubject(%.40q) has word %q; want encoded-words of at most 75 octets", tt.in, w)
				}
			}
		}
		if dec, err := new(mime.WordDecoder).DecodeHeader(got); err != nil || dec != tt.in {
			t.Errorf("decode(encodeSubject(%.40q)) = %.40q, %v; want the subject back", tt.in, dec, err)
		}
	}
}

func TestHeaderFolding(t *testing.T) {
	t.Parallel()
	var to []string
	for range 50 {
		to = append(to, `"Some Rather Long Display Name" <someone.with.a.long.address@example.com>`)
	}
	value := strings.Join(to, ", ")
	var b bytes.Buffer
	header(&b, "To", value)
	out := b.String()
	if !strings.HasSuffix(out, "\r\n") {
		t.Fatalf("header(...) = %q; want it to end with CRLF", out)
	}
	for i, line := range strings.Split(strings.TrimSuffix(out, "\r\n"), "\r\n") {
		if len(line) > foldAt {
			t.Errorf("line %d is %d octets: %q; want at most %d", i+1, len(line), line, foldAt)
		}
		if i > 0 && !strings.HasPrefix(line, " ") {
			t.Errorf("line %d = %q; want a continuation starting with a space", i+1, line)
		}
	}
	if unfolded := strings.ReplaceAll(strings.TrimSuffix(out, "\r\n"), "\r\n", ""); unfolded != "To: "+value {
		t.Errorf("unfolded header differs from the value")
	}
	h, err := mail.ReadMessage(strings.NewReader(out + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if list, err := h.Header.AddressList("To"); err != nil || len(list) != 50 {
		t.Errorf("To reads back as %d addresses (%v); want 50", len(list), err)
	}
}

func TestBuildMessage(t *testing.T) {
	t.Parallel()
	from, _ := parseAddress("Sender <s@example.com>")
	to, _ := parseRecipients("a@example.com")
	date := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	for _, body := range []string{"", "one line", "ends with a line break\n", "=?x?= and = signs\ttab\n\nlast", strings.Repeat("é", 500)} {
		s := &sender{from: from, to: to, subject: "s", body: body}
		data := s.buildMessage(date, "<id@example.com>")
		checkLines(t, data)
		msg, err := mail.ReadMessage(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("ReadMessage: %v", err)
		}
		if got := msg.Header.Get("Date"); got != "Wed, 04 Mar 2026 05:06:07 +0000" {
			t.Errorf("Date = %q; want RFC 1123 with a numeric zone", got)
		}
		got, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
		if want := strings.ReplaceAll(body, "\n", "\r\n"); err != nil || string(got) != want {
			t.Errorf("body %.30q decoded = %.30q, %v; want it back with CRLF line breaks", body, got, err)
		}
	}
}

func TestMessageID(t *testing.T) {
	t.Parallel()
	from, _ := parseAddress("s@mail.example.com")
	a, b := messageID(from), messageID(from)
	if a == b || !strings.HasPrefix(a, "<") || !strings.HasSuffix(a, "@mail.example.com>") {
		t.Errorf("messageID = %q, %q; want two different <...@mail.example.com>", a, b)
	}
}
