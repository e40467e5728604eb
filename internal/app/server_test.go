package app_test

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/svcrun/svc/internal/client"
)

// binary is svc-server built once for the tests that run it as a process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "svc-bin")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "svc-server")
	out, err := exec.Command("go", "build", "-o", binary, "github.com/svcrun/svc/cmd/svc-server").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build svc-server: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const testToken = "e2e-token-0123456789abcdefghijklmnopqrstuv"

// proc is a running svc-server.
type proc struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr strings.Builder
	exited chan error
}

var listening = regexp.MustCompile(`svc-server listening.* url=(\S+)`)

// start runs svc-server api with args and waits until it listens.
func start(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary, append([]string{"api", "--port", "0"}, args...)...), exited: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.stderr.WriteString(line + "\n")
			p.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
		}
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() { p.cmd.Process.Kill() })
	select {
	case p.url = <-found:
	case err := <-p.exited:
		t.Fatalf("svc-server exited: %v\n%s", err, p.log())
	case <-time.After(20 * time.Second):
		t.Fatalf("svc-server did not start:\n%s", p.log())
	}
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}

func (p *proc) client(t *testing.T, token string) *client.Client {
	c, err := client.New(p.url, token, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestServerGeneratesToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, []string{"SVC_TOKEN=", "SVC_NODE_BIN=/usr/bin/node"}, "--data-dir", dir)
	m := regexp.MustCompile(`\n    (svc_\S+)\n`).FindStringSubmatch(p.log())
	if m == nil {
		t.Fatalf("no generated token printed:\n%s", p.log())
	}
	if strings.Count(p.log(), m[1]) != 1 {
		t.Errorf("the token is printed more than once")
	}
	if !strings.Contains(p.log(), "--file-sandbox-dir is not set") {
		t.Errorf("no file-sandbox warning:\n%s", p.log())
	}
	c := p.client(t, m[1])
	if _, err := c.SaveWorkflow(t.Context(), []byte(doc("w")), 0); err != nil {
		t.Errorf("the generated token cannot write: %v", err)
	}
	h, err := c.Health(t.Context())
	if err != nil || h.Status != "ok" {
		t.Fatalf("health: %+v, %v", h, err)
	}
	if _, err := os.Stat("/usr/bin/node"); err == nil && (h.NodeBundled.Status != "ok" || !strings.HasPrefix(h.NodeBundled.Version, "v")) {
		t.Errorf("node_bundled with SVC_NODE_BIN = %+v", h.NodeBundled)
	}
}

func TestServerRefusesShortToken(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(binary, "api", "--port", "0", "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), "SVC_TOKEN=too-short")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(string(out), "at least 32 characters") {
		t.Errorf("short token: %v\n%s", err, out)
	}
}

func doc(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"W","nodes":[{"id":"t","node_type_id":"manual_trigger","config":{"mock_payload":{"n":1}}},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"x","value":"{{ $input.n + 1 }}"}},
	 {"id":"o","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"t","to":"s"},{"id":"e2","from":"s","to":"o"}]}`, id)
}

