package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/workflow"
)

func run(t testing.TB, opts engine.Options, req engine.Request) (*engine.Result, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts.Events = rec
	if opts.Registry == nil {
		opts.Registry = testRegistry(newProbe())
	}
	res := engine.New(opts).Run(context.Background(), req)
	return res, rec
}

func wantTrace(t *testing.T, rec *recorder, want ...string) {
	t.Helper()
	if got := rec.trace(); !slices.Equal(got, want) {
		t.Errorf("trace =\n  %v\nwant\n  %v", got, want)
	}
}

func TestLinearRun(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":"{\"name\":\"ada\"}"}`,
		`s:set_variable {"key":"greeting","value":"hello {{ $input.name }} from {{ $vars.region }}"}`,
		`g:get_variable {"key":"greeting"}`,
		`o:output {"field":"value","label":"Greeting"}`,
	}, []string{"t.start>s", "s.out>g", "g.out>o"})
	w.Variables = map[string]any{"region": "us"}
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w, Variables: map[string]any{"region": "eu"}})
	if !res.Success || res.Status != "success" || res.Error != nil {
		t.Fatalf("run failed: %+v", res)
	}
	if got := out(res, "o", "value"); got != "hello ada from eu" {
		t.Errorf("output = %v; want the greeting with initial_variables over the document's variables", got)
	}
	wantTrace(t, rec, "t:running", "t:success", "s:running", "s:success", "g:running", "g:success", "o:running", "o:success")
	if res.OutputNodeID != "o" || len(res.Outputs) != 1 {
		t.Errorf("outputs = %v from %q; want the Output node's", res.Outputs, res.OutputNodeID)
	}
	for _, id := range []string{"t", "s", "g", "o"} {
		if tm := res.NodeTimings[id]; tm.Runs != 1 || tm.Attempts != 1 || tm.StartedAtMs == 0 {
			t.Errorf("timing of %s = %+v", id, tm)
		}
	}
	if res.ExecutionID == "" || res.WorkflowID != "w" || res.FinishedAt.Before(res.StartedAt) {
		t.Errorf("result identity/timing = %q %q %v %v", res.ExecutionID, res.WorkflowID, res.StartedAt, res.FinishedAt)
	}
}

func TestRunResultJSON(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`}, nil)
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	for _, k := range []string{"execution_id", "workflow_id", "success", "node_outputs", "logs", "error", "validation_errors"} {
		if _, ok := m[k]; !ok {
			t.Errorf("run result JSON lacks %q: %s", k, b)
		}
	}
	if m["error"] != nil || m["logs"] == nil {
		t.Errorf("error = %v, logs = %v; want null and an array", m["error"], m["logs"])
	}
}

func TestSkipPropagation(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":{"n":1}}`,
		`i:if {"lhs":"{{ $input.n }}","op":">","rhs":"5"}`,
		`big:hook`, `big2:hook`, `small:hook`, `after:hook`,
	}, []string{"t>i", "i.true>big", "big>big2", "i.false>small", "big2>after"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatalf("run failed: %v", *res.Error)
	}
	wantTrace(t, rec, "t:running", "t:success", "i:running", "i:success",
		"big:skipped", "big2:skipped", "after:skipped", "small:running", "small:success")
	if _, ok := res.NodeOutputs["big"]; ok {
		t.Errorf("a skipped node has an output")
	}
	if res.NodeStatus["after"] != engine.StatusSkipped || res.NodeStatus["small"] != engine.StatusSuccess {
		t.Errorf("node_status = %v", res.NodeStatus)
	}
}

func TestMergeAfterUntakenBranch(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":{"n":9}}`,
		`i:if {"lhs":"{{ $input.n }}","op":">","rhs":"5"}`,
		`a:transform_data {"source_node":"t","mappings":[{"from":"/n","to":"big"}]}`,
		`b:transform_data {"source_node":"t","mappings":[{"from":"/n","to":"small"}]}`,
		`c:hook`,
		`m:merge`,
	}, []string{"t>i", "i.true>a", "i.false>b", "t>c", "a>m", "b>m", "c>m"})
	res, rec := run(t, engine.Options{}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatalf("run failed: %v", *res.Error)
	}
	want := map[string]any{"a": map[string]any{"big": 9}, "c": map[string]any{"n": 9}}
	if got := res.NodeOutputs["m"]; !reflect.DeepEqual(got, want) {
		t.Errorf("merge = %v; want %v (the untaken branch left out)", got, want)
	}
	if got := rec.of("m"); !slices.Equal(got, []string{"m:running", "m:success"}) {
		t.Errorf("merge events = %v", got)
	}
}

func TestMergeWaitsForRunningBranchInCompletionOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := build(t, []string{
			`t:manual_trigger`,
			`slow:delay {"duration":3}`, `fast:delay {"duration":1}`,
			`s2:set_variable {"key":"slow","value":"{{ $input }}"}`,
			`f2:set_variable {"key":"fast","value":"x"}`,
			`m:merge {"mode":"array"}`,
		}, []string{"t>slow", "t>fast", "slow>s2", "fast>f2", "s2>m", "f2>m"})
		start := time.Now()
		res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
		if !res.Success {
			t.Fatalf("run failed: %v", *res.Error)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("run took %v; want 3s (branches side by side)", d)
		}
		got := res.NodeOutputs["m"].([]any)
		if len(got) != 2 || got[0].(map[string]any)["key"] != "fast" || got[1].(map[string]any)["key"] != "slow" {
			t.Errorf("merge array = %v; want fast then slow", got)
		}
	})
}

