// Package sqlite is the embedded store: one SQLite database file in WAL
// mode (modernc.org/sqlite, pure Go). All writes go through one writer
// goroutine that commits them in groups: many callers share a transaction,
// each in a savepoint of its own, and each waits for the commit that holds
// its write. Reads use a separate pool of read-only connections, which WAL
// lets run beside the writer.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/svcrun/svc/internal/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database file's name in the data directory.
const FileName = "svc.db"

// Options configure a Store. The zero value of each field is usable.
type Options struct {
	// Logger receives write failures; nil discards them.
	Logger *slog.Logger
	// MaxBatch bounds how many writes share one transaction; zero means 512.
	MaxBatch int
	// Readers is the size of the read pool; zero means 8.
	Readers int
	// Linger is how long the writer waits for more writes when it has
	// fewer than 32 to commit; zero means 200 µs, negative not at all.
	Linger time.Duration
}

// Store is the SQLite store.
type Store struct {
	w, r   *sql.DB
	log    *slog.Logger
	max    int
	linger time.Duration

	mu     sync.RWMutex // guards closed and sends on ops
	closed bool
	ops    chan *op
	done   chan struct{}

	ckpt     *sql.DB // the checkpointer's connection
	ckptKick chan struct{}
	ckptDone chan struct{}

	// The writer goroutine's statement cache: a statement first runs
	// unprepared and is prepared after its transaction (the one writer
	// connection is busy during one), then reused by every later write.
	stmts   map[string]*sql.Stmt
	pending map[string]bool
}

// wtx is the transaction a write runs in.
type wtx struct {
	tx *sql.Tx
	s  *Store
}

// Exec runs a statement, prepared once it has been seen.
func (t wtx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.s.stmts[query]; st != nil {
		return t.tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	t.s.pending[query] = true
	return t.tx.ExecContext(ctx, query, args...)
}

// QueryRow runs a query for one row, prepared once it has been seen.
func (t wtx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.s.stmts[query]; st != nil {
		return t.tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	t.s.pending[query] = true
	return t.tx.QueryRowContext(ctx, query, args...)
}

var _ store.Store = (*Store)(nil)

// op is one write. fn runs inside the batch's transaction; done, when not
// nil, receives its outcome after the commit. A write of several
// statements runs in a savepoint so that its failure undoes all of them;
// a single statement is atomic by itself (SQLite undoes a failed one), so
// a write that fails before its one change needs none.
type op struct {
	fn        func(ctx context.Context, tx wtx) error
	done      chan error
	savepoint bool
}

// Open opens (creating when needed) the database at path and brings its
// schema up to date.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 512
	}
	if opts.Readers <= 0 {
		opts.Readers = 8
	}
	switch {
	case opts.Linger == 0:
		opts.Linger = 200 * time.Microsecond
	case opts.Linger < 0:
		opts.Linger = 0
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	pragmas := []string{"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(ON)"}
	// The writer never checkpoints: a checkpointer goroutine copies the WAL
	// into the database on a connection of its own, beside the writer, so
	// that no commit waits for a checkpoint.
	w, err := sql.Open("sqlite", dsn(abs, append(pragmas, "temp_store(MEMORY)", "wal_autocheckpoint(0)"), "immediate"))
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := migrate(ctx, w); err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(abs, append(pragmas, "query_only(1)"), ""))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	r.SetMaxOpenConns(opts.Readers)
	r.SetMaxIdleConns(opts.Readers)
	s := &Store{w: w, r: r, log: opts.Logger, max: opts.MaxBatch, linger: opts.Linger, ops: make(chan *op, 4*opts.MaxBatch), done: make(chan struct{}),
		stmts: map[string]*sql.Stmt{}, pending: map[string]bool{}}
	c, err := sql.Open("sqlite", dsn(abs, pragmas, ""))
	if err != nil {
		w.Close()
		r.Close()
		return nil, fmt.Errorf("open store: %w", err)
	}
	c.SetMaxOpenConns(1)
	s.ckpt, s.ckptKick, s.ckptDone = c, make(chan struct{}, 1), make(chan struct{})
	go s.loop()
	go s.checkpointer()
	return s, nil
}

func dsn(path string, pragmas []string, txlock string) string {
	q := url.Values{}
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	if txlock != "" {
		q.Set("_txlock", txlock)
	}
	return "file:" + path + "?" + q.Encode()
}

