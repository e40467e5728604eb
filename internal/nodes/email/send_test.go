package email

import (
	"bytes"
	"context"
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

var alice = map[string]string{"alice": "s3cret pass"}

func TestDeliver(t *testing.T) {
	t.Parallel()
	login := map[string]any{"username": "alice", "password": "s3cret pass"}
	tests := []struct {
		name     string
		cfg      serverConfig
		changes  map[string]any
		wantUser string
	}{
		{"STARTTLS without login", serverConfig{}, nil, ""},
		{"STARTTLS with PLAIN", serverConfig{users: alice}, login, "alice"},
		{"STARTTLS with LOGIN only", serverConfig{users: alice, mechs: []string{"LOGIN"}}, login, "alice"},
		{"implicit TLS without login", serverConfig{implicit: true}, nil, ""},
		{"implicit TLS with PLAIN", serverConfig{implicit: true, users: alice}, login, "alice"},
		{"implicit TLS with LOGIN only", serverConfig{implicit: true, users: alice, mechs: []string{"LOGIN"}}, login, "alice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, tt.cfg)
			res, env, err := send(t, ts.options(), ts.config(tt.changes))
			if err != nil {
				t.Fatalf("Run error: %v", err)
			}
			out, _ := res.Output.(map[string]any)
			if out["sent"] != true {
				t.Errorf("output = %v; want sent true", res.Output)
			}
			if id, _ := out["message_id"].(string); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@example.com>") {
				t.Errorf("output message_id = %q; want <...@example.com>", out["message_id"])
			}
			msgs := ts.messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages; want 1", len(msgs))
			}
			m := msgs[0]
			if m.from != "sender@example.com" || !reflect.DeepEqual(m.to, []string{"rcpt@example.com"}) || m.user != tt.wantUser || !m.tls {
				t.Errorf("server saw from %q to %q login %q tls %v; want sender@example.com, [rcpt@example.com], %q, true",
					m.from, m.to, m.user, m.tls, tt.wantUser)
			}
			if !env.Logged("email sent") || env.Logged("s3cret") {
				t.Errorf("log = %q; want an \"email sent\" line and no password", env.Log())
			}
		})
	}
}

func TestMessageReceived(t *testing.T) {
	t.Parallel()
	body := "Grüße aus Köln.\n.a line starting with a dot\n" + strings.Repeat("long line ", 30) +
		"\r\nwindows line\n\ntrailing spaces   \nno final line break"
	subject := "Café menu – größer als gestern, " + strings.Repeat("wörter ", 20)
	for _, html := range []bool{false, true} {
		t.Run(map[bool]string{false: "text", true: "html"}[html], func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, serverConfig{})
			res, _, err := send(t, ts.options(), ts.config(map[string]any{
				"from":    "Zoë Sender <sender@example.com>",
				"to":      []any{`"Smith, John" <john@example.com>, b@example.com`, "b@EXAMPLE.com"},
				"subject": subject,
				"body":    body,
				"html":    html,
			}))
			if err != nil {
				t.Fatalf("Run error: %v", err)
			}
			msgs := ts.messages()
			if len(msgs) != 1 {
				t.Fatalf("server received %d messages; want 1", len(msgs))
			}
			m := msgs[0]
			// b@EXAMPLE.com repeats b@example.com: one RCPT, both in To.
			if want := []string{"john@example.com", "b@example.com"}; !reflect.DeepEqual(m.to, want) {
				t.Errorf("RCPT TO = %q; want %q", m.to, want)
			}
			checkLines(t, m.data)
			msg, err := mail.ReadMessage(bytes.NewReader(m.data))
			if err != nil {
				t.Fatalf("ReadMessage: %v\n%s", err, m.data)
			}
			h := msg.Header
			if d, err := h.Date(); err != nil || time.Since(d).Abs() > time.Minute {
				t.Errorf("Date = %q (%v); want about now", h.Get("Date"), err)
			}
			if id := res.Output.(map[string]any)["message_id"]; h.Get("Message-ID") != id {
				t.Errorf("Message-ID = %q; want the output's %q", h.Get("Message-ID"), id)
			}
			if from, err := mail.ParseAddress(h.Get("From")); err != nil || from.Name != "Zoë Sender" || from.Address != "sender@example.com" {
				t.Errorf("From = %q (%v); want Zoë Sender <sender@example.com>", h.Get("From"), err)
			}
			to, err := h.AddressList("To")
			if err != nil || len(to) != 3 || to[0].Name != "Smith, John" || to[0].Address != "john@example.com" || to[2].Address != "b@EXAMPLE.com" {
				t.Errorf("To = %q (%v); want Smith, John, b and b again", h.Get("To"), err)
			}
			raw := h.Get("Subject")
			got, err := new(mime.WordDecoder).DecodeHeader(raw)
			if err != nil || got != subject || !strings.Contains(raw, "=?utf-8?q?") {
				t.Errorf("Subject = %q decoded %q (%v); want Q-encoded %q", raw, got, err, subject)
			}
			wantType := map[bool]string{false: "text/plain", true: "text/html"}[html]
			mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
			if err != nil || mt != wantType || params["charset"] != "utf-8" || h.Get("MIME-Version") != "1.0" ||
				h.Get("Content-Transfer-Encoding") != "quoted-printable" {
				t.Errorf("Content-Type %q, MIME-Version %q, Content-Transfer-Encoding %q; want %s; charset=utf-8, 1.0, quoted-printable",
					h.Get("Content-Type"), h.Get("MIME-Version"), h.Get("Content-Transfer-Encoding"), wantType)
			}
			decoded, err := io.ReadAll(quotedprintable.NewReader(msg.Body))
			wantBody := strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\n", "\r\n")
			if err != nil || string(decoded) != wantBody {
				t.Errorf("body decoded = %q (%v); want %q", decoded, err, wantBody)
			}
		})
	}
}

