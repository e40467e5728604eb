package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/svcrun/svc/internal/engine"
	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
	"github.com/svcrun/svc/internal/workflow"
)

// linear10 is a trigger and nine nodes in a row: set_variable,
// transform_data and if, each with expressions.
func linear10(b testing.TB) *workflow.Workflow {
	nodes := []string{`t:manual_trigger {"mock_payload":{"user":{"name":"ada","age":36},"n":1}}`}
	edges := []string{}
	prev := "t"
	for i := range 3 {
		s, tr, f := fmt.Sprintf("s%d", i), fmt.Sprintf("tr%d", i), fmt.Sprintf("if%d", i)
		nodes = append(nodes,
			s+`:set_variable {"key":"k`+fmt.Sprint(i)+`","value":"{{ $vars.region }}-{{ $run.id }}-`+fmt.Sprint(i)+`"}`,
			tr+`:transform_data {"source_node":"t","mappings":[{"from":"/user/name","to":"name"},{"from":"/n","to":"n"}]}`,
			f+`:if {"lhs":"{{ $input.n + `+fmt.Sprint(i)+` }}","op":">=","rhs":"{{ $vars.min }}"}`)
		edges = append(edges, prev+">"+s, s+">"+tr, tr+">"+f)
		prev = f + ".true"
	}
	w := build(b, nodes, edges)
	w.Variables = map[string]any{"region": "eu", "min": 1}
	return w
}

// loop10k is a Loop over 10,000 items with a three-node body.
func loop10k(b testing.TB) *workflow.Workflow {
	items := make([]any, 10_000)
	for i := range items {
		items[i] = map[string]any{"id": i, "name": fmt.Sprintf("item-%d", i)}
	}
	w := build(b, []string{
		`t:manual_trigger`,
		`l:loop {"source_node":"t","array_field":"items"}`,
		`a:transform_data {"source_node":"l","mappings":[{"from":"/item/id","to":"id"},{"from":"/item/name","to":"name"}]}`,
		`b:if {"lhs":"{{ $input.id % 2 }}","op":"==","rhs":"0"}`,
		`c:set_variable {"key":"last","value":"{{ $vars.item.name }}"}`,
		`o:output {"source_node":"l","field":"total"}`,
	}, []string{"t>l", "l.each_item>a", "a>b", "b.true>c", "l.done>o"})
	w.Nodes[0].Config["mock_payload"] = map[string]any{"items": items}
	return w
}

// benchRun runs w over and over, prepared once as a server does for a
// stored workflow, or compiled on every run when cold is set.
func benchRun(b *testing.B, w *workflow.Workflow, nodesPerRun float64, cold bool) {
	e := engine.New(engine.Options{Registry: node.Default()})
	ctx := context.Background()
	req := engine.Request{Plan: e.Prepare(w)}
	if cold {
		req = engine.Request{Workflow: w}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if res := e.Run(ctx, req); !res.Success {
			b.Fatalf("run failed: %v", *res.Error)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/nodesPerRun, "ns/node")
}

// allocsPerNode is reported separately: testing.B reports allocs per run.
func allocsPerNode(b *testing.B, w *workflow.Workflow, nodesPerRun float64) {
	e := engine.New(engine.Options{Registry: node.Default()})
	p := e.Prepare(w)
	avg := testing.AllocsPerRun(20, func() { e.Run(context.Background(), engine.Request{Plan: p}) })
	b.ReportMetric(avg/nodesPerRun, "allocs/node")
}

// BenchmarkLinear10 runs the ten-node linear workflow; ns/node is the cost of
// one node execution, engine overhead included.
func BenchmarkLinear10(b *testing.B) {
	benchRun(b, linear10(b), 10, false)
	allocsPerNode(b, linear10(b), 10)
}

// BenchmarkLinear10Cold also validates and compiles the workflow on every
// run, as a run of a document never prepared does.
func BenchmarkLinear10Cold(b *testing.B) { benchRun(b, linear10(b), 10, true) }

// BenchmarkLoop10k runs a 10,000-item Loop with a three-node body (the If
// passes half the items to the third node: 25,000 body executions).
func BenchmarkLoop10k(b *testing.B) {
	benchRun(b, loop10k(b), 25_000, false)
	allocsPerNode(b, loop10k(b), 25_000)
}

// BenchmarkLinear10Direct runs the nine non-trigger nodes of linear10 and the
// trigger straight through their runners, with configs already evaluated and
// no engine: the nodes' own cost. Linear10 minus this is the engine's
// overhead (scheduling, expressions, events, accounting, result).
func BenchmarkLinear10Direct(b *testing.B) {
	reg := node.Default()
	type step struct {
		r   node.Runner
		env *nodetest.Env
	}
	payload := map[string]any{"user": map[string]any{"name": "ada", "age": 36}, "n": 1}
	mk := func(typ string, cfg map[string]any) node.Runner {
		s, _ := reg.Lookup(typ)
		r, err := nodetest.Build(s, cfg)
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	steps := []node.Runner{mk("manual_trigger", map[string]any{"mock_payload": payload})}
	for i := range 3 {
		steps = append(steps,
			mk("set_variable", map[string]any{"key": fmt.Sprintf("k%d", i), "value": fmt.Sprintf("eu-run-%d", i)}),
			mk("transform_data", map[string]any{"source_node": "t", "mappings": []any{
				map[string]any{"from": "/user/name", "to": "name"}, map[string]any{"from": "/n", "to": "n"}}}),
			mk("if", map[string]any{"lhs": 1 + i, "op": ">=", "rhs": 1}))
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		env := nodetest.New(payload)
		env.Outs["t"] = payload
		for _, r := range steps {
			res, err := r.Run(ctx, env)
			if err != nil {
				b.Fatal(err)
			}
			env.In = res.Output
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/node")
}

// BenchmarkRun3 runs the three-node workflow of the REST load test
// (manual_trigger, set_variable, output) from a prepared plan: the engine's
// share of one synchronous run request.
func BenchmarkRun3(b *testing.B) {
	w := build(b, []string{`t:manual_trigger {"mock_payload":{"greeting":"hello"}}`,
		`s:set_variable {"key":"x","value":"{{ $input.greeting }} {{ $vars.n * 2 }}"}`, `o:output {"field":"value"}`},
		[]string{"t>s", "s>o"})
	e := engine.New(engine.Options{Registry: node.Default()})
	req := engine.Request{Plan: e.Prepare(w), Variables: map[string]any{"n": 20}}
	b.ReportAllocs()
	for b.Loop() {
		if res := e.Run(context.Background(), req); !res.Success {
			b.Fatal(*res.Error)
		}
	}
}
