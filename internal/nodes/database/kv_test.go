package database

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func kvConf(op, key string, extra ...any) map[string]any {
	raw := map[string]any{"db_type": TypeKV, "connection_url": kvURL, "operation": op, "key": key, "allow_local": true}
	for i := 0; i+1 < len(extra); i += 2 {
		raw[extra[i].(string)] = extra[i+1]
	}
	return raw
}

// redisClient is a plain client for checking what the node did.
func redisClient(t *testing.T) *redis.Client {
	t.Helper()
	o, err := redis.ParseURL(kvURL)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestKVOperations(t *testing.T) {
	t.Parallel()
	key, list, hash := unique("svc_kv"), unique("svc_list"), unique("svc_hash")
	rc := redisClient(t)
	t.Cleanup(func() { rc.Del(t.Context(), key, list, hash) })

	steps := []struct {
		name string
		raw  map[string]any
		want map[string]any
	}{
		{"get absent", kvConf("get", key), map[string]any{"value": nil, "ok": false, "deleted": 0, "list_length": nil}},
		{"set text", kvConf("set", key, "value", "hello"), map[string]any{"value": "hello", "ok": true, "deleted": 0, "list_length": nil}},
		{"get text", kvConf("get", key), map[string]any{"value": "hello", "ok": true, "deleted": 0, "list_length": nil}},
		{"set number", kvConf("set", key, "value", 1.5), map[string]any{"value": "1.5", "ok": true, "deleted": 0, "list_length": nil}},
		{"set boolean", kvConf("set", key, "value", true), map[string]any{"value": "true", "ok": true, "deleted": 0, "list_length": nil}},
		{"set empty text", kvConf("set", key, "value", ""), map[string]any{"value": "", "ok": true, "deleted": 0, "list_length": nil}},
		{"get empty text", kvConf("get", key), map[string]any{"value": "", "ok": true, "deleted": 0, "list_length": nil}},
		{"del", kvConf("del", key), map[string]any{"value": nil, "ok": true, "deleted": 1, "list_length": nil}},
		{"del again", kvConf("del", key), map[string]any{"value": nil, "ok": false, "deleted": 0, "list_length": nil}},
		{"rpush", kvConf("rpush", list, "value", "b"), map[string]any{"value": "b", "ok": true, "deleted": 0, "list_length": 1}},
		{"rpush number", kvConf("rpush", list, "value", 3), map[string]any{"value": "3", "ok": true, "deleted": 0, "list_length": 2}},
		{"lpush", kvConf("lpush", list, "value", "a"), map[string]any{"value": "a", "ok": true, "deleted": 0, "list_length": 3}},
		{"lpop", kvConf("lpop", list), map[string]any{"value": "a", "ok": true, "deleted": 0, "list_length": nil}},
		{"rpop", kvConf("rpop", list), map[string]any{"value": "3", "ok": true, "deleted": 0, "list_length": nil}},
		{"rpop last", kvConf("rpop", list), map[string]any{"value": "b", "ok": true, "deleted": 0, "list_length": nil}},
		{"lpop empty", kvConf("lpop", list), map[string]any{"value": nil, "ok": false, "deleted": 0, "list_length": nil}},
		{"hget absent", kvConf("hget", hash, "field", "f"), map[string]any{"value": nil, "ok": false, "deleted": 0, "list_length": nil}},
		{"hset", kvConf("hset", hash, "field", "f", "value", 42), map[string]any{"value": "42", "ok": true, "deleted": 0, "list_length": nil}},
		{"hset number field", kvConf("hset", hash, "field", 7, "value", "seven"), map[string]any{"value": "seven", "ok": true, "deleted": 0, "list_length": nil}},
		{"hget", kvConf("hget", hash, "field", "f"), map[string]any{"value": "42", "ok": true, "deleted": 0, "list_length": nil}},
		{"hget number field", kvConf("hget", hash, "field", "7"), map[string]any{"value": "seven", "ok": true, "deleted": 0, "list_length": nil}},
	}
	for _, s := range steps {
		out := mustRun(t, s.raw)
		if !reflect.DeepEqual(out, s.want) {
			t.Errorf("%s: output = %v; want %v", s.name, out, s.want)
		}
	}
	// A blank operation is get.
	raw := kvConf("", hash)
	delete(raw, "operation")
	_, err := runNode(t, raw, nodetest.New(nil))
	wantCode(t, "get of a hash (WRONGTYPE)", err, node.CodeDBError, "")
	if retryOf(err) != node.NoRetry {
		t.Errorf("WRONGTYPE is retryable; want not")
	}
}

func TestKVExpire(t *testing.T) {
	t.Parallel()
	key, keep := unique("svc_ttl"), unique("svc_keep")
	rc := redisClient(t)
	t.Cleanup(func() { rc.Del(t.Context(), key, keep) })
	mustRun(t, kvConf("set", key, "value", "v", "expire", 100))
	if ttl := rc.TTL(t.Context(), key).Val(); ttl <= 90*time.Second || ttl > 100*time.Second {
		t.Errorf("TTL after set with expire 100 = %v; want about 100s", ttl)
	}
	mustRun(t, kvConf("set", key, "value", "v", "expire", "2"))
	if ttl := rc.TTL(t.Context(), key).Val(); ttl <= 0 || ttl > 2*time.Second {
		t.Errorf("TTL after set with expire \"2\" = %v; want at most 2s", ttl)
	}
	for _, expire := range []any{nil, 0, -5} {
		raw := kvConf("set", keep, "value", "v")
		raw["expire"] = expire
		mustRun(t, raw)
		if ttl := rc.TTL(t.Context(), keep).Val(); ttl != -1 {
			t.Errorf("TTL after set with expire %v = %v; want none (-1)", expire, ttl)
		}
	}
}

// TestKVValueTooLarge runs at the real edge: a value of exactly 32 MiB is
// read, one byte more fails VALUE_TOO_LARGE, for get and hget.
func TestKVValueTooLarge(t *testing.T) {
	t.Parallel()
	key, hash := unique("svc_big"), unique("svc_bighash")
	rc := redisClient(t)
	t.Cleanup(func() { rc.Del(t.Context(), key, hash) })
	edge := strings.Repeat("x", DefaultMaxValueBytes)
	for _, size := range []int{DefaultMaxValueBytes, DefaultMaxValueBytes + 1} {
		v := edge
		if size > len(edge) {
			v += "y"
		}
		if err := rc.Set(t.Context(), key, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := rc.HSet(t.Context(), hash, "f", v).Err(); err != nil {
			t.Fatal(err)
		}
		for _, raw := range []map[string]any{kvConf("get", key), kvConf("hget", hash, "field", "f")} {
			out, err := runNode(t, raw, nodetest.New(nil))
			if size == DefaultMaxValueBytes {
				if err != nil || len(out["value"].(string)) != size {
					t.Errorf("%s of %d bytes = %v; want the value", raw["operation"], size, err)
				}
				continue
			}
			wantCode(t, raw["operation"].(string)+" of 32 MiB + 1", err, CodeValueTooLarge, "")
		}
	}
}

func TestKVConnection(t *testing.T) {
	t.Parallel()
	// A user of our own, so that the password matters (the default user
	// has none here).
	user := unique("svc_user")
	rc := redisClient(t)
	if err := rc.Do(t.Context(), "ACL", "SETUSER", user, "on", ">right-password", "~*", "+@all").Err(); err != nil {
		t.Fatalf("ACL SETUSER: %v", err)
	}
	t.Cleanup(func() { rc.Do(context.Background(), "ACL", "DELUSER", user) })
	url := "redis://" + user + ":wrong-password@127.0.0.1:6379/0"
	raw := kvConf("get", "k", "connection_url", url, "password", "right-password")
	if _, err := runNode(t, raw, nodetest.New(nil)); err != nil {
		t.Errorf("the password field replacing a wrong URL password: %v; want success", err)
	}
	raw = kvConf("get", "k", "connection_url", url)
	_, err := runNode(t, raw, nodetest.New(nil))
	wantCode(t, "wrong password", err, node.CodeDBError, "")
	if strings.Contains(err.Error(), "wrong-password") {
		t.Errorf("error %q shows the password", err)
	}
	raw = kvConf("rpush", "k", "value", 1)
	raw["connection_url"] = closedKV
	_, err = runNode(t, raw, nodetest.New(nil))
	wantCode(t, "closed port", err, CodeConnectionFailed, "")
	if retryOf(err) != node.Retryable {
		t.Errorf("push to a closed port: not retryable; want retryable (nothing was sent)")
	}
	if err := lostFailure("Redis", nil, false); retryOf(err) != node.NoRetry {
		t.Errorf("a lost push is retryable; want not")
	}
}

// droppingRedis is a server that speaks enough RESP to connect (it refuses
// HELLO, so the client falls back to RESP2, and answers PING and STRLEN),
// then drops the connection on any other command.
func droppingRedis(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					args, err := readRESP(r)
					if err != nil {
						return
					}
					switch strings.ToUpper(args[0]) {
					case "HELLO":
						_, _ = c.Write([]byte("-ERR unknown command 'HELLO'\r\n"))
					case "PING":
						_, _ = c.Write([]byte("+PONG\r\n"))
					case "STRLEN":
						_, _ = c.Write([]byte(":1\r\n"))
					default:
						return
					}
				}
			}()
		}
	}()
	return "redis://" + ln.Addr().String()
}

