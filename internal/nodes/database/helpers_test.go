package database

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

// The services the tests talk to (see .ci/run); each can be pointed
// elsewhere with an environment variable.
var (
	pgURL = envOr("SVC_TEST_PG_URL", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable")
	myURL = envOr("SVC_TEST_MYSQL_URL", "mysql://root@127.0.0.1:3306/test")
	kvURL = envOr("SVC_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
)

// closedURL points at a port nothing listens on: a test that reaches the
// network with it fails CONNECTION_FAILED, not the code it expects.
const (
	closedPG    = "postgres://postgres@127.0.0.1:1/test?sslmode=disable"
	closedMySQL = "mysql://root@127.0.0.1:1/test"
	closedKV    = "redis://127.0.0.1:1/0"
)

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// unique returns a name with a random suffix, for tables and keys.
func unique(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + "_" + hex.EncodeToString(b)
}

// runNode builds and runs the node from a raw config in env.
func runNode(t testing.TB, raw map[string]any, env *nodetest.Env) (map[string]any, error) {
	t.Helper()
	res, err := nodetest.Run(t.Context(), Spec(), raw, env)
	if err != nil {
		return nil, err
	}
	out, _ := res.Output.(map[string]any)
	return out, nil
}

// mustRun runs the node and fails the test on an error.
func mustRun(t testing.TB, raw map[string]any) map[string]any {
	t.Helper()
	out, err := runNode(t, raw, nodetest.New(nil))
	if err != nil {
		t.Fatalf("run %v: %v", raw, err)
	}
	return out
}

// admin runs the node as an admin caller (raw SQL allowed) and fails the
// test on an error: the tests' way to set up tables.
func admin(t testing.TB, raw map[string]any) map[string]any {
	t.Helper()
	env := nodetest.New(nil)
	env.AdminCaller = true
	raw["allow_raw_sql"] = true
	raw["allow_local"] = true
	if raw["operation"] == nil {
		raw["operation"] = "execute"
	}
	// Not t.Context(): admin also runs in Cleanup, after it is cancelled.
	res, err := nodetest.Run(context.Background(), Spec(), raw, env)
	if err != nil {
		t.Fatalf("setup %v: %v", raw["query"], err)
	}
	out, _ := res.Output.(map[string]any)
	return out
}

// sqlConf is a config for one of the SQL databases, local addresses
// allowed.
func sqlConf(dbType, target, op, query string, params ...any) map[string]any {
	raw := map[string]any{"db_type": dbType, "operation": op, "query": query, "allow_local": true}
	if dbType == TypeEmbedded {
		raw["db_path"] = target
	} else {
		raw["connection_url"] = target
	}
	if len(params) > 0 {
		raw["params"] = params
	}
	return raw
}

// rowsOf returns the rows of an output.
func rowsOf(t testing.TB, out map[string]any) []map[string]any {
	t.Helper()
	rows, ok := out["rows"].([]any)
	if !ok {
		t.Fatalf("output rows = %T; want []any", out["rows"])
	}
	res := make([]map[string]any, len(rows))
	for i, r := range rows {
		res[i], _ = r.(map[string]any)
	}
	return res
}

// wantCode checks an error's code (and field, when given).
func wantCode(t testing.TB, what string, err error, code, field string) {
	t.Helper()
	nodetest.WantError(t, what, err, code, field)
}

// retryOf returns the retry classification of a node error.
func retryOf(err error) node.Retry {
	var ne *node.Error
	if errors.As(err, &ne) {
		return ne.Retry
	}
	return node.NoRetry
}
