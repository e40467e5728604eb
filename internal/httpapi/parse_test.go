package httpapi

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		remote  string
		xff     []string
		trusted int
		want    string
	}{
		{"192.0.2.1:5000", nil, 0, "192.0.2.1"},
		{"192.0.2.1:5000", []string{"198.51.100.7"}, 0, "192.0.2.1"},
		{"192.0.2.1:5000", []string{"198.51.100.7"}, 1, "198.51.100.7"},
		{"192.0.2.1:5000", []string{"203.0.113.1, 198.51.100.7"}, 2, "203.0.113.1"},
		{"192.0.2.1:5000", []string{"203.0.113.1", "198.51.100.7"}, 2, "203.0.113.1"}, // across header lines
		{"192.0.2.1:5000", []string{"203.0.113.1, 198.51.100.7"}, 5, "203.0.113.1"},   // fewer hops: leftmost
		{"192.0.2.1:5000", []string{"garbage"}, 1, "192.0.2.1"},
		{"192.0.2.1:5000", []string{" , "}, 1, "192.0.2.1"},
		{"192.0.2.1:5000", []string{"[2001:db8::1]:443"}, 1, "2001:db8::1"},
		{"192.0.2.1:5000", []string{"198.51.100.7:8080"}, 1, "198.51.100.7"},
		{"[::ffff:192.0.2.9]:80", nil, 0, "192.0.2.9"},
		{"[fe80::1%eth0]:80", nil, 0, "fe80::1"},
	} {
		if got := clientAddr(tc.remote, tc.xff, tc.trusted); got.String() != tc.want {
			t.Errorf("clientAddr(%q, %q, %d) = %v; want %s", tc.remote, tc.xff, tc.trusted, got, tc.want)
		}
	}
}

func FuzzClientAddr(f *testing.F) {
	f.Add("192.0.2.1:5000", "203.0.113.1, 198.51.100.7", 1)
	f.Add("[::1]:80", "[2001:db8::1]:443,::ffff:1.2.3.4", 2)
	f.Add("x", ",,,", 3)
	f.Fuzz(func(t *testing.T, remote, xff string, trusted int) {
		a := clientAddr(remote, []string{xff}, trusted)
		peer := parseAddr(remote)
		if trusted <= 0 && a != peer {
			t.Fatalf("untrusted: %v; want the peer %v", a, peer)
		}
		if a.IsValid() && (a.Is4In6() || a.Zone() != "") {
			t.Fatalf("%v is not unmapped and zone-free", a)
		}
		if a == peer {
			return
		}
		// An address not the peer's comes from one of the header's entries.
		for e := range strings.SplitSeq(xff, ",") {
			if parseAddr(strings.TrimSpace(e)) == a {
				return
			}
		}
		t.Fatalf("%v is neither the peer nor an entry of %q", a, xff)
	})
}

func TestBearer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		h, want string
		ok      bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"  Bearer   abc  ", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic abc", "", false},
		{"Bearer a b", "", false},
		{"Bearerabc", "", false},
	} {
		got, ok := bearer(tc.h)
		if got != tc.want || ok != tc.ok {
			t.Errorf("bearer(%q) = %q, %v; want %q, %v", tc.h, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzBearer(f *testing.F) {
	f.Add("Bearer abc")
	f.Add("bearer \t x")
	f.Add("Basic Zm9v")
	f.Fuzz(func(t *testing.T, h string) {
		tok, ok := bearer(h)
		if !ok {
			if tok != "" {
				t.Fatalf("bearer(%q) refused but returned %q", h, tok)
			}
			return
		}
		if tok == "" || strings.ContainsAny(tok, " \t") || !strings.Contains(h, tok) {
			t.Fatalf("bearer(%q) = %q", h, tok)
		}
		if again, ok := bearer("Bearer " + tok); !ok || again != tok {
			t.Fatalf("bearer does not round-trip %q", tok)
		}
	})
}

func FuzzIfMatch(f *testing.F) {
	f.Add(`"7"`)
	f.Add("7")
	f.Add(`W/"7"`)
	f.Add(`"`)
	f.Add("-1")
	f.Fuzz(func(t *testing.T, h string) {
		v, sent, err := parseIfMatch(h)
		if strings.TrimSpace(h) == "" {
			if sent || err != nil {
				t.Fatalf("empty If-Match %q: sent %v, err %v", h, sent, err)
			}
			return
		}
		if !sent {
			t.Fatalf("If-Match %q not seen", h)
		}
		if err != nil {
			if e, ok := err.(*Error); !ok || e.Status != 400 {
				t.Fatalf("If-Match %q: error %v; want a 400", h, err)
			}
			return
		}
		if v < 1 {
			t.Fatalf("If-Match %q gave row version %d", h, v)
		}
		if got, _, err := parseIfMatch(etag(v)); err != nil || got != v {
			t.Fatalf("ETag %s does not parse back: %d, %v", etag(v), got, err)
		}
		if trimmed := strings.Trim(strings.TrimSpace(h), `"`); trimmed != strconv.FormatInt(v, 10) {
			if _, err := strconv.ParseInt(trimmed, 10, 64); err != nil {
				t.Fatalf("If-Match %q accepted as %d", h, v)
			}
		}
	})
}

func TestRateLimiterCap(t *testing.T) {
	t.Parallel()
	l := newRateLimiter(2, time.Minute, 3)
	now := time.Unix(1000, 0)
	for _, k := range []string{"a", "b", "c"} {
		l.allow(k, now)
		l.allow(k, now)
	}
	if l.allow("a", now) {
		t.Error("a tracked client over its limit was let through")
	}
	// The table is full and nothing is stale: an unseen client is not
	// limited, and not tracked.
	for i := range 5 {
		if !l.allow("d", now.Add(time.Duration(i)*time.Millisecond)) {
			t.Fatal("an untracked client was limited while the table is full")
		}
	}
	if l.allow("b", now.Add(time.Second)) {
		t.Error("tracked clients must stay limited while the table is full")
	}
	// Once the windows are over, stale entries make room.
	later := now.Add(2 * time.Minute)
	l.allow("d", later)
	l.allow("d", later)
	if l.allow("d", later) {
		t.Error("a client tracked after the sweep is not limited")
	}
	if !l.allow("a", later) {
		t.Error("a new window did not reset the count")
	}
}

func TestStreamSlots(t *testing.T) {
	t.Parallel()
	s := New(Options{})
	var release []func()
	for range MaxStreams {
		r, err := s.acquireStream()
		if err != nil {
			t.Fatal(err)
		}
		release = append(release, r)
	}
	if _, err := s.acquireStream(); err == nil || err.(*Error).Status != 429 || err.(*Error).Message != msgTooManyStreams {
		t.Fatalf("stream %d: %v; want 429 %q", MaxStreams+1, err, msgTooManyStreams)
	}
	release[0]()
	if _, err := s.acquireStream(); err != nil {
		t.Fatalf("after a release: %v", err)
	}
}
