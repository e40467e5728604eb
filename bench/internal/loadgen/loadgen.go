// Package loadgen is the load generator the benchmark programs share: it
// runs clients that call as fast as they can for a while, and reports
// requests per second, latency percentiles and the process's CPU time.
package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Result gathers the latencies and time of one scenario's rounds.
type Result struct {
	Lat     []time.Duration
	Elapsed time.Duration
	CPU     time.Duration // process CPU time spent, servers and clients
	Errors  int64
	// LastErr is the last error a call returned.
	LastErr error
}

// Add appends another round.
func (r *Result) Add(o Result) {
	r.Lat = append(r.Lat, o.Lat...)
	r.Elapsed += o.Elapsed
	r.CPU += o.CPU
	r.Errors += o.Errors
	if o.LastErr != nil {
		r.LastErr = o.LastErr
	}
}

// RPS is the successful calls per second.
func (r *Result) RPS() float64 { return float64(len(r.Lat)) / r.Elapsed.Seconds() }

// Percentile returns the p-th percentile latency (0 < p < 100).
func (r *Result) Percentile(p int) time.Duration {
	slices.Sort(r.Lat)
	if len(r.Lat) == 0 {
		return 0
	}
	return r.Lat[len(r.Lat)*p/100]
}

// Row prints the scenario as a Markdown table row: requests/s, p50, p99,
// the ratio to base requests/s, and CPU cores busy.
func (r *Result) Row(name string, base float64) string {
	return fmt.Sprintf("| %s | %.0f | %s | %s | %.2f | %.2f |", name, r.RPS(), Round(r.Percentile(50)), Round(r.Percentile(99)),
		r.RPS()/base, r.CPU.Seconds()/r.Elapsed.Seconds())
}

// Load runs clients goroutines for d, each calling call(client) as fast as
// it can; an error counts and is not timed.
func Load(clients int, d time.Duration, call func(client int) error) Result {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		res     Result
		errs    atomic.Int64
		lastErr atomic.Value
	)
	begin, cpu0 := time.Now(), CPUTime()
	end := begin.Add(d)
	for c := range clients {
		wg.Go(func() {
			var lat []time.Duration
			for {
				start := time.Now()
				if !start.Before(end) {
					break
				}
				if err := call(c); err != nil {
					errs.Add(1)
					lastErr.Store(err)
					continue
				}
				lat = append(lat, time.Since(start))
			}
			mu.Lock()
			res.Lat = append(res.Lat, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	res.Elapsed = time.Since(begin)
	res.CPU = CPUTime() - cpu0
	res.Errors = errs.Load()
	if e, ok := lastErr.Load().(error); ok {
		res.LastErr = e
	}
	return res
}

// Client returns an HTTP client that keeps conns connections alive per
// host.
func Client(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2}}
}

// Post sends body as JSON with the headers, and decodes a 200 response
// into out when out is not nil; any other status is an error.
func Post(hc *http.Client, url string, body []byte, header http.Header, out any) error {
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	return Do(hc, req, out)
}

// Do sends req; see Post.
func Do(hc *http.Client, req *http.Request, out any) error {
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s %s: %d %s", req.Method, req.URL.Path, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// Echo is the bare net/http baseline: it decodes a JSON object and
// encodes it back.
func Echo(w http.ResponseWriter, r *http.Request) {
	var v map[string]any
	if err := json.NewDecoder(r.Body).Decode(&v); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// Serve serves h on a loopback port; it returns the base URL and a stop
// function.
func Serve(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

// Round rounds a latency for printing.
func Round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

// CPUTime is the process's user and system CPU time.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// StartProfile writes a CPU profile to path until the returned function is
// called; an empty path profiles nothing.
func StartProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
