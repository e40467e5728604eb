// Package email holds the Send Email (SMTP) node: it sends one plain-text or
// HTML message through an SMTP server, always over TLS (implicit TLS on port
// 465, STARTTLS on any other port), optionally with a username and password.
//
// The SMTP conversation uses the standard library's net/smtp on a connection
// the node dials itself, so that the node owns every deadline: each step
// before the message body must be answered within stepTimeout, and the body
// with the server's final reply get dataTimeout together (spec/nodes.md).
// net/smtp never sets a deadline of its own; go-smtp's client sets and clears
// one inside every command, leaves the writing of the body without any, and
// restarts its clock after the final dot, so the two budgets could not be
// kept exactly. go-smtp stays a test dependency (the in-process server).
package email

import (
	"context"
	"crypto/x509"
	"net"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() { node.Register(Spec()) }

// Error codes of the Send Email node. INVALID_PORT is node.CodeInvalidPort;
// a bad smtp_host, from, html, username or password fails INVALID_CONFIG.
const (
	CodeInvalidTo      = "INVALID_TO"
	CodeMissingSubject = "MISSING_SUBJECT"
	CodeInvalidSubject = "INVALID_SUBJECT"
	CodeMissingBody    = "MISSING_BODY"
	CodeInvalidBody    = "INVALID_BODY"
	// CodeSMTPError: the server refused a step (its reply code and text are
	// in the message). Retryable only for a 4xx reply before the body.
	CodeSMTPError = "SMTP_ERROR"
	// CodeConnection: the connection could not be made, or it failed or
	// timed out before the whole message was sent. The server cannot have
	// the message, so it is retryable.
	CodeConnection = "SMTP_CONNECTION_ERROR"
	// CodeDeliveryUncertain: the connection dropped or timed out after the
	// whole message was sent and before the server's reply; the message may
	// have been delivered. Never retried.
	CodeDeliveryUncertain = "SMTP_DELIVERY_UNCERTAIN"
	// CodeTLSRequired: a server on a port other than 465 does not offer
	// STARTTLS. Nothing, credentials included, is sent in clear.
	CodeTLSRequired = "SMTP_TLS_REQUIRED"
	// CodeTLSError: the TLS handshake failed (an untrusted or mismatched
	// certificate, or a server that does not speak TLS on port 465).
	CodeTLSError = "SMTP_TLS_ERROR"
)

// Time limits of an attempt (spec/nodes.md rule 4 and Send Email). They are
// variables so that tests can shorten them.
var (
	// connectTimeout bounds the TCP connect; a connection taking longer
	// cannot be made, which is retryable.
	connectTimeout = 10 * time.Second
	// stepTimeout bounds each step before the body: the TLS handshake, the
	// greeting, EHLO, STARTTLS, AUTH, MAIL, each RCPT and DATA.
	stepTimeout = 30 * time.Second
	// dataTimeout bounds the body and the server's final reply together.
	dataTimeout = 120 * time.Second
)

// Options configure the node beyond its config fields. The zero value is what
// the server registers: the system's root certificates and a plain TCP dial.
type Options struct {
	// RootCAs are the authorities trusted to sign the server's certificate;
	// nil trusts the system roots.
	RootCAs *x509.CertPool
	// Dial opens the TCP connection to address, which is smtp_host and
	// smtp_port joined; ctx carries the connect timeout. Nil uses
	// net.Dialer. Tests use it to send "localhost:465" to a listener on a
	// random port, since the port also chooses the TLS mode.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
}

// Spec is the Send Email node as the server registers it.
func Spec() *node.Spec { return NewSpec(Options{}) }

// NewSpec is the Send Email node with options.
func NewSpec(opts Options) *node.Spec {
	return &node.Spec{
		TypeID:      "send_email",
		DisplayName: "Send Email (SMTP)",
		Category:    node.CategoryAction,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Sends an email through an SMTP server over TLS (STARTTLS, or implicit TLS on port 465).",
		Fields: []node.Field{
			{Name: "smtp_host", Kind: node.KindText, Required: true,
				Description: "host name or IP address of the SMTP server"},
			{Name: "smtp_port", Kind: node.KindInteger, Default: 587,
				Min: node.Bound(1), Max: node.Bound(65535), Strict: true, Code: node.CodeInvalidPort,
				Description: "465 for implicit TLS; any other port (587 by default) must offer STARTTLS"},
			{Name: "from", Kind: node.KindText, Required: true,
				Description: "sender address, optionally with a name: Name <sender@example.com>"},
			{Name: "to", Kind: node.KindText, Required: true, Code: CodeInvalidTo,
				Description: "recipients: comma-separated text or an array, at most 50; commas inside quotes or angle brackets do not split",
				Schema:      map[string]any{"type": []any{"string", "array"}, "items": map[string]any{"type": "string"}}},
			{Name: "subject", Kind: node.KindAny, Required: true, MissingCode: CodeMissingSubject, Code: CodeInvalidSubject,
				Description: "subject line; may be empty", Schema: map[string]any{"type": "string"}},
			{Name: "body", Kind: node.KindAny, Required: true, MissingCode: CodeMissingBody, Code: CodeInvalidBody,
				Description: "message text; may be empty", Schema: map[string]any{"type": "string"}},
			{Name: "html", Kind: node.KindBoolean, Default: false,
				Description: "send the body as HTML instead of plain text"},
			{Name: "username", Kind: node.KindText,
				Description: "SMTP login; leave it and password empty for a relay without authentication"},
			{Name: "password", Kind: node.KindText, Credential: true,
				Description: "SMTP password"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output: node.Object(map[string]any{
			"sent":       node.T("boolean", "true: the server accepted the message"),
			"message_id": node.T("string", "the Message-ID header, angle brackets included"),
		}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return newSender(opts, c)
		},
	}
}

// sender is a configured Send Email node.
type sender struct {
	opts Options
	host string // without brackets around an IPv6 address
	port int
	from *mail.Address
	to   []*mail.Address
	// subject and body are the config's text, unchanged.
	subject, body      string
	html               bool
	username, password string
}

// newSender checks a decoded config. Every check is made here, before any
// connection is attempted.
func newSender(opts Options, c node.Config) (*sender, error) {
	s := &sender{opts: opts, port: c.Int("smtp_port"), html: c.Bool("html")}
	var err error
	if s.host, err = hostName(c.Value("smtp_host")); err != nil {
		return nil, err
	}
	if s.from, err = parseAddress(c.String("from")); err != nil {
		return nil, node.ConfigError("from", "%v", err)
	}
	if s.to, err = parseRecipients(c.Value("to")); err != nil {
		return nil, err
	}
	if s.subject, err = text(c.Value("subject"), "subject", CodeInvalidSubject); err != nil {
		return nil, err
	}
	if strings.ContainsAny(s.subject, "\r\n") {
		return nil, node.FieldError(CodeInvalidSubject, "subject", "must not contain line breaks")
	}
	if s.body, err = text(c.Value("body"), "body", CodeInvalidBody); err != nil {
		return nil, err
	}
	if !c.Blank("username") {
		s.username = c.String("username")
	}
	if !c.Blank("password") {
		s.password = c.String("password")
	}
	switch {
	case s.username != "" && s.password == "":
		return nil, node.ConfigError("password", "is required with a username (leave both empty for a relay without authentication)")
	case s.username == "" && s.password != "":
		return nil, node.ConfigError("username", "is required with a password (leave both empty for a relay without authentication)")
	}
	return s, nil
}

// text reads a subject or body: any text, empty included; another JSON type
// fails with code.
func text(v any, field, code string) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", node.FieldError(code, field, "must be text, not %s", value.TypeName(v))
	}
	return s, nil
}

// hostName checks smtp_host: a DNS name or an IP address (an IPv6 address
// may be in brackets). The port belongs in smtp_port.
func hostName(v any) (string, error) {
	h := strings.TrimSpace(value.Text(v))
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if net.ParseIP(h) != nil {
		return h, nil
	}
	if _, port, err := net.SplitHostPort(h); err == nil {
		return "", node.ConfigError("smtp_host", "%q holds a port; put the port (%s) in smtp_port", h, port)
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
			return "", node.ConfigError("smtp_host", "%q is not a host name or IP address", h)
		}
	}
	return h, nil
}

// addr is the address dialed.
func (s *sender) addr() string { return net.JoinHostPort(s.host, strconv.Itoa(s.port)) }

var _ node.Runner = (*sender)(nil)