func TestBranchesRunSideBySide(t *testing.T) {
	t.Parallel()
	p := newProbe()
	w := build(t, []string{`t:manual_trigger`, `a:block`, `b:block`, `m:merge`}, []string{"t>a", "t>b", "a>m", "b>m"})
	done := make(chan *engine.Result)
	go func() {
		res, _ := run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: w})
		done <- res
	}()
	// Both blocking nodes start before either is released.
	got := []string{<-p.started, <-p.started}
	slices.Sort(got)
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("started %v", got)
	}
	close(p.release)
	if res := <-done; !res.Success || len(res.NodeOutputs["m"].(map[string]any)) != 2 {
		t.Errorf("result = %+v", res)
	}
}

func TestDisabledNodeIsSkipped(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `a:hook!`, `b:hook`, `c:hook`}, []string{"t>a", "a>b", "t>c"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(*res.Error)
	}
	wantTrace(t, rec, "t:running", "t:success", "a:skipped", "b:skipped", "c:running", "c:success")
}

func TestErrorRoute(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `x:boom {"code":"NOPE","message":"bad thing"}`, `h:hook`, `ok:hook`},
		[]string{"t>x", "x.error>h", "x.out>ok"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatalf("run failed: %v", *res.Error)
	}
	want := map[string]any{"error": "bad thing", "code": "NOPE", "node_id": "x"}
	if got := res.NodeOutputs["h"]; !reflect.DeepEqual(got, want) {
		t.Errorf("error route delivered %v; want %v", got, want)
	}
	wantTrace(t, rec, "t:running", "t:success", "x:running", "x:error(NOPE)", "ok:skipped", "h:running", "h:success")
	if res.NodeStatus["x"] != engine.StatusError {
		t.Errorf("status of x = %v", res.NodeStatus["x"])
	}
}

func TestFailureWithoutRouteFailsRun(t *testing.T) {
	t.Parallel()
	p := newProbe()
	// The failure fails the run, and the blocked branch is cancelled.
	w := build(t, []string{`t:manual_trigger`, `x:boom {"code":"NOPE"}`, `slow:block`, `after:hook`},
		[]string{"t>x", "t>slow", "x>after"})
	res, rec := run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: w})
	if res.Success || res.Status != "failed" || res.ErrorCode != "NOPE" || res.ErrorNodeID != "x" {
		t.Fatalf("result = %+v; want failed with NOPE at x", res)
	}
	if !strings.Contains(*res.Error, "it broke") {
		t.Errorf("error = %q; want the node's message", *res.Error)
	}
	if got := rec.of("after"); len(got) != 0 {
		t.Errorf("after ran or was skipped after the failure: %v", got)
	}
	if res.NodeStatus["slow"] != engine.StatusError || !slices.Contains(rec.of("slow"), "slow:error(CANCELLED)") {
		t.Errorf("the in-flight branch = %v %v; want error (CANCELLED)", res.NodeStatus["slow"], rec.of("slow"))
	}
}

func TestUndeclaredErrorPortCarriesNothing(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `j:json {"operation":"parse","input_text":"{broken"}`, `h:hook`},
		[]string{"t>j", "j.error>h"})
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
	if res.Success || res.ErrorCode != "INVALID_JSON" {
		t.Errorf("result = %v %v; want the run failed with INVALID_JSON", res.Status, res.ErrorCode)
	}
}

func TestConfigAndExpressionErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		node, code, field string
	}{
		{`x:set_variable {"key":"k","value":"{{ $node.missing.deep }}"}`, "EXPRESSION_ERROR", "value"},
		{`x:set_variable {"key":"k","value":"{{ 1 + }}"}`, "EXPRESSION_ERROR", "value"},
		{`x:set_variable {"key":"k","value":{"a":["{{ $nope }}"]}}`, "EXPRESSION_ERROR", "value"},
		{`x:delay {"duration":"soon"}`, "INVALID_CONFIG", "duration"},
		{`x:delay {"duration":"{{ 5 }}"}`, "INVALID_CONFIG", "duration"},
		{`x:if {"op":"~="}`, "INVALID_CONFIG", "op"},
		{`x:switch {"source_node":"t","cases":[{"match":1,"port":"case_9"}]}`, "INVALID_CONFIG", "cases[0].port"},
		{`x:set_variable {}`, "INVALID_CONFIG", "key"},
	}
	for _, tt := range tests {
		w := build(t, []string{`t:manual_trigger`, tt.node}, []string{"t>x"})
		res, rec := run(t, engine.Options{}, engine.Request{Workflow: w})
		if res.Success || res.ErrorCode != tt.code || res.ErrorNodeID != "x" || !strings.Contains(*res.Error, tt.field) {
			t.Errorf("%s: result %v %q %q; want %s naming %s", tt.node, res.Status, res.ErrorCode, errText(res), tt.code, tt.field)
		}
		if got := rec.of("x"); !slices.Equal(got, []string{"x:running", "x:error(" + tt.code + ")"}) {
			t.Errorf("%s: events %v", tt.node, got)
		}
	}
}

func errText(res *engine.Result) string {
	if res.Error == nil {
		return ""
	}
	return *res.Error
}

