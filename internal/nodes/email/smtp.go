package email

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/smtp"
	"net/textproto"
	"os"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/svcrun/svc/internal/node"
)

// implicitTLSPort is the port on which the connection starts with TLS; on
// every other port the node requires STARTTLS.
const implicitTLSPort = 465

// maxReply is how much of a server reply an error message shows (rule 3a).
const maxReply = 1024

// Run sends the message once. Retrying is the engine's decision, steered by
// the error's Retry (see conversation.fail).
func (s *sender) Run(ctx context.Context, env node.Env) (node.Result, error) {
	id := messageID(s.from)
	msg := s.buildMessage(time.Now(), id)
	if err := s.send(ctx, msg); err != nil {
		return node.Result{}, err
	}
	env.Logger().Info("email sent", "server", s.addr(), "recipients", len(s.to), "message_id", id)
	return node.Result{Output: map[string]any{"sent": true, "message_id": id}}, nil
}

// send dials the server and holds one SMTP conversation.
func (s *sender) send(ctx context.Context, msg []byte) error {
	dial := s.opts.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, connectTimeout)
	nc, err := dial(dctx, "tcp", s.addr())
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return &node.Error{Code: CodeConnection, Message: "stopped before connecting: " + ctx.Err().Error(), Err: ctx.Err()}
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no connection within %s", connectTimeout)
		}
		return &node.Error{Code: CodeConnection, Retry: node.Retryable, Err: err,
			Message: fmt.Sprintf("cannot connect to %s: %v", s.addr(), err)}
	}
	cv := &conversation{ctx: ctx, conn: &conn{Conn: nc}}
	defer cv.conn.Close()
	// Ending the run closes the connection, which ends any step in progress.
	defer context.AfterFunc(ctx, func() { cv.conn.Close() })()
	return s.converse(cv, msg)
}

// converse runs the SMTP steps, each under its deadline.
func (s *sender) converse(cv *conversation, msg []byte) error {
	config := &tls.Config{ServerName: s.host, RootCAs: s.opts.RootCAs, MinVersion: tls.VersionTLS12}
	var nc net.Conn = cv.conn
	if s.port == implicitTLSPort {
		cv.begin("TLS handshake", stepTimeout)
		cv.tlsStep = true
		tc := tls.Client(cv.conn, config)
		if err := tc.HandshakeContext(cv.ctx); err != nil {
			return cv.fail(err)
		}
		cv.tlsStep = false
		nc = tc
	}
	cv.begin("greeting", stepTimeout)
	c, err := smtp.NewClient(nc, s.host)
	if err != nil {
		return cv.fail(err)
	}
	cv.begin("EHLO", stepTimeout)
	if err := c.Hello("localhost"); err != nil {
		return cv.fail(err)
	}
	if s.port != implicitTLSPort {
		if ok, _ := c.Extension("STARTTLS"); !ok {
			return node.Errorf(CodeTLSRequired, "%s does not offer STARTTLS, and the node sends no credentials or message without TLS (use port 465 if the server speaks implicit TLS)", s.addr())
		}
		cv.begin("STARTTLS", stepTimeout)
		cv.tlsStep = true
		if err := c.StartTLS(config); err != nil {
			return cv.fail(err)
		}
		cv.tlsStep = false
	}
	if s.username != "" {
		a, mech, err := s.auth(c)
		if err != nil {
			return err
		}
		cv.begin("AUTH "+mech, stepTimeout)
		if err := c.Auth(a); err != nil {
			return cv.fail(err)
		}
	}
	cv.begin("MAIL FROM", stepTimeout)
	if err := c.Mail(envelope(s.from)); err != nil {
		return cv.fail(err)
	}
	// An address listed twice is sent once. Domains are compared in any
	// letter case; local parts exactly, as RFC 5321 says.
	seen := map[string]bool{}
	for _, a := range s.to {
		rcpt := envelope(a)
		at := strings.LastIndexByte(rcpt, '@') // net/mail requires one
		key := rcpt[:at] + strings.ToLower(rcpt[at:])
		if seen[key] {
			continue
		}
		seen[key] = true
		cv.begin("RCPT TO:<"+rcpt+">", stepTimeout)
		if err := c.Rcpt(rcpt); err != nil {
			return cv.fail(err)
		}
	}
	cv.begin("DATA", stepTimeout)
	w, err := c.Data()
	if err != nil {
		return cv.fail(err)
	}
	cv.begin("message", dataTimeout)
	cv.inBody = true
	if _, err := w.Write(msg); err != nil {
		return cv.fail(err)
	}
	// Close writes the final dot and reads the server's reply.
	if err := w.Close(); err != nil {
		return cv.fail(err)
	}
	// The server has accepted the message: the answer to QUIT changes nothing.
	cv.begin("QUIT", stepTimeout)
	c.Quit()
	return nil
}

