// Command scheduler measures the background side of svc-server:
//
//   - webhook: 50 clients POST to a Webhook trigger's listener; each
//     request runs a three-node workflow (webhook, set_variable, output),
//     stores the run, and answers with the Output's value. Compared, in the
//     same run and in alternating one-second rounds, with a bare net/http
//     JSON echo.
//   - idle: 10,000 active interval jobs that are not due (interval one
//     hour): the process's CPU time over a quiet stretch.
//   - jitter: 10,000 active interval jobs every 10 seconds, started one
//     after another so their firings spread over the interval: how late
//     each firing is (fired_at minus scheduled_at, from the trigger's own
//     output), while the process runs 1,000 workflows a second.
//
// Usage: go run ./bench/scheduler [-d 10s] [-c 50] [-jobs 10000] [-jitter 30s]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"time"

	"github.com/svcrun/svc/bench/internal/loadgen"
	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/events"
	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin"
	"github.com/svcrun/svc/internal/scheduler"
	"github.com/svcrun/svc/internal/store"
	"github.com/svcrun/svc/internal/store/sqlite"
)

func main() {
	d := flag.Duration("d", 10*time.Second, "measuring time of the webhook scenarios")
	clients := flag.Int("c", 50, "concurrent webhook clients")
	jobs := flag.Int("jobs", 10_000, "interval jobs")
	jitter := flag.Duration("jitter", 30*time.Second, "how long to record firings after every job started")
	idle := flag.Duration("idle", 10*time.Second, "how long to measure idle CPU")
	flag.StringVar(&profilePath, "cpuprofile", "", "write a CPU profile of the webhook rounds to this file")
	flag.StringVar(&memProfilePath, "memprofile", "", "write an allocation profile after the webhook rounds to this file")
	skipIntervals := flag.Bool("webhook-only", false, "measure the webhook round trips only")
	flag.Parse()
	fmt.Printf("GOMAXPROCS %d\n\n", runtime.GOMAXPROCS(0))
	if err := webhook(*d, *clients); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler bench:", err)
		os.Exit(1)
	}
	if *skipIntervals {
		return
	}
	if err := intervals(*jobs, *idle, *jitter); err != nil {
		fmt.Fprintln(os.Stderr, "scheduler bench:", err)
		os.Exit(1)
	}
}

// env is a store, an engine and a scheduler in a temporary directory.
type env struct {
	dir   string
	st    *sqlite.Store
	sched *scheduler.Scheduler
}

func newEnv(pub scheduler.Publisher) (*env, error) {
	dir, err := os.MkdirTemp("", "svc-sched-bench")
	if err != nil {
		return nil, err
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, sqlite.FileName), sqlite.Options{})
	if err != nil {
		return nil, err
	}
	eng := engine.New(engine.Options{Registry: node.Default(), Variables: st})
	return &env{dir: dir, st: st, sched: scheduler.New(scheduler.Options{Store: st, Engine: eng, Events: pub})}, nil
}

func (e *env) close() {
	e.sched.Close(context.Background())
	e.st.Close()
	os.RemoveAll(e.dir)
}

func (e *env) save(id, doc string) error {
	_, err := e.st.WorkflowPut(context.Background(), &store.Workflow{ID: id, Name: id, Doc: []byte(doc)}, nil)
	return err
}

func webhook(d time.Duration, clients int) error {
	e, err := newEnv(events.New(events.Options{}))
	if err != nil {
		return err
	}
	defer e.close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if err := e.save("hook", fmt.Sprintf(`{"id":"hook","name":"Hook","nodes":[
	 {"id":"h","node_type_id":"webhook","config":{"port":%d,"path":"/in","method":"POST"}},
	 {"id":"s","node_type_id":"set_variable","config":{"key":"x","value":"{{ $input.body.greeting }} {{ $input.body.n * 2 }}"}},
	 {"id":"o","node_type_id":"output","config":{"field":"value"}}],
	 "edges":[{"id":"e1","from":"h","to":"s"},{"id":"e2","from":"s","to":"o"}]}`, port)); err != nil {
		return err
	}
	if err := e.sched.Start(context.Background(), "hook", nil, nil); err != nil {
		return err
	}
	echoURL, stopEcho, err := loadgen.Serve(http.HandlerFunc(loadgen.Echo))
	if err != nil {
		return err
	}
	defer stopEcho()
	hc := loadgen.Client(clients)
	body := []byte(`{"greeting":"hello","n":20}`)
	hookURL := fmt.Sprintf("http://127.0.0.1:%d/in", port)
	scenarios := []struct {
		name string
		call func(int) error
	}{
		{"echo (bare net/http JSON)", func(int) error { return loadgen.Post(hc, echoURL, body, nil, nil) }},
		{"webhook, 3-node workflow", func(int) error {
			var out string
			if err := loadgen.Post(hc, hookURL, body, nil, &out); err != nil {
				return err
			}
			if out != "hello 40" {
				return fmt.Errorf("webhook answered %q", out)
			}
			return nil
		}},
	}
	results := make([]loadgen.Result, len(scenarios))
	for _, sc := range scenarios {
		loadgen.Load(clients, 300*time.Millisecond, sc.call)
	}
	stop, err := loadgen.StartProfile(profilePath)
	if err != nil {
		return err
	}
	for round := time.Duration(0); round < d; round += time.Second {
		for i, sc := range scenarios {
			results[i].Add(loadgen.Load(clients, time.Second, sc.call))
		}
	}
	stop()
	if memProfilePath != "" {
		f, err := os.Create(memProfilePath)
		if err != nil {
			return err
		}
		pprof.Lookup("allocs").WriteTo(f, 0)
		f.Close()
	}
	fmt.Printf("Webhook round trips: %d clients, %s in rounds of 1 s\n\n", clients, d)
	fmt.Println("| scenario | requests/s | p50 | p99 | vs echo | CPU cores busy |")
	fmt.Println("|---|---|---|---|---|---|")
	for i, sc := range scenarios {
		fmt.Println(results[i].Row(sc.name, results[0].RPS()))
	}
	if r := results[1]; r.Errors > 0 {
		fmt.Printf("\nwebhook errors: %d (last: %v)\n", r.Errors, r.LastErr)
	}
	fmt.Println()
	return nil
}