func TestRefusedWorkflows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		nodes      []string
		edges      []string
		code       string
		validation bool
	}{
		{"unknown type", []string{`t:manual_trigger`, `x:teleport`}, []string{"t>x"}, engine.CodeInvalidWorkflow, true},
		{"cycle", []string{`t:manual_trigger`, `a:hook`, `b:hook`}, []string{"t>a", "a>b", "b>a"}, engine.CodeInvalidWorkflow, true},
		{"two wires into one input", []string{`t:manual_trigger`, `a:hook`, `b:hook`, `c:hook`}, []string{"t>a", "t>b", "a>c", "b>c"}, engine.CodeInvalidWorkflow, true},
		{"edge to a missing node", []string{`t:manual_trigger`}, []string{"t>ghost"}, engine.CodeInvalidWorkflow, true},
		{"nested loop", []string{`t:manual_trigger {"mock_payload":[1]}`, `outer:loop {"source_node":"t"}`, `inner:loop {"source_node":"t"}`, `b:hook`},
			[]string{"t>outer", "outer.each_item>inner", "inner.each_item>b"}, engine.CodeNestedLoop, false},
	}
	for _, tt := range tests {
		p := newProbe()
		res, rec := run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: build(t, tt.nodes, tt.edges)})
		if res.Success || res.ErrorCode != tt.code {
			t.Errorf("%s: result %v %q %q; want refused with %s", tt.name, res.Status, res.ErrorCode, errText(res), tt.code)
		}
		if (len(res.ValidationErrors) > 0) != tt.validation {
			t.Errorf("%s: validation_errors = %v", tt.name, res.ValidationErrors)
		}
		if len(rec.trace()) != 0 || len(res.NodeOutputs) != 0 {
			t.Errorf("%s: nodes ran: %v", tt.name, rec.trace())
		}
	}
}

func TestNestedLoopErrorNamesBoth(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger {"mock_payload":[1]}`, `outer:loop {"source_node":"t"}`, `inner:loop {"source_node":"t"}`, `b:hook`},
		[]string{"t>outer", "outer.each_item>inner", "inner.each_item>b"})
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
	if msg := errText(res); !strings.Contains(msg, "outer") || !strings.Contains(msg, "inner") {
		t.Errorf("error %q; want both loops named", msg)
	}
	// A disabled inner loop is ignored: it is a skipped node of the body.
	w = build(t, []string{`t:manual_trigger {"mock_payload":[1,2]}`, `outer:loop {"source_node":"t"}`, `inner:loop! {"source_node":"t"}`, `b:hook`, `c:hook`},
		[]string{"t>outer", "outer.each_item>inner", "inner.each_item>b", "outer.each_item>c"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatalf("disabled inner loop: %v", errText(res))
	}
	if got := rec.of("b"); !slices.Equal(got, []string{"b:skipped@0", "b:skipped@1"}) {
		t.Errorf("body after a disabled loop: %v", got)
	}
}

func TestLoopBodyOverlapRefused(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger {"mock_payload":[1]}`, `l1:loop {"source_node":"t"}`, `l2:loop {"source_node":"t"}`, `m:merge`},
		[]string{"t>l1", "t>l2", "l1.each_item>m", "l2.each_item>m"})
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
	if res.ErrorCode != engine.CodeLoopOverlap || !strings.Contains(errText(res), "l1") || !strings.Contains(errText(res), "l2") {
		t.Errorf("result %q %q; want LOOP_BODY_OVERLAP naming both loops", res.ErrorCode, errText(res))
	}
}

func TestLoopInsideBranch(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":{"rows":[{"v":1},{"v":2},{"v":3}],"go":true}}`,
		`i:if {"condition":"{{ $input.go }}"}`,
		`l:loop {"source_node":"t","array_field":"rows","item_var":"row","index_var":"n"}`,
		`double:transform_data {"source_node":"l","mappings":[{"from":"/row/v","to":"v"},{"from":"/n","to":"n"}]}`,
		`tag:set_variable {"key":"last","value":"{{ $vars.row.v * 2 }}-{{ $vars.n }}"}`,
		`o:output {"source_node":"l","field":"all_results"}`,
		`no:hook`,
	}, []string{"t>i", "i.true>l", "i.false>no", "l.each_item>double", "double>tag", "l.done>o"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(errText(res))
	}
	wantTrace(t, rec,
		"t:running", "t:success", "i:running", "i:success", "no:skipped", "l:running",
		"double:running@0", "double:success@0", "tag:running@0", "tag:success@0",
		"double:running@1", "double:success@1", "tag:running@1", "tag:success@1",
		"double:running@2", "double:success@2", "tag:running@2", "tag:success@2",
		"l:success", "o:running", "o:success")
	all := out(res, "o", "value").([]any)
	if len(all) != 3 || all[2].(map[string]any)["value"] != "6-2" {
		t.Errorf("all_results = %v; want the last body node's output per iteration", all)
	}
	if got := out(res, "l", "total"); got != 3 {
		t.Errorf("total = %v", got)
	}
	if got := out(res, "l", "done"); got != true {
		t.Errorf("done = %v", got)
	}
	if res.NodeTimings["double"].Runs != 3 {
		t.Errorf("body timing runs = %d; want 3", res.NodeTimings["double"].Runs)
	}
}

