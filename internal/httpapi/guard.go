package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits of spec/server.md section 8.
const (
	DefaultRateLimit  = 300
	RateWindow        = 60 * time.Second
	MaxTrackedClients = 50_000
	MaxStreams        = 64
	preflightMaxAge   = "3600"
)

// guard is the outermost handler: security headers on every response,
// CORS (a preflight is answered here, before the limiter), then the
// per-IP rate limit, then the routes.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "strict-origin-when-cross-origin")
		h.Set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
		h.Set("Strict-Transport-Security", "max-age=31536000")

		origin := r.Header.Get("Origin")
		if origin != "" {
			h.Add("Vary", "Origin")
			if s.corsAllowed(origin, r.URL.Path) {
				h.Set("Access-Control-Allow-Origin", origin)
				h.Set("Access-Control-Expose-Headers", "ETag, Retry-After")
			}
		}
		if r.Method == http.MethodOptions {
			if h.Get("Access-Control-Allow-Origin") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, If-Match")
				h.Set("Access-Control-Max-Age", preflightMaxAge)
			}
			h.Set("Allow", "GET, POST, DELETE, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if s.limiter != nil && !s.limiter.allow(s.clientKey(r), time.Now()) {
			s.serveError(w, r, &Error{Status: http.StatusTooManyRequests, Message: msgRateLimited,
				Header: http.Header{"Retry-After": {strconv.Itoa(int(RateWindow / time.Second))}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// corsAllowed reports whether origin may read responses of path: the
// loopback hosts on any port and scheme, and each --allow-origin; never on
// mint-token, which is for server-side callers.
func (s *Server) corsAllowed(origin, path string) bool {
	if strings.HasPrefix(path, "/api/widget/") && strings.HasSuffix(path, "/mint-token") {
		return false
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil {
		return false
	}
	switch u.Hostname() {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	return slices.Contains(s.opts.AllowOrigins, u.Scheme+"://"+strings.ToLower(u.Host))
}

// clientKey is the rate-limit key of a request: its client address (see
// clientAddr), an IPv6 address cut to its /64.
func (s *Server) clientKey(r *http.Request) string {
	a := clientAddr(r.RemoteAddr, r.Header.Values("X-Forwarded-For"), s.opts.TrustedProxyCount)
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}

// clientAddr is the client's address: the socket peer, or with trusted > 0
// the entry that many hops from the right of every X-Forwarded-For line
// taken together (the leftmost when there are fewer). An entry that is not
// an address gives the socket peer. IPv4-mapped IPv6 is unmapped.
func clientAddr(remote string, xff []string, trusted int) netip.Addr {
	peer := parseAddr(remote)
	if trusted <= 0 || len(xff) == 0 {
		return peer
	}
	var hops []string
	for _, line := range xff {
		for e := range strings.SplitSeq(line, ",") {
			if e = strings.TrimSpace(e); e != "" {
				hops = append(hops, e)
			}
		}
	}
	if len(hops) == 0 {
		return peer
	}
	a := parseAddr(hops[max(0, len(hops)-trusted)])
	if !a.IsValid() {
		return peer
	}
	return a
}

// parseAddr reads "ip", "ip:port" or "[ip]:port".
func parseAddr(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone("")
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// rateLimiter counts requests per key in fixed windows. It tracks at most
// max keys: when full, stale keys (window over) are dropped, and an unseen
// key that still finds no room is let through untracked; tracked keys stay
// limited.
type rateLimiter struct {
	limit  int
	window time.Duration
	max    int

	mu        sync.Mutex
	m         map[string]*rateWindow
	lastSweep time.Time
}

type rateWindow struct {
	start time.Time
	n     int
}

func newRateLimiter(limit int, window time.Duration, maxKeys int) *rateLimiter {
	return &rateLimiter{limit: limit, window: window, max: maxKeys, m: map[string]*rateWindow{}}
}

func (l *rateLimiter) allow(key string, now time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.m[key]
	if e == nil {
		if len(l.m) >= l.max {
			l.sweep(now)
			if len(l.m) >= l.max {
				return true
			}
		}
		l.m[key] = &rateWindow{start: now, n: 1}
		return true
	}
	if now.Sub(e.start) >= l.window {
		e.start, e.n = now, 1
		return true
	}
	e.n++
	return e.n <= l.limit
}

// sweep drops the keys whose window is over, at most once a second.
func (l *rateLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Second {
		return
	}
	l.lastSweep = now
	for k, e := range l.m {
		if now.Sub(e.start) >= l.window {
			delete(l.m, k)
		}
	}
}

// acquireStream takes one of the MaxStreams event-stream slots, or fails
// with 429.
func (s *Server) acquireStream() (release func(), err error) {
	select {
	case s.streams <- struct{}{}:
		return func() { <-s.streams }, nil
	default:
		return nil, errorf(http.StatusTooManyRequests, msgTooManyStreams)
	}
}
