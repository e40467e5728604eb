package workflow_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/workflow"
)

// testRegistry holds small node types with the shapes the checks care about.
func testRegistry(t testing.TB) *node.Registry {
	t.Helper()
	nop := func(node.Config) (node.Runner, error) {
		return node.RunnerFunc(func(context.Context, node.Env) (node.Result, error) { return node.Result{}, nil }), nil
	}
	in := []node.Port{node.InPort}
	out := []node.Port{node.OutPort}
	reg := node.NewRegistry()
	for _, s := range []*node.Spec{
		{TypeID: "trig", Trigger: true, Outputs: []node.Port{{ID: "start"}}, Enabled: true, New: nop},
		{TypeID: "step", Inputs: in, Outputs: out, Enabled: true, New: nop},
		{TypeID: "tryer", Inputs: in, Outputs: []node.Port{node.OutPort, node.ErrorPort}, Enabled: true, New: nop},
		{TypeID: "join", Inputs: []node.Port{{ID: "in", Arity: node.ArityMany}}, Outputs: out, Enabled: true, New: nop},
		{TypeID: "fanin", Inputs: in, Outputs: out, Enabled: true, New: nop,
			PortsFor: func(cfg map[string]any) ([]node.Port, []node.Port) {
				list, _ := cfg["sources"].([]any)
				if len(list) == 0 {
					return in, out
				}
				var ports []node.Port
				for _, s := range list {
					if id, ok := s.(string); ok {
						ports = append(ports, node.Port{ID: id})
					}
				}
				return ports, out
			}},
		{TypeID: "needs", Inputs: in, Outputs: out, Enabled: true, New: nop, Fields: []node.Field{
			{Name: "key", Kind: node.KindText, Required: true},
			{Name: "api_key", Kind: node.KindText, Required: true, Credential: true},
			{Name: "value", Kind: node.KindAny, Required: true},
		}},
		{TypeID: "off", Inputs: in, Outputs: out, Enabled: false, New: nop},
	} {
		if err := reg.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// doc builds a workflow document from node and edge shorthands:
// "id:type" nodes (":!" suffix marks disabled) and "from.port>to.port" edges.
func doc(nodes []string, edges []string, extra ...string) []byte {
	var ns, es []string
	for _, n := range nodes {
		id, rest, _ := strings.Cut(n, ":")
		typ, cfg, _ := strings.Cut(rest, " ")
		disabled := strings.HasSuffix(typ, "!")
		typ = strings.TrimSuffix(typ, "!")
		if cfg == "" {
			cfg = "{}"
		}
		ns = append(ns, fmt.Sprintf(`{"id":%q,"node_type_id":%q,"disabled":%v,"config":%s}`, id, typ, disabled, cfg))
	}
	for i, e := range edges {
		id := fmt.Sprintf("e%d", i+1)
		if before, after, ok := strings.Cut(e, "="); ok {
			id, e = before, after
		}
		from, to, _ := strings.Cut(e, ">")
		f, fp, _ := strings.Cut(from, ".")
		tn, tp, _ := strings.Cut(to, ".")
		es = append(es, fmt.Sprintf(`{"id":%q,"from":%q,"from_port":%q,"to":%q,"to_port":%q}`, id, f, fp, tn, tp))
	}
	return []byte(fmt.Sprintf(`{"id":"w","name":"W","nodes":[%s],"edges":[%s]%s}`,
		strings.Join(ns, ","), strings.Join(es, ","), strings.Join(extra, "")))
}

func TestValidateClean(t *testing.T) {
	t.Parallel()
	r := workflow.Validate(doc([]string{"t:trig", "a:step", "b:tryer", "j:join"},
		[]string{"t.start>a", "a.out>b", "b.out>j", "b.error>j"}), testRegistry(t))
	if !r.Valid || !r.BestEffort || len(r.Errors) != 0 || len(r.Warnings) != 0 {
		t.Errorf("report = %+v; want valid with no findings", r)
	}
	if !reflect.DeepEqual(r.ChecksRun, workflow.Checks) {
		t.Errorf("checks_run = %v; want %v", r.ChecksRun, workflow.Checks)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"errors":[]`) || !strings.Contains(string(b), `"warnings":[]`) {
		t.Errorf("JSON %s; want empty arrays, not null", b)
	}
}

func TestValidateParse(t *testing.T) {
	t.Parallel()
	r := workflow.Validate([]byte(`{"id":"w","nodes":`), testRegistry(t))
	want := []string{"parse"}
	if r.Valid || len(r.Errors) != 1 || r.Errors[0].Check != "parse" || !reflect.DeepEqual(r.ChecksRun, want) || len(r.Warnings) != 0 {
		t.Errorf("report = %+v; want one parse error and checks_run [parse]", r)
	}
}

type finding struct {
	check, level, node, edge string
}

func TestValidateChecks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		doc  []byte
		want []finding
	}{
		{"duplicate node ids are errors, once per id",
			doc([]string{"t:trig", "a:step", "a:step", "a:step"}, []string{"t.start>a"}),
			[]finding{{"duplicate_ids", "error", "a", ""}}},
		{"duplicate edge ids are warnings",
			doc([]string{"t:trig", "a:step", "b:step"}, []string{"x=t.start>a", "x=a.out>b"}),
			[]finding{{"duplicate_ids", "warning", "", "x"}}},
		{"unknown type is an error",
			doc([]string{"t:trig", "a:nope"}, []string{"t.start>a"}),
			[]finding{{"node_types", "error", "a", ""}}},
		{"unknown type on a disabled node is a warning",
			doc([]string{"t:trig", "a:nope!"}, []string{"t.start>a"}),
			[]finding{{"node_types", "warning", "a", ""}}},
		{"switched-off type is a warning",
			doc([]string{"t:trig", "a:off"}, []string{"t.start>a"}),
			[]finding{{"node_types", "warning", "a", ""}}},
		{"edge to a missing node, first finding only",
			doc([]string{"t:trig", "a:step"}, []string{"t.start>ghost", "a.out>ghost2", "t.start>a"}),
			[]finding{{"graph", "error", "", "e1"}}},
		{"edge from a missing node",
			doc([]string{"t:trig", "a:step"}, []string{"ghost.out>a", "t.start>a"}),
			[]finding{{"graph", "error", "", "e1"}}},
		{"cycle",
			doc([]string{"t:trig", "a:step", "b:step", "c:step"}, []string{"t.start>a", "a.out>b", "b.out>c", "c.out>b"}),
			[]finding{{"graph", "error", "b", ""}, {"port_arity", "error", "b", "e4"}}},
		{"no entry node",
			doc([]string{"a:step", "b:step"}, []string{"a.out>b", "b.out>a"}),
			[]finding{{"graph", "error", "a", ""}, {"triggers", "warning", "", ""}}},
		{"no nodes at all",
			doc(nil, nil),
			[]finding{{"graph", "error", "", ""}, {"triggers", "warning", "", ""}}},
		{"edge into a trigger is not a cycle; it enters an undeclared port",
			doc([]string{"t:trig", "a:step"}, []string{"t.start>a", "a.out>t"}),
			[]finding{{"ports", "warning", "", "e2"}}},
		{"two wires into a single-wire port, first only",
			doc([]string{"t:trig", "a:step", "b:step", "c:step", "d:step"}, []string{"t.start>a", "t.start>b", "a.out>c", "b.out>c", "a.out>d", "b.out>d"}),
			[]finding{{"port_arity", "error", "c", "e4"}}},
		{"many wires into a many port",
			doc([]string{"t:trig", "a:step", "b:step", "j:join"}, []string{"t.start>a", "t.start>b", "a.out>j", "b.out>j"}),
			nil},
		{"dynamic ports from config",
			doc([]string{"t:trig", "a:step", `f:fanin {"sources":["left","right"]}`}, []string{"t.start>a", "a.out>f.left", "t.start>f.right", "a.out>f.middle"}),
			[]finding{{"ports", "warning", "", "e4"}}},
		{"undeclared output and input ports",
			doc([]string{"t:trig", "a:step", "b:step"}, []string{"t.start>a", "a.error>b", "a.out>b.side"}),
			[]finding{{"ports", "warning", "", "e2"}, {"ports", "warning", "", "e3"}}},
		{"an empty from_port is the default output",
			doc([]string{"t:trig", "a:tryer", "b:step"}, []string{"t.>a", "a.>b"}),
			nil},
		{"no enabled trigger",
			doc([]string{"t:trig!", "a:step"}, []string{"t.start>a"}),
			[]finding{{"triggers", "warning", "", ""}}},
		{"required config empty, credential reference fills it",
			doc([]string{"t:trig", `a:needs {"key":"  ","api_key":{"credential":"prod"},"value":false}`, `b:needs {"key":"k","api_key":"","value":null}`, `c:needs! {}`},
				[]string{"t.start>a", "a.out>b", "b.out>c"}),
			[]finding{{"required_config", "warning", "a", ""}, {"required_config", "warning", "b", ""}, {"required_config", "warning", "b", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := workflow.Validate(tt.doc, testRegistry(t))
			var got []finding
			for _, f := range r.Errors {
				got = append(got, finding{f.Check, "error", f.NodeID, f.EdgeID})
			}
			for _, f := range r.Warnings {
				got = append(got, finding{f.Check, "warning", f.NodeID, f.EdgeID})
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("findings = %v; want %v\n%+v", got, tt.want, r)
			}
			if r.Valid != (len(r.Errors) == 0) {
				t.Errorf("valid = %v with %d errors", r.Valid, len(r.Errors))
			}
		})
	}
}

func TestFindingsNeverShowValues(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-SECRET-value"
	d := doc([]string{"t:trig", `a:needs {"key":"","api_key":"` + secret + `","value":"` + secret + `"}`, `b:nope {"password":"` + secret + `"}`},
		[]string{"t.start>a", "a.out>b", "a.out>b." + "x"})
	r := workflow.Validate(d, testRegistry(t))
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), secret) {
		t.Errorf("report shows a config value: %s", b)
	}
	if len(r.Errors) == 0 || len(r.Warnings) == 0 {
		t.Errorf("report = %s; want findings", b)
	}
}

func FuzzValidate(f *testing.F) {
	f.Add(designExample)
	f.Add(string(doc([]string{"t:trig", "a:step", "b:tryer", "j:join", `f:fanin {"sources":["x"]}`}, []string{"t.start>a", "a.out>b", "b.out>j", "b.error>j", "j.out>f.x", "f.out>a"})))
	f.Add(string(doc([]string{"a:step", "a:needs"}, []string{"a.out>a", "x=a.>b"})))
	reg := testRegistry(f)
	f.Fuzz(func(t *testing.T, data string) {
		r := workflow.Validate([]byte(data), reg)
		if r.Valid != (len(r.Errors) == 0) {
			t.Fatalf("valid = %v with errors %v", r.Valid, r.Errors)
		}
		if len(r.ChecksRun) != 1 && len(r.ChecksRun) != len(workflow.Checks) {
			t.Fatalf("checks_run = %v", r.ChecksRun)
		}
		for _, f := range append(r.Errors, r.Warnings...) {
			if f.Check == "" || f.Message == "" {
				t.Fatalf("finding without check or message: %+v", f)
			}
		}
	})
}