func TestLoopIterationOutputAndVars(t *testing.T) {
	t.Parallel()
	p := newProbe()
	var seen []any
	p.onRun = func(_ string, in any) { seen = append(seen, in) }
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":["a","b"]}`,
		`l:loop {"source_node":"t","item_var":"letter","index_var":"pos"}`,
		`h:hook`,
	}, []string{"t>l", "l.each_item>h"})
	res, _ := run(t, engine.Options{Registry: testRegistry(p), MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(errText(res))
	}
	first := seen[0].(map[string]any)
	want := map[string]any{"items": []any{"a", "b"}, "total": 2, "item": "a", "index": 0, "letter": "a", "pos": 0, "done": false}
	if !reflect.DeepEqual(first, want) {
		t.Errorf("each_item output = %v; want %v", first, want)
	}
	done := res.NodeOutputs["l"].(map[string]any)
	if done["item"] != "b" || done["index"] != 1 || done["done"] != true {
		t.Errorf("done output = %v", done)
	}
}

func TestLoopEmptyArray(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger {"mock_payload":[]}`, `l:loop {"source_node":"t"}`, `b:hook`, `after:hook`},
		[]string{"t>l", "l.each_item>b", "l.done>after"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(errText(res))
	}
	wantTrace(t, rec, "t:running", "t:success", "l:running", "b:skipped@0", "l:success", "after:running", "after:success")
	if got := out(res, "l", "all_results"); !reflect.DeepEqual(got, []any{}) {
		t.Errorf("all_results = %#v; want []", got)
	}
}

func TestErrorRouteInsideLoopBody(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":[1,2,3]}`,
		`l:loop {"source_node":"t"}`,
		`i:if {"lhs":"{{ $vars.item }}","op":"==","rhs":"2"}`,
		`x:boom {"code":"BAD_ITEM"}`,
		`fix:set_variable {"key":"fixed","value":"{{ $input.code }}"}`,
		`fine:set_variable {"key":"fine","value":"{{ $vars.item }}"}`,
		`after:hook`,
	}, []string{"t>l", "l.each_item>i", "i.true>x", "x.error>fix", "i.false>fine", "l.done>after"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatalf("run failed: %v", errText(res))
	}
	all := out(res, "l", "all_results").([]any)
	want := []any{
		map[string]any{"key": "fine", "value": 1},
		map[string]any{"key": "fixed", "value": "BAD_ITEM"},
		map[string]any{"key": "fine", "value": 3},
	}
	if !reflect.DeepEqual(all, want) {
		t.Errorf("all_results = %v; want %v", all, want)
	}
	if got := rec.of("x"); !slices.Equal(got, []string{"x:skipped@0", "x:running@1", "x:error@1(BAD_ITEM)", "x:skipped@2"}) {
		t.Errorf("x events = %v", got)
	}
	if rec.of("after")[1] != "after:success" {
		t.Errorf("after = %v", rec.of("after"))
	}
}

func TestLoopBodyFailureStopsLoop(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":[1,2,3,4]}`,
		`l:loop {"source_node":"t"}`,
		`i:if {"lhs":"{{ $vars.item }}","op":"==","rhs":"2"}`,
		`x:boom {"code":"BAD_ITEM"}`,
		`ok:hook`,
		`after:hook`,
	}, []string{"t>l", "l.each_item>i", "i.true>x", "i.false>ok", "l.done>after"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if res.Success || res.ErrorCode != "BAD_ITEM" || res.ErrorNodeID != "x" {
		t.Fatalf("result %v %q at %q; want BAD_ITEM at x", res.Status, res.ErrorCode, res.ErrorNodeID)
	}
	if got := rec.of("i"); len(got) != 4 { // two iterations, running and success each
		t.Errorf("if events = %v; want iterations 0 and 1 only", got)
	}
	if len(rec.of("after")) != 0 {
		t.Errorf("Done fired after a failure: %v", rec.of("after"))
	}
}

func TestSkippedNodeReferencesInLoop(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":[1,2,3]}`,
		`l:loop {"source_node":"t"}`,
		`i:if {"lhs":"{{ $vars.item }}","op":"!=","rhs":"2"}`,
		`x:transform_data {"source_node":"l","mappings":[{"from":"/item","to":"seen"}]}`,
		`m:merge`,
		`ref:set_variable {"key":"ref","value":"{{ $node.x.seen }}"}`,
		`shown:output {"source_node":"x"}`,
	}, []string{"t>l", "l.each_item>i", "i.true>x", "i.false>m", "x>m", "m>ref", "ref>shown"})
	res, _ := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(errText(res))
	}
	all := out(res, "l", "all_results").([]any)
	// Iteration 1 (item 2) skips x: the expression still reads its old value
	// (1), while Output's source_node sees only this iteration (null).
	got := all[1].(map[string]any)
	if got["value"] != nil || got["type"] != "null" {
		t.Errorf("iteration 1 output = %v; want null (x skipped this iteration)", got)
	}
	refs := res.NodeOutputs["ref"].(map[string]any)
	if refs["value"] != 3 {
		t.Errorf("final ref = %v; want 3", refs)
	}
	// The merge of iteration 1 holds only the if branch that fired, not the
	// x of iteration 0.
	w2 := build(t, []string{
		`t:manual_trigger {"mock_payload":[1,2]}`,
		`l:loop {"source_node":"t"}`,
		`i:if {"lhs":"{{ $vars.item }}","op":"==","rhs":"1"}`,
		`x:transform_data {"source_node":"l","mappings":[{"from":"/item","to":"seen"}]}`,
		`m:merge`,
		`ref:set_variable {"key":"ref","value":"{{ $node.x.seen }}"}`,
	}, []string{"t>l", "l.each_item>i", "i.true>x", "i.false>m", "x>m", "m>ref"})
	res, _ = run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w2})
	all = out(res, "l", "all_results").([]any)
	if want := map[string]any{"key": "ref", "value": 1}; !reflect.DeepEqual(all[1], want) {
		t.Errorf("iteration 1 = %v; want %v (old value through $node)", all[1], want)
	}
	merge := res.NodeOutputs["m"].(map[string]any)
	if _, stale := merge["x"]; stale || len(merge) != 1 {
		t.Errorf("merge in iteration 1 = %v; want only i", merge)
	}
}

