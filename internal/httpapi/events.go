package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/svcrun/svc/internal/events"
)

// DefaultStreamKeepAlive is how long an event stream stays silent before a
// keep-alive comment (spec/server.md section 8).
const DefaultStreamKeepAlive = 30 * time.Second

// streamWriteTimeout bounds one write to an event stream, so that a client
// that stops reading loses its stream instead of holding a slot forever.
const streamWriteTimeout = 30 * time.Second

// keepAliveMessage is the keep-alive: an SSE comment, which EventSource
// ignores.
const keepAliveMessage = ": ping\n\n"

// initStreams sets up the event streams from the options.
func (s *Server) initStreams() {
	s.hub = s.opts.Events
	if s.hub == nil {
		s.hub = events.New(events.Options{})
	}
	if s.opts.StreamKeepAlive <= 0 {
		s.opts.StreamKeepAlive = DefaultStreamKeepAlive
	}
	s.streamsEnd, s.endStreams = context.WithCancel(context.Background())
}

// streamEvents is GET /api/events (spec/server.md section 6): a
// text/event-stream of `data: {"event": <type>, "payload": {...}}`
// messages, from the moment of connecting (no replay), with a keep-alive
// comment after StreamKeepAlive of silence. Query workflow_id narrows the
// stream to that workflow (ACL pre-check: 403 outside the grants); without
// it a restricted token gets its granted workflows only. A narrowed stream
// never gets server-wide events. At most MaxStreams streams are open at
// once (429 beyond); every stream ends when the server shuts down.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request) error {
	var f events.Filter
	if id := r.URL.Query().Get("workflow_id"); id != "" {
		if err := permitWorkflow(r, id); err != nil {
			return err
		}
		f.Workflows = []string{id}
	} else {
		f.Workflows = grants(r)
	}
	if sid := r.URL.Query().Get("session_id"); sid != "" {
		if !validSession(sid) {
			return errorf(http.StatusBadRequest, "session_id: at most %d letters, digits, '-', '_' or '.'", maxSessionLen)
		}
		f.Session = sid
	}
	release, err := s.acquireStream()
	if err != nil {
		return err
	}
	defer release()
	// Subscribe before the headers go out: a client that has them misses
	// nothing published after.
	sub := s.hub.Subscribe(f)
	defer func() {
		sub.Close()
		if n := sub.Dropped(); n > 0 {
			s.log.Warn("an event stream fell behind and lost events", "dropped", n)
		}
	}()

	rc := http.NewResponseController(w)
	// net/http keeps a write deadline on the connection after the handler
	// returns; clear it for the next request on a kept-alive connection.
	defer rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		s.log.Error("event stream cannot flush", "err", err)
		return nil
	}

	keepAlive := time.NewTimer(s.opts.StreamKeepAlive)
	defer keepAlive.Stop()
	var buf []byte
	for {
		select {
		case <-r.Context().Done():
			return nil
		case <-s.streamsEnd.Done():
			return nil
		case e, ok := <-sub.Events():
			if !ok {
				return nil // the hub closed
			}
			b, err := json.Marshal(e)
			if err != nil {
				s.log.Error("event does not encode", "event", e.Type, "err", err)
				continue
			}
			buf = append(append(append(buf[:0], "data: "...), b...), "\n\n"...)
		case <-keepAlive.C:
			buf = append(buf[:0], keepAliveMessage...)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(buf); err != nil {
			return nil // the client is gone
		}
		if err := rc.Flush(); err != nil {
			return nil
		}
		keepAlive.Reset(s.opts.StreamKeepAlive)
	}
}
