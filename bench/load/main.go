// Command load measures the REST server under load over real loopback HTTP
// and compares it, in the same run, with a bare net/http JSON echo server:
//
//   - echo: 50 clients POST a small JSON body to a handler that decodes and
//     re-encodes it;
//   - run: 50 clients run a three-node workflow (manual_trigger,
//     set_variable, output) synchronously, each result stored in the run
//     history (SQLite, group commit);
//   - list: GET /api/workflows with limit 100 at random offsets out of
//     10,000 stored workflows.
//
// Usage: go run ./bench/load [-d 5s] [-c 50]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/svcrun/svc/bench/internal/loadgen"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/httpapi"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

const token = "load-token-0123456789abcdefghijklmnopqrstuvwxyz"

func main() {
	duration := flag.Duration("d", 5*time.Second, "measuring time per scenario")
	clients := flag.Int("c", 50, "concurrent clients")
	flag.DurationVar(&linger, "linger", 0, "the store's group-commit linger (0: its default)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the run scenarios to this file")
	flag.Parse()
	profilePath = *profile
	if err := run(*duration, *clients); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(d time.Duration, clients int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "svc-load")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := sqlite.Open(ctx, filepath.Join(dir, sqlite.FileName), sqlite.Options{Linger: linger})
	if err != nil {
		return err
	}
	defer st.Close()
	if _, err := st.TokenInsert(ctx, &store.Token{ID: "load", Label: "load", Scopes: []string{"admin"},
		SecretHash: httpapi.HashToken(token), CreatedAt: time.Now()}); err != nil {
		return err
	}
	api := httpapi.New(httpapi.Options{Store: st, Engine: engine.New(engine.Options{Registry: node.Default(), Variables: st}),
		MaxConcurrentRuns: 64,
		// All clients share 127.0.0.1: a limit no client reaches keeps the
		// limiter's cost in the figures without refusing the load.
		RateLimit: 1 << 30})
	svcURL, stopSvc, err := loadgen.Serve(api.Handler())
	if err != nil {
		return err
	}
	defer stopSvc()
	echoURL, stopEcho, err := loadgen.Serve(http.HandlerFunc(loadgen.Echo))
	if err != nil {
		return err
	}
	defer stopEcho()

	hc := loadgen.Client(clients)
	body := []byte(`{"initial_variables":{"n":20}}`)
	for i := range clients {
		if err := post(hc, svcURL+"/api/workflows", mustJSON(map[string]string{"workflow_json": workflow(fmt.Sprintf("w%d", i))}), nil); err != nil {
			return err
		}
	}
	if err := post(hc, svcURL+"/api/workflows", mustJSON(map[string]string{"workflow_json": workflow("shared")}), nil); err != nil {
		return err
	}

	fmt.Printf("clients %d, %s per scenario in rounds of 1 s (the scenarios take turns, so that\n", clients, d)
	fmt.Printf("the machine's drift touches them alike), GOMAXPROCS %d\n\n", runtime.GOMAXPROCS(0))
	scenarios := []struct {
		name   string
		target func(int) (string, []byte)
	}{
		{"echo (bare net/http JSON)", func(int) (string, []byte) { return echoURL + "/echo", body }},
		{"run, one workflow per client", func(c int) (string, []byte) { return fmt.Sprintf("%s/api/workflows/w%d/run", svcURL, c), body }},
		{"run, one workflow for all clients", func(int) (string, []byte) { return svcURL + "/api/workflows/shared/run", body }},
	}
	results := make([]loadgen.Result, len(scenarios))
	call := func(target func(int) (string, []byte)) func(int) error {
		return func(c int) error {
			url, body := target(c)
			return post(hc, url, body, nil)
		}
	}
	for _, sc := range scenarios { // warm up connections and caches
		loadgen.Load(clients, 300*time.Millisecond, call(sc.target))
	}
	stopProfile, err := loadgen.StartProfile(profilePath)
	if err != nil {
		return err
	}
	for round := time.Duration(0); round < d; round += time.Second {
		for i, sc := range scenarios {
			results[i].Add(loadgen.Load(clients, time.Second, call(sc.target)))
		}
	}
	stopProfile()
	fmt.Println("| scenario | requests/s | p50 | p99 | vs echo | CPU cores busy |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, sc := range scenarios {
		fmt.Println(results[i].Row(sc.name, results[0].RPS()))
	}
	if errs := results[1].Errors + results[2].Errors; errs > 0 {
		fmt.Printf("\nerrors: %d (last: %v)\n", errs, results[2].LastErr)
	}

	// Listing: a page of 100 out of 10,000.
	for i := range 10_000 {
		w := &store.Workflow{ID: fmt.Sprintf("list-%05d", i), Name: "listed", Tags: []string{"x"}, Doc: []byte(workflow("x"))}
		if _, err := st.WorkflowPut(ctx, w, nil); err != nil {
			return err
		}
	}
	var lat []time.Duration
	for range 500 {
		url := fmt.Sprintf("%s/api/workflows?limit=100&offset=%d", svcURL, rand.IntN(10_000))
		start := time.Now()
		if err := get(hc, url); err != nil {
			return err
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	fmt.Printf("\nlist a page of 100 of %d workflows: median %s, p99 %s (500 requests, one client)\n",
		10_000+clients+1, loadgen.Round(lat[len(lat)/2]), loadgen.Round(lat[len(lat)*99/100]))
	return nil
}

func workflow(id string) string {
	return fmt.Sprintf(`{"id":%q,"name":"Load","nodes":[
	 {"id":"t","node_type_id":"manual_trigger","config":{"mock_payload":{"greeting":"hello"}}},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"x","value":"{{ $input.greeting }} {{ $vars.n * 2 }}"}},
	 {"id":"o","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"t","to":"s"},{"id":"e2","from":"s","to":"o"}]}`, id)
}

var auth = http.Header{"Authorization": {"Bearer " + token}}

func post(hc *http.Client, url string, body []byte, out any) error {
	return loadgen.Post(hc, url, body, auth, out)
}

func get(hc *http.Client, url string) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header = auth.Clone()
	return loadgen.Do(hc, req, nil)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

var (
	profilePath string
	linger      time.Duration
)
