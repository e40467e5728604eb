package database

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// pgAllowedKeys are the connection URL parameters the node accepts. The
// others are refused, chiefly those that make the driver read files on the
// server (passfile, servicefile, sslkey, sslcert, sslrootcert) or change
// the session settings results are decoded under (options, datestyle).
var pgAllowedKeys = []string{
	"host", "hostaddr", "port", "database", "user", "password",
	"sslmode", "sslnegotiation", "sslsni", "connect_timeout", "application_name",
	"target_session_attrs", "search_path", "timezone", "TimeZone",
	"channel_binding", "require_auth", "min_protocol_version", "max_protocol_version",
}

// pgSession are the settings every connection starts with, so that text
// results have one shape to decode.
var pgSession = map[string]string{
	"DateStyle":          "ISO, YMD",
	"IntervalStyle":      "iso_8601",
	"extra_float_digits": "3",
	"bytea_output":       "hex",
}

// parsePostgresURL parses a postgres:// URL with the driver's own parser
// (so the hosts checked are the hosts it dials), applies libpq's hostaddr,
// which the driver does not know, and sets the password: the password
// field, else the URL's, never one from the server's environment or
// password file.
func parsePostgresURL(raw, password string) (*pgconn.Config, error) {
	if !strings.HasPrefix(raw, "postgres://") && !strings.HasPrefix(raw, "postgresql://") {
		return nil, node.ConfigError("connection_url", "must be a postgres:// or postgresql:// URL for sql_pg")
	}
	cfg, err := pgconn.ParseConfigWithOptions(raw, pgconn.ParseConfigOptions{ConnStringAllowedKeys: pgAllowedKeys})
	if err != nil {
		msg := err.Error()
		// The driver quotes the URL (password redacted, best effort); keep
		// only the reason.
		if i := strings.Index(msg, "`: "); i >= 0 {
			msg = msg[i+3:]
		}
		return nil, node.ConfigError("connection_url", "is not a usable PostgreSQL URL: %s", msg)
	}
	if err := applyHostaddr(cfg); err != nil {
		return nil, err
	}
	if password == "" {
		password = urlPassword(raw)
	}
	cfg.Password = password
	for k := range cfg.RuntimeParams {
		for s := range pgSession {
			if strings.EqualFold(k, s) {
				delete(cfg.RuntimeParams, k)
			}
		}
	}
	for k, v := range pgSession {
		cfg.RuntimeParams[k] = v
	}
	return cfg, nil
}

// urlPassword reads the password of a postgres:// URL: in the user info or
// the password parameter.
func urlPassword(raw string) string {
	rest := raw[strings.Index(raw, "://")+3:]
	authority, query := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		authority = rest[:i]
		if j := strings.IndexByte(rest, '?'); j >= 0 {
			query = rest[j+1:]
		}
	}
	if q, err := url.ParseQuery(query); err == nil && q.Has("password") {
		return q.Get("password")
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return ""
	}
	_, pw, ok := strings.Cut(authority[:at], ":")
	if !ok {
		return ""
	}
	if p, err := url.PathUnescape(pw); err == nil {
		return p
	}
	return pw
}

// applyHostaddr moves libpq's hostaddr into the hosts the driver dials, as
// libpq does: the address is dialed, the host name still serves TLS. One
// address applies to every host; a list gives one per host.
func applyHostaddr(cfg *pgconn.Config) error {
	raw, ok := cfg.RuntimeParams["hostaddr"]
	delete(cfg.RuntimeParams, "hostaddr")
	if !ok || raw == "" {
		return nil
	}
	addrs := strings.Split(raw, ",")
	for _, a := range addrs {
		if _, err := netip.ParseAddr(a); a != "" && err != nil {
			return node.ConfigError("connection_url", "hostaddr %q is not an IP address", a)
		}
	}
	fbs := append([]*pgconn.FallbackConfig{{Host: cfg.Host, Port: cfg.Port, TLSConfig: cfg.TLSConfig}}, cfg.Fallbacks...)
	// The driver lists each host once per TLS attempt, in order.
	hostIndex := make([]int, len(fbs))
	n := 0
	for i := range fbs {
		if i > 0 && fbs[i].Host != fbs[i-1].Host {
			n++
		}
		hostIndex[i] = n
	}
	if len(addrs) != 1 && len(addrs) != n+1 {
		return node.ConfigError("connection_url", "hostaddr lists %d addresses for %d hosts", len(addrs), n+1)
	}
	for i, fb := range fbs {
		a := addrs[0]
		if len(addrs) > 1 {
			a = addrs[hostIndex[i]]
		}
		if a != "" {
			fb.Host = a
		}
	}
	cfg.Host = fbs[0].Host
	return nil
}

