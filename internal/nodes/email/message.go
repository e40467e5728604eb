package email

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net/mail"
	"strings"
	"time"
)

// foldAt is the line length headers are folded at where they can be
// (RFC 5322 recommends 78); a word longer than maxWord cannot stay under
// the hard limit of 998 and is encoded instead.
const (
	foldAt  = 78
	maxWord = 900
)

// messageID returns a new Message-ID for a sender address, angle brackets
// included: a random left part and the sender's domain.
func messageID(from *mail.Address) string {
	domain := from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	return "<" + rand.Text() + "@" + domain + ">"
}

// buildMessage writes the message as the DATA command sends it: CRLF line
// endings, the headers, and the body as quoted-printable UTF-8.
func (s *sender) buildMessage(date time.Time, id string) []byte {
	var b bytes.Buffer
	header(&b, "Date", date.Format(time.RFC1123Z))
	header(&b, "Message-ID", id)
	header(&b, "From", s.from.String())
	to := make([]string, len(s.to))
	for i, a := range s.to {
		to[i] = a.String()
	}
	header(&b, "To", strings.Join(to, ", "))
	header(&b, "Subject", encodeSubject(s.subject))
	header(&b, "MIME-Version", "1.0")
	kind := "text/plain"
	if s.html {
		kind = "text/html"
	}
	header(&b, "Content-Type", kind+"; charset=utf-8")
	header(&b, "Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	qp.Write([]byte(s.body)) // a bytes.Buffer does not fail
	qp.Close()
	if !bytes.HasSuffix(b.Bytes(), []byte("\r\n")) {
		// A soft line break ends the last line without adding a line
		// break to the decoded body.
		b.WriteString("=\r\n")
	}
	return b.Bytes()
}

// header writes "name: value" and CRLF, folding the value at spaces so that
// lines stay near foldAt octets. Folding replaces a space with CRLF and that
// space, which unfolding undoes, so the value reads back unchanged. The
// value must not hold CR or LF (the config checks refuse them).
func header(b *bytes.Buffer, name, value string) {
	b.WriteString(name)
	b.WriteByte(':')
	n := len(name) + 1
	for _, word := range strings.Split(value, " ") {
		if n+1+len(word) > foldAt && n > len(name)+1 {
			b.WriteString("\r\n")
			n = 0
		}
		b.WriteByte(' ')
		b.WriteString(word)
		n += 1 + len(word)
	}
	b.WriteString("\r\n")
}

// encodeSubject returns the subject as header text: RFC 2047 encoded-words
// (mime.QEncoding) when it holds anything but printable ASCII, or when it
// has a word too long for a header line or would read as encoded-words
// itself; otherwise unchanged.
func encodeSubject(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c > '~' {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	if strings.Contains(s, "=?") {
		return qEncodeASCII(s)
	}
	for word := range strings.SplitSeq(s, " ") {
		if len(word) > maxWord {
			return qEncodeASCII(s)
		}
	}
	return s
}

// qEncodeASCII writes ASCII text as Q encoded-words of at most 75 octets,
// separated by spaces (which decoders drop between encoded-words).
// mime.QEncoding leaves printable ASCII as it is, so it cannot do this.
func qEncodeASCII(s string) string {
	const prefix, suffix, limit = "=?utf-8?q?", "?=", 75
	var out, word strings.Builder
	word.WriteString(prefix)
	for i := 0; i < len(s); i++ {
		c := s[i]
		var enc string
		switch {
		case c == ' ':
			enc = "_"
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte("!*+-/", c) >= 0:
			enc = string(c)
		default:
			enc = fmt.Sprintf("=%02X", c)
		}
		if word.Len()+len(enc)+len(suffix) > limit {
			out.WriteString(word.String() + suffix + " ")
			word.Reset()
			word.WriteString(prefix)
		}
		word.WriteString(enc)
	}
	out.WriteString(word.String() + suffix)
	return out.String()
}