func TestStopEndsBranch(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `s:stop {"reason":"enough"}`, `other:hook`}, []string{"t>s", "t>other"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(errText(res))
	}
	if len(rec.of("other")) != 2 || res.NodeStatus["s"] != engine.StatusSuccess {
		t.Errorf("trace %v", rec.trace())
	}
	if _, has := res.NodeOutputs["s"]; has {
		t.Errorf("Stop has an output")
	}
	found := false
	for _, l := range res.Logs {
		found = found || (l.NodeID == "s" && strings.Contains(l.Message, "enough"))
	}
	if !found {
		t.Errorf("the reason is not logged: %v", res.Logs)
	}
}

func TestStopInsideLoopEndsItBetweenIterations(t *testing.T) {
	t.Parallel()
	w := build(t, []string{
		`t:manual_trigger {"mock_payload":[1,2,3,4,5]}`,
		`l:loop {"source_node":"t"}`,
		`i:if {"lhs":"{{ $vars.item }}","op":">=","rhs":"3"}`,
		`s:stop`,
		`work:set_variable {"key":"k","value":"{{ $vars.item }}"}`,
		`after:hook`,
	}, []string{"t>l", "l.each_item>work", "work>i", "i.true>s", "l.done>after"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatal(errText(res))
	}
	if got := out(res, "l", "items"); !reflect.DeepEqual(got, []any{1, 2, 3}) {
		t.Errorf("done items = %v; want the three that ran", got)
	}
	if got := out(res, "l", "total"); got != 5 {
		t.Errorf("total = %v", got)
	}
	if len(rec.of("work")) != 6 || len(rec.of("after")) != 2 {
		t.Errorf("trace %v", rec.trace())
	}
}

func TestCancelBetweenIterations(t *testing.T) {
	t.Parallel()
	p := newProbe()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p.onRun = func(_ string, in any) {
		if in.(map[string]any)["index"] == 2 {
			cancel()
		}
	}
	w := build(t, []string{`t:manual_trigger {"mock_payload":[1,2,3,4,5,6]}`, `l:loop {"source_node":"t"}`, `h:hook`, `after:hook`},
		[]string{"t>l", "l.each_item>h", "l.done>after"})
	rec := &recorder{}
	res := engine.New(engine.Options{Registry: testRegistry(p), Events: rec, MaxParallel: 1}).Run(ctx, engine.Request{Workflow: w})
	if res.Status != "cancelled" || res.ErrorCode != engine.CodeCancelled || res.Success {
		t.Fatalf("result %v %v", res.Status, res.ErrorCode)
	}
	if n := p.count("h"); n != 3 {
		t.Errorf("body ran %d times; want 3 (the loop ends after the iteration that cancelled)", n)
	}
	if len(rec.of("after")) != 0 {
		t.Errorf("Done fired after cancel")
	}
}

func TestCancelStopsRunningNode(t *testing.T) {
	t.Parallel()
	p := newProbe()
	ctx, cancel := context.WithCancel(context.Background())
	w := build(t, []string{`t:manual_trigger`, `b:block`, `after:hook`}, []string{"t>b", "b>after"})
	done := make(chan *engine.Result)
	go func() {
		done <- engine.New(engine.Options{Registry: testRegistry(p)}).Run(ctx, engine.Request{Workflow: w})
	}()
	<-p.started
	cancel()
	res := <-done
	if res.Status != "cancelled" || res.NodeStatus["b"] != engine.StatusError || p.count("after") != 0 {
		t.Errorf("result %v, b %v", res.Status, res.NodeStatus["b"])
	}
}

func TestRunTimeLimit(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := build(t, []string{`t:manual_trigger`, `d:delay {"duration":2,"unit":"h"}`}, []string{"t>d"})
		res, _ := run(t, engine.Options{MaxDuration: time.Hour}, engine.Request{Workflow: w})
		if res.ErrorCode != engine.CodeRunTimeout || res.Status != "failed" {
			t.Errorf("result %v %v; want RUN_TIMEOUT", res.Status, res.ErrorCode)
		}
	})
}