// pgHosts are the hosts the driver will dial, in order.
func pgHosts(cfg *pgconn.Config) []string {
	hosts := []string{cfg.Host}
	for _, fb := range cfg.Fallbacks {
		hosts = append(hosts, fb.Host)
	}
	return hosts
}

func (d *Database) runPostgres(ctx context.Context, env node.Env, g guard) (map[string]any, error) {
	cfg := d.pg.Copy()
	cfg.DialFunc = g.dial
	cfg.OnNotice = nil
	cfg.OnNotification = nil
	// A cancelled run sends PostgreSQL a cancel request on a second
	// connection; the socket is cut 5 seconds later if the server has not
	// answered.
	cfg.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 5 * time.Second}
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	conn, err := pgconn.ConnectConfig(cctx, cfg)
	cancel()
	if err != nil {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return nil, serverFailure(err)
		}
		return nil, connectFailure("PostgreSQL", err)
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = conn.Close(cctx)
	}()

	query := d.op == "query"
	if query {
		if _, err := conn.Exec(ctx, "BEGIN READ ONLY").ReadAll(); err != nil {
			return nil, d.pgFailure(err)
		}
	}
	// A named statement: the type lookup below uses the unnamed one.
	sd, err := conn.Prepare(ctx, "svc", d.stmt.text, nil)
	if err != nil {
		return nil, d.pgFailure(err)
	}
	types, err := pgColumnTypes(ctx, conn, sd.Fields)
	if err != nil {
		return nil, d.pgFailure(err)
	}
	params := make([][]byte, len(d.args))
	for i, a := range d.args {
		if a != nil {
			params[i] = []byte(value.Text(textArg(a)))
		}
	}
	// Parameters go as text for the server to read in the type it infers;
	// results come back as text (format 0) in the session's ISO styles.
	rr := conn.ExecPrepared(ctx, "svc", params, nil, []int16{0})
	rs := newResultSet(d.opts.Limits, !query, env.Logger())
	fields := rr.FieldDescriptions()
	cols := make([]string, len(fields))
	for i, f := range fields {
		cols[i] = f.Name
	}
	rs.setColumns(cols)
	for rr.NextRow() {
		raw := rr.Values()
		var size int64
		for i, v := range raw {
			size += int64(len(cols[i]) + len(v))
		}
		keep, err := rs.admit(size)
		if err != nil {
			// The deferred Close cuts the connection without reading the
			// rest; the server stops when its next write fails.
			return nil, err
		}
		if !keep {
			continue
		}
		row := make([]any, len(raw))
		for i, v := range raw {
			if v == nil {
				continue
			}
			row[i] = types[i].decode(rs, i, string(v))
		}
		rs.add(row)
	}
	tag, err := rr.Close()
	if err != nil {
		return nil, d.pgFailure(err)
	}
	var affected int64
	if query {
		_, _ = conn.Exec(ctx, "ROLLBACK").ReadAll()
	} else {
		affected = tag.RowsAffected()
		if tag.Select() {
			affected = 0
		}
	}
	return rs.finish(affected, 0), nil
}

// pgFailure maps an error after connecting.
func (d *Database) pgFailure(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code == "25006" && d.op == "query" { // read_only_sql_transaction
			return &node.Error{Code: CodeNotReadOnly, Field: "query", Message: "query: the database refused a write in the read-only transaction: " + pe.Message, Err: err}
		}
		return serverFailure(err)
	}
	// SafeToRetry: the driver sent nothing of the statement.
	return lostFailure("PostgreSQL", err, d.op == "query" || pgconn.SafeToRetry(err))
}

