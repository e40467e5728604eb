package database

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

// kvData holds a key-value operation's operands as text.
type kvData struct {
	key, value, field string
}

// operand reads a required key-value operand: text, a number or a
// boolean. Empty text is a value only for value.
func operand(v any, name, code, op string) (string, error) {
	switch t := v.(type) {
	case nil:
		return "", node.FieldError(code, name, "is required for %s", op)
	case string:
		if t == "" && name != "value" {
			return "", node.FieldError(code, name, "is required for %s", op)
		}
		return t, nil
	case bool, int, int64, float64:
		return value.Text(t), nil
	}
	return "", node.FieldError(code, name, "must be text, a number or a boolean, not %s", value.TypeName(v))
}

func (d *Database) newKV() error {
	o := d.opts
	if o.ConnectionURL == "" {
		return node.ConfigError("connection_url", "is required for kv")
	}
	var err error
	if d.kd.key, err = operand(o.Key, "key", CodeInvalidKey, d.op); err != nil {
		return err
	}
	switch d.op {
	case "hget", "hset":
		if d.kd.field, err = operand(o.Field, "field", CodeInvalidField, d.op); err != nil {
			return err
		}
	}
	switch d.op {
	case "set", "lpush", "rpush", "hset":
		if d.kd.value, err = operand(o.Value, "value", CodeInvalidValue, d.op); err != nil {
			return err
		}
	}
	d.kv, err = parseRedisURL(o.ConnectionURL, o.Password)
	return err
}

// parseRedisURL reads a redis://, rediss:// or unix:// URL. The client
// makes one connection, never retries on its own (the node's retry
// settings decide), and gives up connecting after 10 seconds.
func parseRedisURL(raw, password string) (*redis.Options, error) {
	o, err := redis.ParseURL(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error quotes the URL, password included
		}
		return nil, node.ConfigError("connection_url", "is not a usable redis://, rediss:// or unix:// URL: %v", err)
	}
	if password != "" {
		o.Password = password
	}
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.DialTimeout = connectTimeout
	o.ReadTimeout = 30 * time.Second
	o.WriteTimeout = 30 * time.Second
	o.ContextTimeoutEnabled = true
	o.PoolSize = 1
	o.MinIdleConns = 0
	o.MaxIdleConns = 0
	o.DisableIdentity = true
	// No server-directed moves to other endpoints: one connection, to the
	// address checked.
	o.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	return o, nil
}

func (d *Database) runKV(ctx context.Context, g guard) (map[string]any, error) {
	o := *d.kv
	tlsConf := o.TLSConfig
	o.TLSConfig = nil
	o.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := g.dial(ctx, network, addr)
		if err != nil || tlsConf == nil {
			return c, err
		}
		tc := tls.Client(c, tlsConf.Clone())
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = c.Close()
			return nil, err
		}
		return tc, nil
	}
	client := redis.NewClient(&o)
	defer client.Close()
	// A cancelled run closes the client, which ends a command in flight.
	stop := context.AfterFunc(ctx, func() { _ = client.Close() })
	defer stop()

	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	err := client.Ping(cctx).Err()
	cancel()
	if err != nil {
		if isRedisError(err) {
			return nil, serverFailure(err)
		}
		return nil, connectFailure("Redis", err)
	}
	out := map[string]any{"value": nil, "ok": false, "deleted": 0, "list_length": nil}
	k := d.kd
	limit := d.opts.Limits.MaxValueBytes
	switch d.op {
	case "get":
		var n int64
		if n, err = client.StrLen(ctx, k.key).Result(); err == nil {
			if n > limit {
				return nil, tooLarge(n, limit)
			}
			err = kvRead(client.Get(ctx, k.key), out, limit)
		}
	case "hget":
		var n int64
		if n, err = client.HStrLen(ctx, k.key, k.field).Result(); err == nil {
			if n > limit {
				return nil, tooLarge(n, limit)
			}
			err = kvRead(client.HGet(ctx, k.key, k.field), out, limit)
		}
	case "set":
		if err = client.Set(ctx, k.key, k.value, time.Duration(d.opts.Expire)*time.Second).Err(); err == nil {
			out["value"], out["ok"] = k.value, true
		}
	case "hset":
		if err = client.HSet(ctx, k.key, k.field, k.value).Err(); err == nil {
			out["value"], out["ok"] = k.value, true
		}
	case "del":
		var n int64
		if n, err = client.Del(ctx, k.key).Result(); err == nil {
			out["deleted"], out["ok"] = int(n), n > 0
		}
	case "lpush", "rpush":
		push := client.LPush
		if d.op == "rpush" {
			push = client.RPush
		}
		var n int64
		if n, err = push(ctx, k.key, k.value).Result(); err == nil {
			out["value"], out["ok"], out["list_length"] = k.value, true, int(n)
		}
	case "lpop":
		err = kvRead(client.LPop(ctx, k.key), out, 0)
	case "rpop":
		err = kvRead(client.RPop(ctx, k.key), out, 0)
	}
	if err != nil {
		var ne *node.Error
		if errors.As(err, &ne) {
			return nil, err
		}
		if isRedisError(err) {
			return nil, serverFailure(err)
		}
		// Push and pop are not repeated after a dropped connection: the
		// first attempt may have changed the list.
		switch d.op {
		case "lpush", "rpush", "lpop", "rpop":
			return nil, lostFailure("Redis", err, false)
		}
		return nil, lostFailure("Redis", err, true)
	}
	return out, nil
}

// kvRead fills value and ok from a read; a missing key reads as null.
// A limit above zero is checked again on the value read (it may have grown
// since its length was asked).
func kvRead(cmd *redis.StringCmd, out map[string]any, limit int64) error {
	v, err := cmd.Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return err
	}
	if limit > 0 && int64(len(v)) > limit {
		return tooLarge(int64(len(v)), limit)
	}
	out["value"], out["ok"] = v, true
	return nil
}

func tooLarge(n, limit int64) error {
	return node.FieldError(CodeValueTooLarge, "key", "holds a value of %d bytes, over the limit of %d bytes", n, limit)
}

// isRedisError reports an error the server sent (WRONGTYPE, NOAUTH...).
func isRedisError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}