func TestDefaultTimeLimitIs24Hours(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := build(t, []string{`t:manual_trigger`, `d1:delay {"duration":20,"unit":"h"}`, `d2:delay {"duration":20,"unit":"h"}`}, []string{"t>d1", "d1>d2"})
		start := time.Now()
		res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
		if res.ErrorCode != engine.CodeRunTimeout || time.Since(start) != 24*time.Hour {
			t.Errorf("result %v after %v; want RUN_TIMEOUT after 24h", res.ErrorCode, time.Since(start))
		}
	})
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		node     string
		success  bool
		attempts int
		elapsed  time.Duration
	}{
		{"retryable error retried until success", `x:flaky {"fail_times":2} retry=3/100`, true, 3, 300 * time.Millisecond},
		{"attempts run out", `x:flaky {"fail_times":5} retry=3/100`, false, 3, 300 * time.Millisecond},
		{"not retryable", `x:flaky {"fail_times":1,"retryable":false,"code":"SMTP_ERROR"} retry=5/100`, false, 1, 0},
		{"retry off", `x:flaky {"fail_times":1}`, false, 1, 0},
		{"retry-after beats backoff", `x:flaky {"fail_times":1,"after_ms":5000} retry=2/100`, true, 2, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				p := newProbe()
				w := build(t, []string{`t:manual_trigger`, tt.node}, []string{"t>x"})
				start := time.Now()
				res, rec := run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: w})
				if res.Success != tt.success || p.count("x") != tt.attempts || res.NodeTimings["x"].Attempts != tt.attempts {
					t.Errorf("success %v after %d attempts (timing says %d); want %v after %d",
						res.Success, p.count("x"), res.NodeTimings["x"].Attempts, tt.success, tt.attempts)
				}
				if d := time.Since(start); d != tt.elapsed {
					t.Errorf("took %v; want %v of backoff", d, tt.elapsed)
				}
				if got := rec.of("x"); got[0] != "x:running" || len(got) != 2 {
					t.Errorf("events %v; want one running and one outcome", got)
				}
			})
		})
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `x:panic`}, []string{"t>x"})
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
	if res.ErrorCode != node.CodeInternal || strings.Contains(errText(res), "test panic") {
		t.Errorf("result %q %q; want INTERNAL_ERROR without the panic text", res.ErrorCode, errText(res))
	}
}

func TestMasking(t *testing.T) {
	t.Parallel()
	const typed, saved, known = "typed-pass-123", "saved-key-456", "known-789"
	w := build(t, []string{
		`t:manual_trigger`,
		`x:secretive {"password":"` + typed + `","api_key":{"credential":"prod"},"note":"mentions ` + known + `"}`,
		`y:set_variable {"key":"copy","value":"{{ $node.x.pw }}/{{ $node.x.key }}"}`,
		`z:secretive {"password":"{{ 'dyn' + 'amic-secret' }}","api_key":"plain-typed-key","note":"fail"}`,
	}, []string{"t>x", "x>y", "y>z"})
	res, _ := run(t, engine.Options{Credentials: memCreds{"prod": saved}}, engine.Request{Workflow: w, Secrets: []string{known}})
	b, _ := json.Marshal(res)
	for _, s := range []string{typed, saved, known, "dynamic-secret", "plain-typed-key"} {
		if strings.Contains(string(b), s) {
			t.Errorf("result shows %q:\n%s", s, b)
		}
	}
	if got := out(res, "y", "value"); got != engine.Mask+"/"+engine.Mask {
		t.Errorf("copied secrets = %v; want masked", got)
	}
	if res.ErrorCode != "AUTH" || !strings.Contains(errText(res), engine.Mask) {
		t.Errorf("error = %q; want AUTH with the key masked", errText(res))
	}
}

func TestCredentialWithoutStore(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `x:secretive {"api_key":{"credential":"prod"}}`}, []string{"t>x"})
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w})
	if res.ErrorCode != node.CodeInvalidConfig || !strings.Contains(errText(res), "api_key") {
		t.Errorf("result %q %q", res.ErrorCode, errText(res))
	}
}

func TestPersistentVariables(t *testing.T) {
	t.Parallel()
	store := &memVars{}
	w := build(t, []string{`t:manual_trigger`, `s:set_variable {"key":"count","value":41,"persist":true}`}, []string{"t>s"})
	if res, _ := run(t, engine.Options{Variables: store}, engine.Request{Workflow: w}); !res.Success {
		t.Fatal(errText(res))
	}
	w2 := build(t, []string{`t:manual_trigger`, `g:get_variable {"key":"count","persist":true}`, `o:output {"field":"value"}`}, []string{"t>g", "g>o"})
	res, _ := run(t, engine.Options{Variables: store}, engine.Request{Workflow: w2})
	if got := out(res, "o", "value"); got != 41 {
		t.Errorf("persisted value = %v; want 41", got)
	}
	res, _ = run(t, engine.Options{}, engine.Request{Workflow: w})
	found := false
	for _, l := range res.Logs {
		found = found || strings.Contains(l.Message, "no database is attached")
	}
	if !res.Success || !found {
		t.Errorf("persist without a store: %v, logs %v", res.Status, res.Logs)
	}
	store.fail = context.DeadlineExceeded
	res, _ = run(t, engine.Options{Variables: store}, engine.Request{Workflow: w})
	if res.ErrorCode != node.CodeDBError {
		t.Errorf("failed save: %q; want DB_ERROR", res.ErrorCode)
	}
}

func TestVariablesAcrossParallelBranches(t *testing.T) {
	t.Parallel()
	var nodes, edges []string
	nodes = append(nodes, `t:manual_trigger`, `m:merge`)
	for i := range 12 {
		id := fmt.Sprintf("v%d", i)
		nodes = append(nodes, id+`:set_variable {"key":"`+id+`","value":"{{ len($vars) }}"}`)
		edges = append(edges, "t>"+id, id+">m")
	}
	nodes = append(nodes, `g:set_variable {"key":"n","value":"{{ len($vars) }}"}`)
	edges = append(edges, "m>g")
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: build(t, nodes, edges)})
	if got := out(res, "g", "value"); got != 12 {
		t.Errorf("variables after 12 parallel sets = %v; want 12", got)
	}
}

