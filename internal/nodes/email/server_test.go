package email

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log"
	"math/big"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// testCert is a self-signed certificate for localhost and 127.0.0.1, and a
// pool that trusts it. One is made per test binary.
var testCert = sync.OnceValues(func() (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "svc test SMTP server"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
})

// serverConfig says how a test server behaves.
type serverConfig struct {
	// implicit serves TLS from the first byte (port 465's mode); plain
	// serves no TLS at all; otherwise the server offers STARTTLS.
	implicit, plain bool
	// users are the accepted logins; nil offers no AUTH. With users, MAIL
	// needs a login first.
	users map[string]string
	// mechs are the AUTH mechanisms offered; nil means PLAIN and LOGIN.
	mechs []string
	// authReply, when set, is the answer to every AUTH exchange.
	authReply error
	// mail and rcpt may refuse a command.
	mail, rcpt func(addr string) error
	// stallRcpt makes RCPT wait until the test ends.
	stallRcpt bool
	// stallBody makes DATA wait, without reading the body, until the test
	// ends.
	stallBody bool
	// afterBody runs once the body is read and kept; its error is the reply.
	afterBody func(c *smtp.Conn) error
	// stallReply makes the server keep the body and wait, without replying,
	// until the test ends.
	stallReply bool
}

// received is a message the server accepted (or at least read).
type received struct {
	from string
	to   []string
	data []byte
	user string // the login, if any
	tls  bool
}

// testServer is an SMTP server (github.com/emersion/go-smtp) on
// 127.0.0.1:0, stopped when the test ends.
type testServer struct {
	cfg  serverConfig
	addr string
	// release is closed when the test ends; stalled handlers wait on it.
	release chan struct{}

	mu    sync.Mutex
	msgs  []received
	auths int // AUTH exchanges begun
}

func startServer(t *testing.T, cfg serverConfig) *testServer {
	t.Helper()
	ts := &testServer{cfg: cfg, release: make(chan struct{})}
	cert, _ := testCert()
	tlsConfig := &tls.Config{Certificates: []tls.Certificate{cert}}
	srv := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) {
		return &session{ts: ts, conn: c}, nil
	}))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = false
	srv.ReadTimeout = 10 * time.Second
	srv.WriteTimeout = 10 * time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	var l net.Listener
	var err error
	switch {
	case cfg.implicit:
		l, err = tls.Listen("tcp", "127.0.0.1:0", tlsConfig)
	case cfg.plain:
		l, err = net.Listen("tcp", "127.0.0.1:0")
	default:
		srv.TLSConfig = tlsConfig
		l, err = net.Listen("tcp", "127.0.0.1:0")
	}
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = l.Addr().String()
	go srv.Serve(l)
	t.Cleanup(func() {
		close(ts.release)
		srv.Close()
	})
	return ts
}

// port is the server's port.
func (ts *testServer) port() int {
	_, p, _ := net.SplitHostPort(ts.addr)
	n, _ := strconv.Atoi(p)
	return n
}

// stall waits until the test ends, then fails the command.
func (ts *testServer) stall() error {
	<-ts.release
	return errors.New("test over")
}

// messages returns what the server has read so far.
func (ts *testServer) messages() []received {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([]received(nil), ts.msgs...)
}

// options are the node options that reach this server: the test CA, and
// for implicit TLS a dial that sends localhost:465 here.
func (ts *testServer) options() Options {
	_, pool := testCert()
	opts := Options{RootCAs: pool}
	if ts.cfg.implicit {
		opts.Dial = redirect("localhost:465", ts.addr)
	}
	return opts
}

// config is a valid node config for this server, with changes applied
// (a nil value deletes the key).
func (ts *testServer) config(changes map[string]any) map[string]any {
	raw := map[string]any{
		"smtp_host": "127.0.0.1",
		"smtp_port": ts.port(),
		"from":      "Sender <sender@example.com>",
		"to":        "rcpt@example.com",
		"subject":   "Hello",
		"body":      "Hi there",
	}
	if ts.cfg.implicit {
		raw["smtp_host"], raw["smtp_port"] = "localhost", 465
	}
	for k, v := range changes {
		if v == nil {
			delete(raw, k)
		} else {
			raw[k] = v
		}
	}
	return raw
}