// auth picks the mechanism: PLAIN, else LOGIN. Both send the password as it
// is, which is safe only because the connection is TLS by now.
func (s *sender) auth(c *smtp.Client) (smtp.Auth, string, error) {
	ok, params := c.Extension("AUTH")
	mechs := strings.Fields(strings.ToUpper(params))
	for _, m := range mechs {
		if m == "PLAIN" {
			return smtp.PlainAuth("", s.username, s.password, s.host), m, nil
		}
	}
	for _, m := range mechs {
		if m == "LOGIN" {
			return &loginAuth{username: s.username, password: s.password}, m, nil
		}
	}
	if !ok {
		return nil, "", node.Errorf(CodeSMTPError, "%s does not offer authentication (AUTH), but a username is set", s.addr())
	}
	return nil, "", node.Errorf(CodeSMTPError, "%s offers authentication by %s only; this node supports PLAIN and LOGIN", s.addr(), clip(params))
}

// loginAuth is the LOGIN mechanism, which net/smtp lacks and some servers
// offer alone: the server prompts for the username, then the password.
type loginAuth struct {
	username, password string
	step               int
}

func (a *loginAuth) Start(server *smtp.ServerInfo) (string, []byte, error) {
	if !server.TLS {
		return "", nil, errors.New("refusing to send a password without TLS")
	}
	return "LOGIN", nil, nil
}

func (a *loginAuth) Next(challenge []byte, more bool) ([]byte, error) {
	if !more {
		return nil, nil
	}
	a.step++
	switch a.step {
	case 1:
		return []byte(a.username), nil
	case 2:
		return []byte(a.password), nil
	}
	return nil, fmt.Errorf("unexpected LOGIN prompt %q", clip(string(challenge)))
}

// conn is the TCP connection under TLS and SMTP. It remembers whether a
// write failed: a message whose final dot was not written cannot have been
// delivered.
type conn struct {
	net.Conn
	writeFailed atomic.Bool
}

func (c *conn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if err != nil {
		c.writeFailed.Store(true)
	}
	return n, err
}

// conversation is the state of one attempt that errors are judged by.
type conversation struct {
	ctx     context.Context
	conn    *conn
	step    string        // the step in progress, named in errors
	limit   time.Duration // its time limit
	tlsStep bool          // the step negotiates TLS
	inBody  bool          // DATA was accepted: the message is being sent
}

// begin starts a step: its deadline covers every read and write until the
// next step begins.
func (cv *conversation) begin(step string, limit time.Duration) {
	cv.step, cv.limit = step, limit
	cv.conn.SetDeadline(time.Now().Add(limit))
}

// fail turns a step's error into the node's error, deciding retries by
// whether the server can have the message (spec/nodes.md rule 4): never
// before the final dot is written, so a failed connection, a timeout and a
// 4xx reply before then are retryable; a 5xx reply never is; once the whole
// message is written, a reply is final and a lost connection is uncertain.
func (cv *conversation) fail(err error) error {
	sent := cv.inBody && !cv.conn.writeFailed.Load()
	if cause := cv.ctx.Err(); cause != nil {
		if sent {
			return cv.uncertain(cause)
		}
		return &node.Error{Code: CodeConnection, Message: fmt.Sprintf("%s: stopped: %v", cv.step, cause), Err: cause}
	}
	var reply *textproto.Error
	if errors.As(err, &reply) {
		e := &node.Error{Code: CodeSMTPError, Err: err,
			Message: fmt.Sprintf("%s: the server replied %d %s", cv.step, reply.Code, clip(reply.Msg))}
		if reply.Code/100 == 4 && !cv.inBody {
			e.Retry = node.Retryable
		}
		return e
	}
	if sent {
		return cv.uncertain(err)
	}
	transport := isTransport(err)
	switch {
	case cv.tlsStep && !transport:
		return &node.Error{Code: CodeTLSError, Message: fmt.Sprintf("%s: %v", cv.step, err), Err: err}
	case !transport:
		return &node.Error{Code: CodeSMTPError, Message: fmt.Sprintf("%s: %v", cv.step, err), Err: err}
	}
	what := err.Error()
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		what = "no answer within " + cv.limit.String()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		what = "the server closed the connection"
	}
	if cv.inBody {
		what = "the message could not be sent completely (" + what + "); the server cannot have accepted it"
	}
	return &node.Error{Code: CodeConnection, Retry: node.Retryable, Message: cv.step + ": " + what, Err: err}
}

// uncertain is the failure after the whole message was written and before
// the server confirmed it.
func (cv *conversation) uncertain(err error) error {
	what := err.Error()
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		what = "no reply within " + cv.limit.String()
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		what = "the server closed the connection"
	}
	return &node.Error{Code: CodeDeliveryUncertain, Err: err,
		Message: "the message was sent but the server did not confirm it (" + what + "); it may have been delivered, so it is not sent again"}
}

// isTransport reports whether err is the connection failing (a timeout, a
// close, a reset) rather than the server's answer or a TLS refusal.
func isTransport(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return true
	}
	var op *net.OpError
	// crypto/tls reports an alert from the server as a "remote error".
	return errors.As(err, &op) && op.Op != "remote error"
}

// clip shows a server reply on one line, cut at maxReply bytes.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= maxReply {
		return s
	}
	cut := maxReply
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

var (
	_ smtp.Auth = (*loginAuth)(nil)
	_ net.Conn  = (*conn)(nil)
)
