package database

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"
)

// RebindingWarning is printed by the server at start-up when the Database
// node is enabled: what the address check of allow_local does and does not
// cover.
const RebindingWarning = "database node: with allow_local off, loopback, private, link-local, " +
	"carrier-grade NAT and other non-public addresses are refused before connecting and again on " +
	"the address each connection is actually made to, so DNS rebinding cannot reach them; the check " +
	"cannot recognise a public address that only this server can reach (a firewall allow-list, a " +
	"site-specific NAT64 prefix, a metadata service on a public address), so keep such services " +
	"authenticated or behind an egress firewall"

// connectTimeout bounds making a connection (spec/nodes.md rule 4: a
// connection taking over 10 seconds counts as one that cannot be made).
const connectTimeout = 10 * time.Second

// blockedPrefixes are the ranges refused besides those netip classifies
// (loopback, private, link-local, multicast, unspecified).
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network"; 0.0.0.0 reaches the local host
	netip.MustParsePrefix("100.64.0.0/10"),  // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("fec0::/10"),      // deprecated site-local
	netip.MustParsePrefix("100::/64"),       // discard-only
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2001::/32"),      // Teredo: the IPv4 inside is obfuscated, so refuse the range
}

var (
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96") // IPv4-translated (RFC 2765)
)

// embeddedV4 returns the IPv4 address carried inside an IPv6 form that
// reaches it: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
// IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
// (2002::/16).
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	if ip.Is4In6() {
		return ip.Unmap(), true
	}
	b := ip.As16()
	switch {
	case [12]byte(b[:12]) == [12]byte{} && !ip.IsUnspecified() && !ip.IsLoopback():
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case nat64.Contains(ip), translated.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case b[0] == 0x20 && b[1] == 0x02:
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// blockedReason says why ip may not be dialed with allow_local off, or ""
// when it may.
func blockedReason(ip netip.Addr) string {
	ip = ip.WithZone("")
	if v4, ok := embeddedV4(ip); ok {
		if r := blockedReason(v4); r != "" {
			return r + " (inside an IPv6 address)"
		}
		return ""
	}
	switch {
	case !ip.IsValid():
		return "not a valid address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return "a reserved or non-public address"
		}
	}
	return ""
}

// addrError is a refused destination. It travels through the drivers'
// error wrapping from the dialer to the node's error mapping.
type addrError struct {
	host   string // as written, or the address dialed
	reason string
}

func (e *addrError) Error() string {
	return fmt.Sprintf("%s is %s; set allow_local to connect to local or private addresses", e.host, e.reason)
}

// guard checks destinations for one connection attempt.
type guard struct {
	allowLocal bool
}

// checkIP refuses an address with allow_local off.
func (g guard) checkIP(host string, ip netip.Addr) error {
	if g.allowLocal {
		return nil
	}
	if r := blockedReason(ip); r != "" {
		if host == "" || host == ip.String() {
			host = ip.String()
		} else {
			host = fmt.Sprintf("%s (%s)", host, ip)
		}
		return &addrError{host: host, reason: r}
	}
	return nil
}

// checkHost resolves a host name (or reads an address) and refuses it when
// any of its addresses is refused. A name that does not resolve is left to
// the dial, which fails as a connection that cannot be made.
func (g guard) checkHost(ctx context.Context, host string) error {
	if g.allowLocal {
		return nil
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.checkIP("", ip)
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") || strings.HasSuffix(strings.ToLower(strings.TrimSuffix(host, ".")), ".localhost") {
		return &addrError{host: host, reason: "the local host"}
	}
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if err := g.checkIP(host, ip); err != nil {
			return err
		}
	}
	return nil
}

// checkUnix refuses a Unix socket with allow_local off.
func (g guard) checkUnix(path string) error {
	if g.allowLocal {
		return nil
	}
	return &addrError{host: "Unix socket " + path, reason: "a local socket"}
}

// dialer returns a dialer that checks the address each connection is
// actually made to, after name resolution: the second half of the check,
// which DNS rebinding between checkHost and the dial cannot get past.
func (g guard) dialer() *net.Dialer {
	return &net.Dialer{
		Timeout:   connectTimeout,
		KeepAlive: 30 * time.Second,
		Control: func(network, address string, _ syscall.RawConn) error {
			if g.allowLocal {
				return nil
			}
			if strings.HasPrefix(network, "unix") {
				return g.checkUnix(address)
			}
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return &addrError{host: address, reason: "not an address the check can read"}
			}
			return g.checkIP("", ap.Addr())
		},
	}
}

// dial is a DialContext with the guard.
func (g guard) dial(ctx context.Context, network, address string) (net.Conn, error) {
	return g.dialer().DialContext(ctx, network, address)
}

// asAddrError finds a refused destination in an error chain.
func asAddrError(err error) (*addrError, bool) {
	var ae *addrError
	ok := errors.As(err, &ae)
	return ae, ok
}