// pgKind is how a PostgreSQL text value is decoded.
type pgKind int

const (
	pgText pgKind = iota
	pgBool
	pgInt
	pgFloat
	pgNumeric
	pgBytea
	pgDateTime // timestamp, timestamptz
	pgTimeTZ
	pgJSON
	pgArray
	pgUnsupported
)

// pgType is a column's decoder.
type pgType struct {
	kind pgKind
	name string
	elem *pgType
}

// pgBuiltin maps the OIDs of built-in types to their decoders. Types not
// here are looked up in pg_type: enums read as their label, domains as
// their base type, arrays element by element, string-category types (such
// as citext) as text; anything else is unsupported.
var pgBuiltin = map[uint32]pgType{
	16: {kind: pgBool, name: "bool"}, 17: {kind: pgBytea, name: "bytea"},
	18: {name: "char"}, 19: {name: "name"}, 25: {name: "text"}, 1042: {name: "bpchar"}, 1043: {name: "varchar"},
	705: {name: "unknown"}, 142: {name: "xml"}, 790: {name: "money"},
	20: {kind: pgInt, name: "int8"}, 21: {kind: pgInt, name: "int2"}, 23: {kind: pgInt, name: "int4"}, 26: {kind: pgInt, name: "oid"},
	28: {name: "xid"}, 24: {name: "regproc"}, 2205: {name: "regclass"}, 2206: {name: "regtype"},
	700: {kind: pgFloat, name: "float4"}, 701: {kind: pgFloat, name: "float8"}, 1700: {kind: pgNumeric, name: "numeric"},
	1082: {name: "date"}, 1083: {name: "time"}, 1266: {kind: pgTimeTZ, name: "timetz"},
	1114: {kind: pgDateTime, name: "timestamp"}, 1184: {kind: pgDateTime, name: "timestamptz"},
	1186: {name: "interval"}, 2950: {name: "uuid"},
	114: {kind: pgJSON, name: "json"}, 3802: {kind: pgJSON, name: "jsonb"},
	869: {name: "inet"}, 650: {name: "cidr"}, 829: {name: "macaddr"}, 774: {name: "macaddr8"},
	1560: {name: "bit"}, 1562: {name: "varbit"},
}

// pgColumnTypes finds each column's decoder, asking the catalog about the
// types that are not built in (with the unnamed statement, so the
// prepared one stays).
func pgColumnTypes(ctx context.Context, conn *pgconn.PgConn, fields []pgconn.FieldDescription) ([]*pgType, error) {
	known := map[uint32]*pgType{}
	for oid, t := range pgBuiltin {
		known[oid] = &t
	}
	type row struct {
		name, typtype, category string
		elem, base              uint32
	}
	catalog := map[uint32]row{}
	want := map[uint32]bool{}
	for _, f := range fields {
		if known[f.DataTypeOID] == nil {
			want[f.DataTypeOID] = true
		}
	}
	// Up to three rounds: a type, its element or base type, and theirs.
	for round := 0; round < 3 && len(want) > 0; round++ {
		ids := make([]string, 0, len(want))
		for oid := range want {
			ids = append(ids, strconv.FormatUint(uint64(oid), 10))
		}
		res := conn.ExecParams(ctx,
			"SELECT oid::int8, typname, typtype, typcategory, typelem::int8, typbasetype::int8 FROM pg_catalog.pg_type WHERE oid = ANY($1::oid[])",
			[][]byte{[]byte("{" + strings.Join(ids, ",") + "}")}, nil, nil, nil).Read()
		if res.Err != nil {
			return nil, res.Err
		}
		want = map[uint32]bool{}
		for _, r := range res.Rows {
			oid, _ := strconv.ParseUint(string(r[0]), 10, 32)
			elem, _ := strconv.ParseUint(string(r[4]), 10, 32)
			base, _ := strconv.ParseUint(string(r[5]), 10, 32)
			catalog[uint32(oid)] = row{string(r[1]), string(r[2]), string(r[3]), uint32(elem), uint32(base)}
			for _, next := range []uint32{uint32(elem), uint32(base)} {
				if _, seen := catalog[next]; next != 0 && !seen && known[next] == nil {
					want[next] = true
				}
			}
		}
	}
	var resolve func(oid uint32, depth int) *pgType
	resolve = func(oid uint32, depth int) *pgType {
		if t := known[oid]; t != nil {
			return t
		}
		r, ok := catalog[oid]
		switch {
		case !ok || depth > 3:
			return &pgType{kind: pgUnsupported, name: fmt.Sprintf("oid %d", oid)}
		case r.typtype == "e":
			return &pgType{name: r.name}
		case r.typtype == "d" && r.base != 0:
			return resolve(r.base, depth+1)
		case r.category == "A" && r.elem != 0:
			el := resolve(r.elem, depth+1)
			if el.kind == pgUnsupported {
				return &pgType{kind: pgUnsupported, name: r.name}
			}
			return &pgType{kind: pgArray, name: r.name, elem: el}
		case r.category == "S":
			return &pgType{name: r.name}
		}
		return &pgType{kind: pgUnsupported, name: r.name}
	}
	out := make([]*pgType, len(fields))
	for i, f := range fields {
		out[i] = resolve(f.DataTypeOID, 0)
	}
	return out, nil
}