// migrate applies the embedded migrations not yet applied, each in a
// transaction of its own.
func migrate(ctx context.Context, db *sql.DB) error {
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	var current int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	names, err := fs.Glob(migrations, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	slices.Sort(names)
	for _, name := range names {
		base := filepath.Base(name)
		version, err := strconv.Atoi(strings.SplitN(base, "_", 2)[0])
		if err != nil {
			return fmt.Errorf("migrate: bad migration name %s", base)
		}
		if version <= current {
			continue
		}
		body, err := migrations.ReadFile(name)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)`,
			version, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate %s: %w", base, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate %s: %w", base, err)
		}
	}
	return nil
}

// Close waits for queued writes to commit and closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.done
	close(s.ckptKick)
	<-s.ckptDone
	for _, st := range s.stmts {
		st.Close()
	}
	_, err := s.ckpt.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	return errors.Join(err, s.ckpt.Close(), s.r.Close(), s.w.Close())
}

// submit queues a write. With wait set it returns the write's outcome once
// its transaction is committed; a write once queued is carried out even if
// ctx ends meanwhile.
func (s *Store) submit(ctx context.Context, wait bool, fn func(context.Context, wtx) error) error {
	return s.send(ctx, wait, &op{fn: fn})
}

// submitMulti queues a write of several statements, run in a savepoint.
func (s *Store) submitMulti(ctx context.Context, fn func(context.Context, wtx) error) error {
	return s.send(ctx, true, &op{fn: fn, savepoint: true})
}

func (s *Store) send(ctx context.Context, wait bool, o *op) error {
	if wait {
		o.done = make(chan error, 1)
	}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return store.ErrClosed
	}
	select {
	case s.ops <- o:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	if !wait {
		return nil
	}
	return <-o.done
}

// loop is the writer: it takes a write, gathers the writes queued behind it,
// and commits them together.
func (s *Store) loop() {
	defer close(s.done)
	batch := make([]*op, 0, s.max)
	commits := 0
	for o := range s.ops {
		batch = append(batch[:0], o)
	gather:
		for len(batch) < s.max {
			select {
			case o, ok := <-s.ops:
				if !ok {
					break gather
				}
				batch = append(batch, o)
			default:
				if s.linger == 0 || len(batch) >= 32 {
					break gather
				}
				// Linger briefly for more writes: one commit for many
				// costs little more than one for a few.
				t := time.NewTimer(s.linger)
				select {
				case o, ok := <-s.ops:
					t.Stop()
					if !ok {
						break gather
					}
					batch = append(batch, o)
				case <-t.C:
					break gather
				}
			}
		}
		s.commit(batch)
		if commits++; commits%checkpointEvery == 0 {
			select {
			case s.ckptKick <- struct{}{}:
			default:
			}
		}
	}
}

// checkpointEvery is how many commits pass between checkpoints; about a
// megabyte or two of WAL at the sizes svc writes.
const checkpointEvery = 100

// checkpointer copies the WAL into the database when the writer asks (every
// checkpointEvery commits; Close truncates the WAL). PASSIVE never blocks
// the writer or readers; what it cannot copy now, a later round copies.
func (s *Store) checkpointer() {
	defer close(s.ckptDone)
	for range s.ckptKick {
		if _, err := s.ckpt.Exec("PRAGMA wal_checkpoint(PASSIVE)"); err != nil {
			s.log.Warn("store: checkpoint failed", "err", err)
		}
	}
}

func (s *Store) commit(batch []*op) {
	ctx := context.Background()
	errs := make([]error, len(batch))
	finish := func(commitErr error) {
		for i, o := range batch {
			err := errs[i]
			if err == nil {
				err = commitErr
			}
			if err != nil && o.done == nil {
				s.log.Error("store write failed", "err", err)
			}
			if o.done != nil {
				o.done <- err
			}
		}
	}
	defer s.prepare(ctx)
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		finish(fmt.Errorf("begin: %w", err))
		return
	}
	tx := wtx{sqlTx, s}
	if len(batch) == 1 {
		if errs[0] = batch[0].fn(ctx, tx); errs[0] != nil {
			sqlTx.Rollback()
			finish(nil)
			return
		}
	} else {
		for i, o := range batch {
			if !o.savepoint {
				errs[i] = o.fn(ctx, tx)
				continue
			}
			if _, err := tx.Exec(ctx, "SAVEPOINT w"); err != nil {
				errs[i] = err
				continue
			}
			if errs[i] = o.fn(ctx, tx); errs[i] != nil {
				if _, err := tx.Exec(ctx, "ROLLBACK TO w"); err != nil {
					sqlTx.Rollback()
					finish(fmt.Errorf("rollback to savepoint: %w", err))
					return
				}
			}
			if _, err := tx.Exec(ctx, "RELEASE w"); err != nil {
				sqlTx.Rollback()
				finish(fmt.Errorf("release savepoint: %w", err))
				return
			}
		}
	}
	if err := sqlTx.Commit(); err != nil {
		finish(fmt.Errorf("commit: %w", err))
		return
	}
	finish(nil)
}

// prepare prepares the statements first seen in the last transaction.
func (s *Store) prepare(ctx context.Context) {
	for q := range s.pending {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			s.log.Warn("store: prepare failed", "err", err)
			continue
		}
		s.stmts[q] = st
	}
	clear(s.pending)
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMs(v int64) time.Time { return time.UnixMilli(v).UTC() }

func nullMs(t *time.Time) any {
	if t == nil || t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

func msPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMs(v.Int64)
	return &t
}

// wrapErr prefixes err with the step that failed, except for the store's
// kinds of failure, which are returned as they are.
func wrapErr(step string, err error) error {
	switch {
	case err == nil,
		errors.Is(err, store.ErrNotFound),
		errors.Is(err, store.ErrExists),
		errors.Is(err, store.ErrLastGrant),
		errors.Is(err, store.ErrClosed):
		return err
	}
	return fmt.Errorf("%s: %w", step, err)
}
