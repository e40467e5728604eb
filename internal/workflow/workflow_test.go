package workflow_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/workflow"
)

const designExample = `{
  "id": "daily-report",
  "name": "Daily report",
  "tags": ["reports"],
  "collection_id": null,
  "variables": {"region": "eu"},
  "nodes": [
    {"id": "start", "node_type_id": "schedule", "name": "Every weekday",
     "config": {"mode": "cron", "cron_expr": "0 7 * * 1-5"}},
    {"id": "fetch", "node_type_id": "http_request", "name": "Fetch",
     "config": {"url": "https://example.org/api?region={{ $vars.region }}", "method": "GET"},
     "retry": {"enabled": true, "max_attempts": 3, "backoff_ms": 500}},
    {"id": "out", "node_type_id": "output", "config": {"label": "Status", "field": "status"},
     "disabled": false, "position": {"x": 480, "y": 0}}
  ],
  "edges": [
    {"id": "e1", "from": "start", "from_port": "triggered", "to": "fetch", "to_port": "in"},
    {"id": "e2", "from": "fetch", "from_port": "success", "to": "out", "to_port": "in"}
  ]
}`

func TestParseDesignExample(t *testing.T) {
	t.Parallel()
	w, err := workflow.Parse([]byte(designExample))
	if err != nil {
		t.Fatal(err)
	}
	if w.ID != "daily-report" || w.Name != "Daily report" || len(w.Nodes) != 3 || len(w.Edges) != 2 {
		t.Fatalf("Parse = %+v; want the DESIGN example", w)
	}
	if w.CollectionID != nil {
		t.Errorf("CollectionID = %v; want nil for null", *w.CollectionID)
	}
	if r := w.Nodes[1].Retry; r == nil || !r.Enabled || r.MaxAttempts != 3 || r.BackoffMs != 500 {
		t.Errorf("retry = %+v; want enabled, 3, 500", r)
	}
	if got := w.Nodes[1].Config["url"]; got != "https://example.org/api?region={{ $vars.region }}" {
		t.Errorf("config url = %v", got)
	}
	if w.Variables["region"] != "eu" || w.Tags[0] != "reports" {
		t.Errorf("variables %v tags %v", w.Variables, w.Tags)
	}
}

func TestRoundTripKeepsUnknownFields(t *testing.T) {
	t.Parallel()
	doc := `{"id":"w","name":"W","editor":{"zoom":1.5,"theme":"dark"},"schema_version":2,
	 "nodes":[{"id":"a","node_type_id":"if","config":{"lhs":"1","big":12345678901234},"ui":{"color":"red"},
	   "position":{"x":1,"y":2,"w":300}}],
	 "edges":[{"id":"e","from":"a","to":"a","label":"loop-back","style":[1,2]}]}`
	w, err := workflow.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"editor":{"zoom":1.5,"theme":"dark"}`, `"schema_version":2`, `"ui":{"color":"red"}`,
		`"position":{"x":1,"y":2,"w":300}`, `"label":"loop-back"`, `"style":[1,2]`, `"big":12345678901234`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("round trip lost %s:\n%s", want, out)
		}
	}
	w2, err := workflow.Parse(out)
	if err != nil {
		t.Fatal(err)
	}
	out2, _ := json.Marshal(w2)
	if !bytes.Equal(out, out2) {
		t.Errorf("second round trip differs:\n%s\n%s", out, out2)
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ doc, path string }{
		{`{"id":"w","name":"W",`, ""},
		{`[1,2]`, ""},
		{`"text"`, ""},
		{`null`, ""},
		{`{"name":"W"}`, "id"},
		{`{"id":"","name":"W"}`, "id"},
		{`{"id":"` + strings.Repeat("x", 257) + `","name":"W"}`, "id"},
		{`{"id":7,"name":"W"}`, "id"},
		{`{"id":"w"}`, "name"},
		{`{"id":"w","name":"  "}`, "name"},
		{`{"id":"w","name":"W","tags":"a"}`, "tags"},
		{`{"id":"w","name":"W","collection_id":3}`, "collection_id"},
		{`{"id":"w","name":"W","variables":[]}`, "variables"},
		{`{"id":"w","name":"W","nodes":{}}`, "nodes"},
		{`{"id":"w","name":"W","nodes":[7]}`, "nodes[0]"},
		{`{"id":"w","name":"W","nodes":[{"node_type_id":"if"}]}`, "nodes[0].id"},
		{`{"id":"w","name":"W","nodes":[{"id":"a"}]}`, "nodes[0].node_type_id"},
		{`{"id":"w","name":"W","nodes":[{"id":"a","node_type_id":"if","config":"x"}]}`, "nodes[0].config"},
		{`{"id":"w","name":"W","nodes":[{"id":"a","node_type_id":"if","disabled":"yes"}]}`, "nodes[0].disabled"},
		{`{"id":"w","name":"W","nodes":[{"id":"a","node_type_id":"if","retry":{"max_attempts":"many"}}]}`, "nodes[0].retry.max_attempts"},
		{`{"id":"w","name":"W","nodes":[{"id":"a","node_type_id":"if","retry":{"max_attempts":1.5}}]}`, "nodes[0].retry.max_attempts"},
		{`{"id":"w","name":"W","edges":[{"id":"e","to":"b"}]}`, "edges[0].from"},
		{`{"id":"w","name":"W","edges":[{"id":"e","from":"a","to":"b","to_port":5}]}`, "edges[0].to_port"},
		{`{"id":"w","name":"W","edges":[{"from":"a","to":"b"}]}`, "edges[0].id"},
	}
	for _, tt := range tests {
		_, err := workflow.Parse([]byte(tt.doc))
		var pe *workflow.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%.40s) error = %v; want a ParseError", tt.doc, err)
			continue
		}
		if pe.Path != tt.path {
			t.Errorf("Parse(%.40s) path = %q (%v); want %q", tt.doc, pe.Path, err, tt.path)
		}
	}
}

func TestRetryClamped(t *testing.T) {
	t.Parallel()
	w, err := workflow.Parse([]byte(`{"id":"w","name":"W","nodes":[
	 {"id":"a","node_type_id":"if","retry":{"enabled":true,"max_attempts":50,"backoff_ms":-5}},
	 {"id":"b","node_type_id":"if","retry":{"enabled":true,"max_attempts":0}},
	 {"id":"c","node_type_id":"if","retry":{"enabled":true}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []workflow.Retry{{Enabled: true, MaxAttempts: 10, BackoffMs: 0}, {Enabled: true, MaxAttempts: 1, BackoffMs: 1000}, {Enabled: true, MaxAttempts: 3, BackoffMs: 1000}} {
		if got := *w.Nodes[i].Retry; got != want {
			t.Errorf("node %d retry = %+v; want %+v", i, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(designExample))
	f.Add([]byte(`{"id":"w","name":"W","nodes":[{"id":"a","node_type_id":"x","config":{"a":[1,{"b":null}]}}],"edges":[{"id":"e","from":"a","to":"a"}],"z":1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		w, err := workflow.Parse(data)
		if err != nil {
			return
		}
		// A document that parses survives a round trip unchanged.
		out, err := json.Marshal(w)
		if err != nil {
			t.Fatalf("Marshal after Parse: %v", err)
		}
		w2, err := workflow.Parse(out)
		if err != nil {
			t.Fatalf("Parse of the marshalled document: %v\n%s", err, out)
		}
		out2, err := json.Marshal(w2)
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("round trip is not stable:\n%s\n%s", out, out2)
		}
	})
}