// decode turns a PostgreSQL text value into a run value.
func (t *pgType) decode(rs *resultSet, col int, s string) any {
	switch t.kind {
	case pgBool:
		return s == "t"
	case pgInt:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return s
		}
		return rs.integer(col, n)
	case pgFloat:
		return parseFloatText(s)
	case pgNumeric:
		return s // exact, including NaN and ±Infinity
	case pgBytea:
		b, err := hex.DecodeString(strings.TrimPrefix(s, `\x`))
		if err != nil {
			return s
		}
		return binaryValue(b)
	case pgDateTime:
		return isoDateTime(s)
	case pgTimeTZ:
		return isoOffset(s, 8)
	case pgJSON:
		v, err := value.DecodeString(s)
		if err != nil {
			return s
		}
		return v
	case pgArray:
		v, ok := parsePGArray(s, func(e string) any { return t.elem.decode(rs, col, e) })
		if !ok {
			return s
		}
		return v
	case pgUnsupported:
		return unsupported(t.name)
	}
	return s
}

// parsePGArray reads PostgreSQL's text form of an array: {a,"b c",NULL},
// nested for more dimensions, with an optional [lo:hi]= prefix.
func parsePGArray(s string, dec func(string) any) (any, bool) {
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, '=')
		if i < 0 {
			return nil, false
		}
		s = s[i+1:]
	}
	p := arrayParser{s: s, dec: dec}
	v, ok := p.array()
	return v, ok && p.i == len(s)
}

type arrayParser struct {
	s   string
	i   int
	dec func(string) any
}

func (p *arrayParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *arrayParser) array() ([]any, bool) {
	if p.peek() != '{' {
		return nil, false
	}
	p.i++
	out := []any{}
	if p.peek() == '}' {
		p.i++
		return out, true
	}
	for {
		switch p.peek() {
		case '{':
			v, ok := p.array()
			if !ok {
				return nil, false
			}
			out = append(out, v)
		case '"':
			var b strings.Builder
			p.i++
			for {
				c := p.peek()
				if c == 0 {
					return nil, false
				}
				p.i++
				if c == '"' {
					break
				}
				if c == '\\' {
					c = p.peek()
					p.i++
				}
				b.WriteByte(c)
			}
			out = append(out, p.dec(b.String()))
		default:
			start := p.i
			for p.i < len(p.s) && p.s[p.i] != ',' && p.s[p.i] != '}' {
				p.i++
			}
			e := p.s[start:p.i]
			if strings.EqualFold(e, "NULL") {
				out = append(out, nil)
			} else {
				out = append(out, p.dec(e))
			}
		}
		switch p.peek() {
		case ',':
			p.i++
		case '}':
			p.i++
			return out, true
		default:
			return nil, false
		}
	}
}