// redirect dials to instead of from, and any other address as it is.
func redirect(from, to string) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == from {
			addr = to
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}

// session is one connection's state on the test server.
type session struct {
	ts   *testServer
	conn *smtp.Conn
	user string
	from string
	to   []string
}

func (s *session) AuthMechanisms() []string {
	switch {
	case s.ts.cfg.users == nil:
		return nil
	case s.ts.cfg.mechs != nil:
		return s.ts.cfg.mechs
	}
	return []string{sasl.Plain, sasl.Login}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	s.ts.mu.Lock()
	s.ts.auths++
	s.ts.mu.Unlock()
	check := func(user, pass string) error {
		if s.ts.cfg.authReply != nil {
			return s.ts.cfg.authReply
		}
		if want, ok := s.ts.cfg.users[user]; !ok || want != pass {
			return &smtp.SMTPError{Code: 535, EnhancedCode: smtp.EnhancedCode{5, 7, 8}, Message: "Authentication credentials invalid"}
		}
		s.user = user
		return nil
	}
	switch mech {
	case sasl.Plain:
		return sasl.NewPlainServer(func(_, user, pass string) error { return check(user, pass) }), nil
	case sasl.Login:
		return &loginServer{check: check}, nil
	}
	return nil, smtp.ErrAuthUnknownMechanism
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.ts.cfg.users != nil && s.user == "" {
		return smtp.ErrAuthRequired
	}
	if s.ts.cfg.mail != nil {
		if err := s.ts.cfg.mail(from); err != nil {
			return err
		}
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if s.ts.cfg.stallRcpt {
		return s.ts.stall()
	}
	if s.ts.cfg.rcpt != nil {
		if err := s.ts.cfg.rcpt(to); err != nil {
			return err
		}
	}
	s.to = append(s.to, to)
	return nil
}

func (s *session) Data(r io.Reader) error {
	if s.ts.cfg.stallBody {
		return s.ts.stall()
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, isTLS := s.conn.TLSConnectionState()
	s.ts.mu.Lock()
	s.ts.msgs = append(s.ts.msgs, received{from: s.from, to: s.to, data: data, user: s.user, tls: isTLS})
	s.ts.mu.Unlock()
	if s.ts.cfg.stallReply {
		return s.ts.stall()
	}
	if s.ts.cfg.afterBody != nil {
		return s.ts.cfg.afterBody(s.conn)
	}
	return nil
}

func (s *session) Reset() { s.from, s.to = "", nil }

func (s *session) Logout() error { return nil }

// loginServer is the server side of the LOGIN mechanism, which go-sasl
// provides only as a client.
type loginServer struct {
	check func(user, pass string) error
	user  string
	step  int
}

func (l *loginServer) Next(resp []byte) ([]byte, bool, error) {
	l.step++
	switch l.step {
	case 1:
		return []byte("Username:"), false, nil
	case 2:
		l.user = string(resp)
		return []byte("Password:"), false, nil
	}
	return nil, true, l.check(l.user, string(resp))
}

// send runs the node once against opts and raw, bounded in time.
func send(t *testing.T, opts Options, raw map[string]any) (node.Result, *nodetest.Env, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	env := nodetest.New(map[string]any{"x": 1})
	res, err := nodetest.Run(ctx, NewSpec(opts), raw, env)
	return res, env, err
}

// wantFailure reports unless err is a *node.Error with the code and retry
// flag, whose message holds each of want.
func wantFailure(t *testing.T, what string, err error, code string, retry node.Retry, want ...string) {
	t.Helper()
	nodetest.WantError(t, what, err, code, "")
	var ne *node.Error
	if !errors.As(err, &ne) {
		return
	}
	if ne.Retry != retry {
		t.Errorf("%s: error %q has Retry %v; want %v", what, err, ne.Retry, retry)
	}
	for _, w := range want {
		if !containsFold(err.Error(), w) {
			t.Errorf("%s: error %q; want it to mention %q", what, err, w)
		}
	}
}

// containsFold reports whether s holds sub in any letter case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