// checkLines reports a bare CR or LF, or a line over 998 octets.
func checkLines(t *testing.T, data []byte) {
	t.Helper()
	for i, line := range strings.Split(string(data), "\r\n") {
		if strings.ContainsAny(line, "\r\n") || len(line) > 998 {
			t.Errorf("line %d = %q; want no bare CR or LF and at most 998 octets", i+1, line)
		}
	}
}

func TestServerRefusals(t *testing.T) {
	t.Parallel()
	reply := func(code int, msg string) error {
		return &smtp.SMTPError{Code: code, EnhancedCode: smtp.EnhancedCode{code / 100, 0, 0}, Message: msg}
	}
	refuse := func(code int, msg string) func(string) error {
		return func(string) error { return reply(code, msg) }
	}
	login := map[string]any{"username": "alice", "password": "s3cret pass"}
	tests := []struct {
		name    string
		cfg     serverConfig
		changes map[string]any
		code    string
		retry   node.Retry
		want    []string
		kept    int // messages the server read
	}{
		{"550 on one RCPT", serverConfig{rcpt: func(a string) error {
			if a == "nobody@example.com" {
				return reply(550, "No such user here")
			}
			return nil
		}}, map[string]any{"to": "rcpt@example.com, nobody@example.com"},
			CodeSMTPError, node.NoRetry, []string{"RCPT TO:<nobody@example.com>", "550", "No such user here"}, 0},
		{"535 on AUTH", serverConfig{users: alice}, map[string]any{"username": "alice", "password": "wrong"},
			CodeSMTPError, node.NoRetry, []string{"AUTH PLAIN", "535", "credentials invalid"}, 0},
		{"535 on AUTH LOGIN", serverConfig{users: alice, mechs: []string{"LOGIN"}}, map[string]any{"username": "bob", "password": "x"},
			CodeSMTPError, node.NoRetry, []string{"AUTH LOGIN", "535"}, 0},
		{"421 on MAIL", serverConfig{mail: refuse(421, "Try again later")}, nil,
			CodeSMTPError, node.Retryable, []string{"MAIL FROM", "421", "Try again later"}, 0},
		{"452 on RCPT", serverConfig{rcpt: refuse(452, "Mailbox full")}, nil,
			CodeSMTPError, node.Retryable, []string{"RCPT TO:<rcpt@example.com>", "452"}, 0},
		{"454 on AUTH", serverConfig{users: alice, authReply: reply(454, "Temporary authentication failure")}, login,
			CodeSMTPError, node.Retryable, []string{"AUTH PLAIN", "454"}, 0},
		{"451 after the body", serverConfig{afterBody: func(*smtp.Conn) error { return reply(451, "Local error in processing") }}, nil,
			CodeSMTPError, node.NoRetry, []string{"message", "451", "Local error"}, 1},
		{"554 after the body", serverConfig{afterBody: func(*smtp.Conn) error { return reply(554, "Message rejected as spam") }}, nil,
			CodeSMTPError, node.NoRetry, []string{"554", "spam"}, 1},
		{"connection dropped after the body", serverConfig{afterBody: func(c *smtp.Conn) error {
			c.Conn().Close()
			return nil
		}}, nil, CodeDeliveryUncertain, node.NoRetry, []string{"may have been delivered", "closed the connection"}, 1},
		{"no AUTH offered", serverConfig{}, login,
			CodeSMTPError, node.NoRetry, []string{"does not offer authentication"}, 0},
		{"no AUTH mechanism in common", serverConfig{users: alice, mechs: []string{"CRAM-MD5"}}, login,
			CodeSMTPError, node.NoRetry, []string{"CRAM-MD5", "PLAIN and LOGIN"}, 0},
		{"no STARTTLS", serverConfig{plain: true}, login,
			CodeTLSRequired, node.NoRetry, []string{"STARTTLS", "port 465"}, 0},
		{"implicit TLS: 421 on MAIL", serverConfig{implicit: true, mail: refuse(421, "busy")}, nil,
			CodeSMTPError, node.Retryable, []string{"421"}, 0},
		{"implicit TLS: dropped after the body", serverConfig{implicit: true, afterBody: func(c *smtp.Conn) error {
			c.Conn().Close()
			return nil
		}}, nil, CodeDeliveryUncertain, node.NoRetry, []string{"may have been delivered"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, tt.cfg)
			_, _, err := send(t, ts.options(), ts.config(tt.changes))
			wantFailure(t, tt.name, err, tt.code, tt.retry, tt.want...)
			if n := len(ts.messages()); n != tt.kept {
				t.Errorf("server read %d messages; want %d", n, tt.kept)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q shows the password", err)
			}
		})
	}
}