func TestEntryNodeInputAndPayload(t *testing.T) {
	t.Parallel()
	p := newProbe()
	var inputs []any
	p.onRun = func(_ string, in any) { inputs = append(inputs, in) }
	w := build(t, []string{`h:hook`}, nil)
	run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: w})
	run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: w, Payload: "event", HasPayload: true})
	if !reflect.DeepEqual(inputs, []any{map[string]any{}, "event"}) {
		t.Errorf("entry inputs = %v; want {} then the payload", inputs)
	}
	w = build(t, []string{`t:manual_trigger {"mock_payload":{"mock":1}}`}, nil)
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w, Payload: map[string]any{"real": 1}, HasPayload: true})
	if got := res.NodeOutputs["t"]; !reflect.DeepEqual(got, map[string]any{"real": 1}) {
		t.Errorf("trigger with a payload emitted %v", got)
	}
}

func TestRunInfo(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `s:set_variable {"key":"r","value":"{{ $run.id }}|{{ $run.workflow_id }}|{{ $run.trigger }}|{{ $run.started_at != '' }}"}`}, []string{"t>s"})
	res, _ := run(t, engine.Options{}, engine.Request{Workflow: w, RunID: "run-7", Trigger: "webhook"})
	if got := out(res, "s", "value"); got != "run-7|w|webhook|true" {
		t.Errorf("$run = %v", got)
	}
}

func TestExecuteWorkflow(t *testing.T) {
	t.Parallel()
	child := parse(t, `{"id":"child","name":"Child","nodes":[
	  {"id":"t","node_type_id":"manual_trigger"},
	  {"id":"o","node_type_id":"output","config":{"field":"x","label":"X"}}],
	  "edges":[{"id":"e","from":"t","from_port":"start","to":"o"}]}`)
	failing := parse(t, `{"id":"failing","name":"F","nodes":[
	  {"id":"t","node_type_id":"manual_trigger"},
	  {"id":"j","node_type_id":"json","config":{"operation":"parse","input_text":"{nope"}}],
	  "edges":[{"id":"e","from":"t","from_port":"start","to":"j"}]}`)
	src := &memWorkflows{m: map[string]*workflow.Workflow{"child": child, "failing": failing}}
	w := build(t, []string{`t:manual_trigger {"mock_payload":{"x":5}}`, `x:execute_workflow {"workflow_id":"child"}`}, []string{"t>x"})
	res, _ := run(t, engine.Options{Workflows: src}, engine.Request{Workflow: w})
	if !res.Success || out(res, "x", "result") != 5 || out(res, "x", "success") != true {
		t.Fatalf("execute_workflow output = %v (%v)", res.NodeOutputs["x"], errText(res))
	}
	w = build(t, []string{`t:manual_trigger`, `x:execute_workflow {"workflow_id":"failing"}`}, []string{"t>x"})
	res, _ = run(t, engine.Options{Workflows: src}, engine.Request{Workflow: w})
	if res.ErrorCode != "WORKFLOW_FAILED" || !strings.Contains(errText(res), "INVALID_JSON") {
		t.Errorf("failing child: %q %q", res.ErrorCode, errText(res))
	}
	w = build(t, []string{`t:manual_trigger`, `x:execute_workflow {"workflow_id":"ghost"}`}, []string{"t>x"})
	res, _ = run(t, engine.Options{Workflows: src}, engine.Request{Workflow: w})
	if res.ErrorCode != engine.CodeWorkflowNotFound {
		t.Errorf("unknown child: %q", res.ErrorCode)
	}
	res, _ = run(t, engine.Options{}, engine.Request{Workflow: w})
	if res.ErrorCode != engine.CodeWorkflowNotFound {
		t.Errorf("no source: %q", res.ErrorCode)
	}
}

func TestExecuteWorkflowRecursionLimit(t *testing.T) {
	t.Parallel()
	self := parse(t, `{"id":"self","name":"Self","nodes":[
	  {"id":"t","node_type_id":"manual_trigger"},
	  {"id":"x","node_type_id":"execute_workflow","config":{"workflow_id":"self"}}],
	  "edges":[{"id":"e","from":"t","from_port":"start","to":"x"}]}`)
	src := &memWorkflows{m: map[string]*workflow.Workflow{"self": self}}
	res, _ := run(t, engine.Options{Workflows: src}, engine.Request{Workflow: self})
	if res.Success || !strings.Contains(errText(res), engine.CodeRecursionLimit) {
		t.Errorf("self-executing workflow: %q", errText(res))
	}
	if n := src.loads.Load(); n != engine.MaxDepth {
		t.Errorf("child runs = %d; want %d (nesting 16 deep, then refused)", n, engine.MaxDepth)
	}
}

func TestRunLog(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `i:if`, `s:stop {"reason":"done"}`}, []string{"t>i", "i.false>s"})
	res, _ := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	var msgs []string
	for _, l := range res.Logs {
		msgs = append(msgs, l.NodeID+": "+l.Message)
		if l.At.IsZero() || l.Level == "" {
			t.Errorf("log entry without time or level: %+v", l)
		}
	}
	want := []string{"i: the If node has no condition; it evaluates as false", "s: branch stopped: done"}
	if !slices.Equal(msgs, want) {
		t.Errorf("logs = %q; want %q", msgs, want)
	}
}

