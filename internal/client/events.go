package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
)

// maxEventSize caps one event-stream message (a scheduler-status event
// carries a run's output).
const maxEventSize = 64 << 20

// Event is one message of the event stream: its type (node-status,
// scheduler-status, ...) and its payload as the server sent it.
type Event struct {
	Event   string          `json:"event"`
	Payload json.RawMessage `json:"payload"`
	// WorkflowID is the payload's workflow_id; empty for a server-wide
	// event (scheduler-ready).
	WorkflowID string `json:"-"`
}

// EventStream is an open GET /api/events stream. It is not safe for
// concurrent use.
type EventStream struct {
	body io.ReadCloser
	r    *bufio.Reader
	// skipLF is set after a CR: a LF right after it ends the same line.
	skipLF bool
	line   []byte
	data   []byte
}

// Events opens the event stream, narrowed to one workflow when workflowID
// is not empty. It returns once the server has accepted the stream, or an
// *Error (401, 403 outside the token's grants, 429 with too many streams
// open). The stream carries what is published from then on until ctx
// ends, the server ends it (at shutdown), or Close; an http.Client with a
// Timeout (Options.HTTPClient) also cuts it.
func (c *Client) Events(ctx context.Context, workflowID string) (*EventStream, error) {
	path := "/api/events"
	if workflowID != "" {
		path += "?" + url.Values{"workflow_id": {workflowID}}.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base.String()+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return nil, responseError(resp, data)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("client: GET %s: response is %q, not an event stream", path, mt)
	}
	return &EventStream{body: resp.Body, r: bufio.NewReader(resp.Body)}, nil
}

// Next waits for the next event; keep-alive comments are skipped. It
// returns io.EOF when the server has ended the stream, and the read error
// when ctx ended or the connection failed. A message that is not an event
// is an error too, and the stream can be read on after it.
func (s *EventStream) Next() (Event, error) {
	s.data = s.data[:0]
	for {
		line, err := s.readLine()
		if err != nil {
			// A message cut off by the end of the stream is dropped, as
			// EventSource does.
			return Event{}, err
		}
		if len(line) == 0 { // end of a message
			if len(s.data) == 0 {
				continue
			}
			return decodeEvent(bytes.TrimSuffix(s.data, []byte("\n")))
		}
		if line[0] == ':' {
			continue // comment: the keep-alive
		}
		field, value, found := bytes.Cut(line, []byte(":"))
		if found {
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		// The server sends data fields only; event, id and retry are
		// ignored as they would not change what the payload says.
		if string(field) == "data" {
			if len(s.data)+len(value) >= maxEventSize {
				return Event{}, errors.New("client: event stream: message too large")
			}
			s.data = append(append(s.data, value...), '\n')
		}
	}
}

// Close closes the stream.
func (s *EventStream) Close() error { return s.body.Close() }

// readLine reads one line of the stream, ended by CRLF, LF or CR (the SSE
// line endings). The line is valid until the next call.
func (s *EventStream) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		b, err := s.r.ReadByte()
		if err != nil {
			return nil, err
		}
		if s.skipLF {
			s.skipLF = false
			if b == '\n' {
				continue
			}
		}
		switch b {
		case '\n':
			return s.line, nil
		case '\r':
			s.skipLF = true
			return s.line, nil
		}
		if len(s.line) >= maxEventSize {
			return nil, errors.New("client: event stream: line too long")
		}
		s.line = append(s.line, b)
	}
}

// decodeEvent decodes the data of one message.
func decodeEvent(data []byte) (Event, error) {
	var e Event
	if err := json.Unmarshal(data, &e); err != nil || e.Event == "" {
		return Event{}, fmt.Errorf("client: event stream: message %.80q is not an event", data)
	}
	var p struct {
		WorkflowID string `json:"workflow_id"`
	}
	if json.Unmarshal(e.Payload, &p) == nil {
		e.WorkflowID = p.WorkflowID
	}
	return e, nil
}
