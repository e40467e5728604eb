package email

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// maxRecipients is the most addresses `to` may hold (spec/nodes.md).
const maxRecipients = 50

// maxAddressLen bounds one formatted address, so that a header line stays
// under the 998 octets RFC 5322 allows.
const maxAddressLen = 900

// parseRecipients reads `to`: comma-separated text, or an array of text
// whose entries may each be comma-separated too. Empty entries are skipped.
// Every failure is INVALID_TO naming the entry.
func parseRecipients(v any) ([]*mail.Address, error) {
	var entries []string
	switch t := v.(type) {
	case string:
		entries = splitAddresses(t)
	case []any:
		for i, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, node.FieldError(CodeInvalidTo, "to", "entry %d is %s, not text", i, value.TypeName(e))
			}
			entries = append(entries, splitAddresses(s)...)
		}
	case []string:
		for _, s := range t {
			entries = append(entries, splitAddresses(s)...)
		}
	default:
		return nil, node.FieldError(CodeInvalidTo, "to", "must be text or an array of text, not %s", value.TypeName(v))
	}
	switch {
	case len(entries) == 0:
		return nil, node.FieldError(CodeInvalidTo, "to", "lists no recipients")
	case len(entries) > maxRecipients:
		return nil, node.FieldError(CodeInvalidTo, "to", "lists %d recipients; at most %d are allowed", len(entries), maxRecipients)
	}
	out := make([]*mail.Address, len(entries))
	for i, e := range entries {
		a, err := parseAddress(e)
		if err != nil {
			return nil, node.FieldError(CodeInvalidTo, "to", "recipient %d: %v", i+1, err)
		}
		out[i] = a
	}
	return out, nil
}

// splitAddresses splits text at commas, except commas inside a quoted
// string, angle brackets or a (comment), as in "Smith, J" <j@example.com>.
// A backslash escapes the next character inside quotes and comments. The
// parts are trimmed; empty parts are dropped.
func splitAddresses(s string) []string {
	var out []string
	add := func(part string) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	var quoted, escaped bool
	angle, comment, start := 0, 0, 0
	for i := 0; i < len(s); i++ { // the special characters are ASCII
		c := s[i]
		switch {
		case escaped:
			escaped = false
		case c == '\\' && (quoted || comment > 0):
			escaped = true
		case quoted:
			quoted = c != '"'
		case c == '"':
			quoted = true
		case c == '(':
			comment++
		case comment > 0:
			if c == ')' {
				comment--
			}
		case c == '<':
			angle++
		case c == '>' && angle > 0:
			angle--
		case c == ',' && angle == 0:
			add(s[start:i])
			start = i + 1
		}
	}
	add(s[start:])
	return out
}

// parseAddress reads one address as net/mail does ("a@example.com",
// "Name <a@example.com>", "\"Last, First\" <a@example.com>"). A line break
// anywhere is refused (header injection), and so is an address outside
// ASCII: it would need SMTPUTF8, which not every server offers.
func parseAddress(s string) (*mail.Address, error) {
	if strings.ContainsAny(s, "\r\n") {
		return nil, fmt.Errorf("%q must not contain line breaks", s)
	}
	a, err := mail.ParseAddress(s)
	if err != nil {
		return nil, fmt.Errorf("%q is not an email address (%v)", s, strings.TrimPrefix(err.Error(), "mail: "))
	}
	for _, r := range a.Address {
		if r < 0x20 || r > 0x7e {
			return nil, fmt.Errorf("%q: addresses outside ASCII are not supported", s)
		}
	}
	if len(a.String()) > maxAddressLen {
		return nil, errors.New("an address with its name is longer than 900 characters")
	}
	return a, nil
}

// envelope is an address as MAIL FROM and RCPT TO carry it: the addr-spec,
// its local part quoted when it needs quotes.
func envelope(a *mail.Address) string {
	return strings.TrimSuffix(strings.TrimPrefix((&mail.Address{Address: a.Address}).String(), "<"), ">")
}