// lateness records how late each firing is, from the scheduler-status
// events of finished runs.
type lateness struct {
	mu   sync.Mutex
	on   bool
	late []time.Duration
}

func (l *lateness) Publish(e events.Event) {
	if e.Type != events.TypeSchedulerStatus {
		return
	}
	p, _ := e.Payload.(map[string]any)
	res, _ := p["last_result"].(map[string]any)
	v, _ := res["value"].(map[string]any)
	fired, err1 := time.Parse(time.RFC3339Nano, fmt.Sprint(v["fired_at"]))
	sched, err2 := time.Parse(time.RFC3339Nano, fmt.Sprint(v["scheduled_at"]))
	if err1 != nil || err2 != nil {
		return
	}
	l.mu.Lock()
	if l.on {
		l.late = append(l.late, fired.Sub(sched))
	}
	l.mu.Unlock()
}

func intervals(n int, idle, jitter time.Duration) error {
	lat := &lateness{}
	e, err := newEnv(lat)
	if err != nil {
		return err
	}
	defer e.close()
	doc := func(id string, secs int) string {
		return fmt.Sprintf(`{"id":%q,"name":%q,"nodes":[
		 {"id":"t","node_type_id":"schedule","config":{"mode":"interval","interval_secs":%d}},
		 {"id":"o","node_type_id":"output","config":{}}],
		 "edges":[{"id":"e","from":"t","to":"o"}]}`, id, id, secs)
	}
	ctx := context.Background()

	// Idle: n jobs due in an hour.
	begin := time.Now()
	for i := range n {
		id := fmt.Sprintf("idle-%05d", i)
		if err := e.save(id, doc(id, 3600)); err != nil {
			return err
		}
		if err := e.sched.Start(ctx, id, nil, nil); err != nil {
			return err
		}
	}
	fmt.Printf("Interval jobs: %d started in %s\n\n", n, time.Since(begin).Round(time.Millisecond))
	runtime.GC()
	time.Sleep(time.Second)
	cpu0, t0 := loadgen.CPUTime(), time.Now()
	time.Sleep(idle)
	idleCPU := (loadgen.CPUTime() - cpu0).Seconds() / time.Since(t0).Seconds()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for i := range n {
		if err := e.sched.Stop(ctx, fmt.Sprintf("idle-%05d", i)); err != nil {
			return err
		}
	}

	// Jitter: n jobs every 10 s, spread over the interval.
	spread := 10 * time.Second / time.Duration(n)
	begin = time.Now()
	for i := range n {
		id := fmt.Sprintf("tick-%05d", i)
		if err := e.save(id, doc(id, 10)); err != nil {
			return err
		}
		if err := e.sched.Start(ctx, id, nil, nil); err != nil {
			return err
		}
		if wait := time.Until(begin.Add(time.Duration(i+1) * spread)); wait > 0 {
			time.Sleep(wait)
		}
	}
	lat.mu.Lock()
	lat.on = true
	lat.mu.Unlock()
	cpu0, t0 = loadgen.CPUTime(), time.Now()
	time.Sleep(jitter)
	busyCPU := (loadgen.CPUTime() - cpu0).Seconds() / time.Since(t0).Seconds()
	lat.mu.Lock()
	lat.on = false
	late := slices.Clone(lat.late)
	lat.mu.Unlock()
	slices.Sort(late)
	pct := func(p int) time.Duration {
		if len(late) == 0 {
			return 0
		}
		return late[len(late)*p/100].Round(10 * time.Microsecond)
	}
	fmt.Println("| measure | value |")
	fmt.Println("|---|---|")
	fmt.Printf("| idle CPU, %d jobs not due, over %s | %.2f%% of a core |\n", n, idle, idleCPU*100)
	fmt.Printf("| heap in use with %d jobs | %.1f MiB |\n", n, float64(ms.HeapInuse)/(1<<20))
	fmt.Printf("| firings recorded over %s (%d jobs every 10 s) | %d (%.0f/s) |\n", jitter, n, len(late), float64(len(late))/jitter.Seconds())
	fmt.Printf("| lateness p50 / p99 / max | %s / %s / %s |\n", pct(50), pct(99), late[len(late)-1].Round(10*time.Microsecond))
	fmt.Printf("| CPU while firing | %.2f cores |\n", busyCPU)
	return nil
}

var profilePath, memProfilePath string