// readRESP reads one command: an array of bulk strings.
func readRESP(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "*") {
		return nil, errors.New("not an array")
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n < 1 {
		return nil, errors.New("bad array length")
	}
	args := make([]string, n)
	for i := range args {
		head, err := r.ReadString('\n')
		if err != nil || !strings.HasPrefix(head, "$") {
			return nil, errors.New("not a bulk string")
		}
		size, err := strconv.Atoi(strings.TrimSpace(head[1:]))
		if err != nil || size < 0 {
			return nil, errors.New("bad bulk length")
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:size])
	}
	return args, nil
}

// TestKVDroppedConnection: a connection that breaks during the operation
// fails CONNECTION_LOST, retryable for get and set, never for push or pop.
func TestKVDroppedConnection(t *testing.T) {
	t.Parallel()
	url := droppingRedis(t)
	tests := []struct {
		raw   map[string]any
		retry node.Retry
	}{
		{kvConf("get", "k"), node.Retryable},
		{kvConf("set", "k", "value", 1), node.Retryable},
		{kvConf("del", "k"), node.Retryable},
		{kvConf("lpush", "k", "value", 1), node.NoRetry},
		{kvConf("rpush", "k", "value", 1), node.NoRetry},
		{kvConf("lpop", "k"), node.NoRetry},
		{kvConf("rpop", "k"), node.NoRetry},
	}
	for _, tt := range tests {
		tt.raw["connection_url"] = url
		_, err := runNode(t, tt.raw, nodetest.New(nil))
		op := tt.raw["operation"].(string)
		wantCode(t, op+" on a dropped connection", err, CodeConnectionLost, "")
		if got := retryOf(err); got != tt.retry {
			t.Errorf("%s on a dropped connection: retry %v; want %v", op, got, tt.retry)
		}
	}
}