func slowDoc(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"Slow","nodes":[{"id":"d","node_type_id":"delay","config":{"duration":60}}],"edges":[]}`, id)
}

// TestCrash kills the server with SIGKILL while clients save and run
// workflows. After a restart every acknowledged save is there with its
// row_version, the database passes an integrity check, and no run is left
// running.
func TestCrash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"SVC_TOKEN=" + testToken}
	p := start(t, env, "--data-dir", dir, "--rate-limit", "0")
	c := p.client(t, testToken)
	if _, err := c.SaveWorkflow(t.Context(), []byte(slowDoc("slow")), 0); err != nil {
		t.Fatal(err)
	}
	go c.RunWorkflow(context.Background(), "slow", nil) // left running by the crash

	var (
		mu    sync.Mutex
		acked = map[string]int64{}
		wg    sync.WaitGroup
		stop  = make(chan struct{})
	)
	for g := range 8 {
		wg.Go(func() {
			id := fmt.Sprintf("w%d", g)
			for {
				select {
				case <-stop:
					return
				default:
				}
				v, err := c.SaveWorkflow(context.Background(), []byte(doc(id)), 0)
				if err != nil {
					return // the server is gone
				}
				mu.Lock()
				acked[id] = v
				mu.Unlock()
				if _, err := c.RunWorkflow(context.Background(), id, nil); err != nil {
					return
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no save was acknowledged before the kill")
	}
	t.Logf("acknowledged saves at the kill: %v", acked)

	checkIntegrity(t, filepath.Join(dir, "svc.db"))
	p = start(t, env, "--data-dir", dir)
	c = p.client(t, testToken)
	if !strings.Contains(p.log(), "marked failed") {
		t.Errorf("the restart did not fail the run left running:\n%s", p.log())
	}
	for id, v := range acked {
		_, got, err := c.GetWorkflow(t.Context(), id)
		// A save in flight at the kill may have committed without its
		// acknowledgement: one version more at most.
		if err != nil || got < v || got > v+1 {
			t.Errorf("%s: row_version %d (%v) after the crash; acknowledged %d", id, got, err, v)
		}
	}
	db := openDB(t, filepath.Join(dir, "svc.db"))
	var running int
	if err := db.QueryRow(`SELECT COUNT(*) FROM runs WHERE status = 'running'`).Scan(&running); err != nil || running != 0 {
		t.Errorf("runs still running after the restart: %d (%v)", running, err)
	}
	var failed int
	db.QueryRow(`SELECT COUNT(*) FROM runs WHERE workflow_id = 'slow' AND status = 'failed' AND error_code = 'SERVER_STOPPED'`).Scan(&failed)
	if failed != 1 {
		t.Errorf("the slow run was not failed by the restart (%d)", failed)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
}

func openDB(t *testing.T, path string) *sql.DB {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func checkIntegrity(t *testing.T, path string) {
	t.Helper()
	db := openDB(t, path)
	var res string
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&res); err != nil || res != "ok" {
		t.Errorf("integrity_check = %q, %v", res, err)
	}
	db.Close()
}

// TestGracefulShutdown sends SIGTERM while a run is in flight: the run ends
// as cancelled and is recorded so, its client gets the result, and the
// server exits within the grace period.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := start(t, []string{"SVC_TOKEN=" + testToken}, "--data-dir", dir)
	c := p.client(t, testToken)
	if _, err := c.SaveWorkflow(t.Context(), []byte(slowDoc("slow")), 0); err != nil {
		t.Fatal(err)
	}
	got := make(chan *client.RunResult, 1)
	go func() {
		res, err := c.RunWorkflow(context.Background(), "slow", nil)
		if err != nil {
			t.Errorf("run at shutdown: %v", err)
		}
		got <- res
	}()
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.log())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("still running 15 s after SIGTERM")
	}
	if d := time.Since(began); d > 11*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	if res := <-got; res == nil || res.Status != "cancelled" {
		t.Errorf("run result at shutdown = %+v", res)
	}
	db := openDB(t, filepath.Join(dir, "svc.db"))
	var status string
	db.QueryRow(`SELECT status FROM runs WHERE workflow_id = 'slow'`).Scan(&status)
	if status != "cancelled" {
		t.Errorf("recorded status = %q; want cancelled", status)
	}
}

// TestCredentialsAtRest: the database holds no plaintext secret, and with
// credentials stored a restart without the key refuses to start.
func TestCredentialsAtRest(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"SVC_TOKEN=" + testToken}
	p := start(t, env, "--data-dir", dir)
	c := p.client(t, testToken)
	const plain = "plaintext-credential-VALUE-7f3a9c"
	if err := c.SaveCredential(t.Context(), client.CredentialRequest{ID: "api", Name: "API", Value: plain}); err != nil {
		t.Fatal(err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), plain) {
			t.Errorf("%s holds the credential in plaintext", filepath.Base(f))
		}
	}
	key := filepath.Join(dir, "credential.key")
	if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v; want mode 0600", st, err)
	}

	// The same key: the credential is still readable.
	p = start(t, env, "--data-dir", dir)
	if cs, err := p.client(t, testToken).ListCredentials(t.Context()); err != nil || len(cs) != 1 {
		t.Fatalf("credentials after a restart = %v, %v", cs, err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	<-p.exited

	// No key: refuse to start, and make no new key.
	if err := os.Remove(key); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binary, "api", "--port", "0", "--data-dir", dir)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "credential key") {
		t.Errorf("start without the key: %v\n%s", err, out)
	}
	if _, err := os.Stat(key); err == nil {
		t.Error("a new key was made although credentials exist")
	}
}

func TestTokensCommand(t *testing.T) {
	t.Parallel()
	p := start(t, []string{"SVC_TOKEN=" + testToken}, "--data-dir", t.TempDir())
	run := func(args ...string) (string, error) {
		cmd := exec.Command(binary, append([]string{"tokens"}, args...)...)
		cmd.Env = append(os.Environ(), "SVC_TOKEN=", "SVC_SERVER="+p.url)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			return stdout.String() + stderr.String(), err
		}
		return stdout.String(), nil
	}
	out, err := run("create", "--label", "ci bot", "--scopes", "read", "--expires-in", "3600", "--workflow-ids", "w1,w2", "--token", testToken)
	if err != nil {
		t.Fatalf("tokens create: %v\n%s", err, out)
	}
	secret := strings.TrimSpace(out)
	c := p.client(t, secret)
	if _, _, err := c.GetWorkflow(t.Context(), "w3"); client.StatusOf(err) != 403 {
		t.Errorf("the new token outside its grants: %v; want a 403", err)
	}
	out, err = run("list", "--token", testToken)
	if err != nil || !strings.Contains(out, "ci bot") || !strings.Contains(out, "w1,w2") {
		t.Fatalf("tokens list: %v\n%s", err, out)
	}
	var id string
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "ci bot") {
			id = strings.Fields(line)[0]
		}
	}
	if out, err := run("revoke", id, "--token", testToken); err != nil {
		t.Fatalf("tokens revoke: %v\n%s", err, out)
	}
	if _, err := c.ListWorkflows(t.Context(), 1, 0); client.StatusOf(err) != 401 {
		t.Errorf("revoked token: %v; want a 401", err)
	}
	if out, err := run("create", "--scopes", "read", "--token", testToken); err == nil || !strings.Contains(out, "label") {
		t.Errorf("create without a label: %v\n%s", err, out)
	}
	if out, err := run("list"); err == nil || !strings.Contains(out, "--token") {
		t.Errorf("list without a token: %v\n%s", err, out)
	}
}