func TestByteAccounting(t *testing.T) {
	t.Parallel()
	p := newProbe()
	e := engine.New(engine.Options{Registry: testRegistry(p), SampleInterval: time.Millisecond})
	w := build(t, []string{`t:manual_trigger {"mock_payload":{"blob":"` + strings.Repeat("x", 100_000) + `"}}`, `b:block`}, []string{"t>b"})
	done := make(chan *engine.Result)
	go func() { done <- e.Run(context.Background(), engine.Request{Workflow: w, RunID: "r1"}) }()
	<-p.started
	live := e.Live()
	if len(live) != 1 || live[0].RunID != "r1" || live[0].WorkflowID != "w" || live[0].LiveBytes <= 0 || len(live[0].Nodes) != 2 {
		t.Fatalf("Live() = %+v", live)
	}
	var trigger engine.LiveNode
	for _, n := range live[0].Nodes {
		if n.NodeID == "t" {
			trigger = n
		}
	}
	if trigger.LiveBytes < 100_000 || trigger.NodeTypeID != "manual_trigger" || trigger.StartedAtMs == 0 {
		t.Errorf("trigger bytes = %+v; want at least the 100 kB payload", trigger)
	}
	if perf := e.LivePerformance(); len(perf) != 1 || perf[0].Status != "running" || perf[0].PeakBytes < 100_000 {
		t.Errorf("LivePerformance() = %+v", perf)
	}
	time.Sleep(5 * time.Millisecond)
	close(p.release)
	res := <-done
	if len(e.Live()) != 0 {
		t.Errorf("finished run still live")
	}
	r := res.Performance
	if r.Status != "success" || r.SampleCount < 2 || len(r.History) != r.SampleCount || r.PeakBytes < r.BaselineBytes ||
		r.PeakBytes < r.FinalBytes || r.MinimumBytes > r.BaselineBytes || r.DeltaBytes != r.FinalBytes-r.BaselineBytes ||
		r.FinalBytes < 100_000 || r.WorkflowID != "w" || r.FinishedAtMs < r.StartedAtMs {
		t.Errorf("performance report = %+v", r)
	}
}

func TestDisabledNodeOfUnknownType(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `x:not_built_yet!`, `after:hook`, `other:hook`}, []string{"t>x", "x>after", "t>other"})
	res, rec := run(t, engine.Options{MaxParallel: 1}, engine.Request{Workflow: w})
	if !res.Success {
		t.Fatalf("run failed: %v", errText(res))
	}
	wantTrace(t, rec, "t:running", "t:success", "x:skipped", "after:skipped", "other:running", "other:success")
}

func TestRunWithoutWorkflow(t *testing.T) {
	t.Parallel()
	res, _ := run(t, engine.Options{}, engine.Request{})
	if res.Success || res.ErrorCode != engine.CodeInvalidWorkflow {
		t.Errorf("result %v %q; want INVALID_WORKFLOW", res.Status, res.ErrorCode)
	}
}

func TestPlanReusedAcrossRegistries(t *testing.T) {
	t.Parallel()
	w := build(t, []string{`t:manual_trigger`, `x:hook`}, []string{"t>x"})
	e1 := engine.New(engine.Options{Registry: testRegistry(newProbe())})
	plan := e1.Prepare(w)
	for range 3 {
		if res := e1.Run(context.Background(), engine.Request{Plan: plan}); !res.Success {
			t.Fatalf("prepared run failed: %v", errText(res))
		}
	}
	// Another engine's registry lacks the hook type: the plan is prepared
	// again with it, and refused.
	e2 := engine.New(engine.Options{})
	if res := e2.Run(context.Background(), engine.Request{Plan: plan}); res.ErrorCode != engine.CodeInvalidWorkflow {
		t.Errorf("plan from another registry: %q; want INVALID_WORKFLOW", res.ErrorCode)
	}
	if len(plan.Findings()) != 0 || len(e2.Prepare(w).Findings()) == 0 {
		t.Errorf("Findings: %v / %v", plan.Findings(), e2.Prepare(w).Findings())
	}
}

// TestResultJSONMatchesEncodingJSON checks the hand-written encoder against
// encoding/json (without HTML escaping) on the same struct.
func TestResultJSONMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	type plain engine.Result // the fields without the MarshalJSON method
	p := newProbe()
	results := []*engine.Result{}
	for _, w := range []*workflow.Workflow{
		build(t, []string{`t:manual_trigger {"mock_payload":{"html":"<b>&</b>","n":1.5e-7,"list":[1,"x\u2028"]}}`, `s:set_variable {"key":"k","value":"{{ $input.html }}"}`, `i:if`},
			[]string{"t>s", "s>i"}),
		build(t, []string{`t:manual_trigger`, `x:boom {"code":"NOPE"}`}, []string{"t>x"}),
		build(t, []string{`t:manual_trigger`, `x:teleport`}, []string{"t>x"}),
	} {
		res, _ := run(t, engine.Options{Registry: testRegistry(p)}, engine.Request{Workflow: w})
		results = append(results, res)
	}
	results[0].Logs = append(results[0].Logs, engine.LogEntry{Level: "info", Message: "with fields", Fields: map[string]any{"a": 1, "b": "<x>"}})
	for _, res := range results {
		got, err := res.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode((*plain)(res)); err != nil {
			t.Fatal(err)
		}
		if want := bytes.TrimSuffix(buf.Bytes(), []byte("\n")); !bytes.Equal(got, want) {
			t.Errorf("MarshalJSON =\n%s\nwant\n%s", got, want)
		}
	}
}