// TestTLSFailures: a certificate the node does not trust, or a server that
// does not speak TLS on port 465, stops the node before any credential is
// sent.
func TestTLSFailures(t *testing.T) {
	t.Parallel()
	login := map[string]any{"username": "alice", "password": "s3cret pass"}
	_, pool := testCert()
	tests := []struct {
		name string
		cfg  serverConfig
		opts func(ts *testServer) Options
		host string
		port func(ts *testServer) int
		want string
	}{
		{"STARTTLS, untrusted certificate", serverConfig{users: alice},
			func(*testServer) Options { return Options{} }, "127.0.0.1", (*testServer).port, "certificate"},
		{"implicit TLS, untrusted certificate", serverConfig{implicit: true, users: alice},
			func(ts *testServer) Options { return Options{Dial: redirect("localhost:465", ts.addr)} }, "localhost",
			func(*testServer) int { return 465 }, "certificate"},
		{"STARTTLS, certificate for another name", serverConfig{users: alice},
			func(ts *testServer) Options {
				return Options{RootCAs: pool, Dial: redirect(net.JoinHostPort("mail.example.com", strconv.Itoa(ts.port())), ts.addr)}
			}, "mail.example.com", (*testServer).port, "mail.example.com"},
		{"port 465 on a STARTTLS server", serverConfig{users: alice},
			func(ts *testServer) Options { return Options{RootCAs: pool, Dial: redirect("localhost:465", ts.addr)} }, "localhost",
			func(*testServer) int { return 465 }, "TLS handshake"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts := startServer(t, tt.cfg)
			raw := ts.config(login)
			raw["smtp_host"], raw["smtp_port"] = tt.host, tt.port(ts)
			_, _, err := send(t, tt.opts(ts), raw)
			wantFailure(t, tt.name, err, CodeTLSError, node.NoRetry, tt.want)
			ts.mu.Lock()
			auths := ts.auths
			ts.mu.Unlock()
			if auths != 0 || len(ts.messages()) != 0 {
				t.Errorf("server saw %d AUTH and %d messages; want none", auths, len(ts.messages()))
			}
		})
	}
}

// closedPort returns a port on 127.0.0.1 that nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	ts := &testServer{}
	raw := ts.config(map[string]any{"smtp_host": "127.0.0.1", "smtp_port": closedPort(t)})
	_, _, err := send(t, Options{}, raw)
	wantFailure(t, "connection refused", err, CodeConnection, node.Retryable, "cannot connect")
}

// TestCancel: ending the run ends a step in progress at once; the error
// wraps the context's, so the engine records CANCELLED.
func TestCancel(t *testing.T) {
	t.Parallel()
	ts := startServer(t, serverConfig{stallRcpt: true})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := nodetest.Run(ctx, NewSpec(ts.options()), ts.config(nil), nodetest.New(nil))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run error = %v; want one wrapping context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Run returned after %s; want soon after the cancel", d)
	}
}
