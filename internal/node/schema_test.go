package node_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/svcrun/svc/internal/node"
	_ "github.com/svcrun/svc/internal/nodes/builtin"
)

// catalogKeys are the keys of a catalog entry (GET /api/nodes).
var catalogKeys = []string{
	"author", "description", "display_name", "dynamic_ports", "enabled", "input_schema",
	"is_plugin", "node_type", "output_schema", "ports", "trigger_capable", "type_id", "version",
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// compileDraft7 compiles a schema (given as Go values) as Draft 7.
func compileDraft7(url string, schema any) (*jsonschema.Schema, error) {
	doc, err := roundTrip(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// roundTrip converts a Go value to what jsonschema reads: decoded JSON.
func roundTrip(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

func builtinSpecs(t *testing.T) []*node.Spec {
	t.Helper()
	var out []*node.Spec
	for _, s := range node.Default().Specs() {
		if s.Plugin {
			continue
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		t.Fatal("node.Default() holds no built-in specs")
	}
	return out
}

func TestBuiltinSchemasCompile(t *testing.T) {
	t.Parallel()
	for _, s := range builtinSpecs(t) {
		d := s.Descriptor()
		for name, schema := range map[string]map[string]any{"input_schema": d.InputSchema, "output_schema": d.OutputSchema} {
			if v, ok := schema["$schema"]; ok && v != "http://json-schema.org/draft-07/schema#" {
				t.Errorf("%s %s: $schema = %v; want the Draft 7 URI", s.TypeID, name, v)
			}
			if _, err := compileDraft7("mem:///"+s.TypeID+"/"+name+".json", schema); err != nil {
				t.Errorf("%s %s does not compile as Draft 7: %v", s.TypeID, name, err)
			}
		}
	}
}

// TestBuiltinDefaultsValid: a field's default is valid under the field's own
// schema, so a catalog client can offer it as it is.
func TestBuiltinDefaultsValid(t *testing.T) {
	t.Parallel()
	for _, s := range builtinSpecs(t) {
		props, _ := s.InputSchema()["properties"].(map[string]any)
		for _, f := range s.Fields {
			if f.Default == nil {
				continue
			}
			url := fmt.Sprintf("mem:///%s/fields/%s.json", s.TypeID, f.Name)
			sch, err := compileDraft7(url, props[f.Name])
			if err != nil {
				t.Errorf("%s field %s: schema does not compile: %v", s.TypeID, f.Name, err)
				continue
			}
			def, err := roundTrip(f.Default)
			if err != nil {
				t.Errorf("%s field %s: default %#v: %v", s.TypeID, f.Name, f.Default, err)
				continue
			}
			if err := sch.Validate(def); err != nil {
				t.Errorf("%s field %s: default %#v is invalid under its schema: %v", s.TypeID, f.Name, f.Default, err)
			}
		}
	}
}

func TestBuiltinCatalogEntries(t *testing.T) {
	t.Parallel()
	for _, s := range builtinSpecs(t) {
		// Only the dangerous types start switched off, and each names the
		// flag that switches it on.
		dangerous := s.TypeID == "shell_command" || s.TypeID == "code" || s.TypeID == "database"
		if s.Enabled == dangerous || dangerous != (s.EnableFlag != "") {
			t.Errorf("%s: Enabled = %v, EnableFlag %q; want only shell_command, code and database off, with a flag", s.TypeID, s.Enabled, s.EnableFlag)
		}
		if s.Author == "" || s.Version == "" || s.Description == "" || s.DisplayName == "" || s.Category == "" {
			t.Errorf("%s: author %q version %q description %q display name %q category %q; want all set",
				s.TypeID, s.Author, s.Version, s.Description, s.DisplayName, s.Category)
		}
		if s.Trigger {
			if len(s.Inputs) != 0 {
				t.Errorf("%s: trigger has inputs %v; want none", s.TypeID, s.Inputs)
			}
			if s.Category != node.CategoryTrigger {
				t.Errorf("%s: trigger in category %q; want %q", s.TypeID, s.Category, node.CategoryTrigger)
			}
		}
		if !snakeCase.MatchString(s.TypeID) {
			t.Errorf("%s: type id is not snake_case", s.TypeID)
		}
		for _, f := range s.Fields {
			// An enum without a default is blank until set (Schedule's mode,
			// inferred from the field that is set).
			if f.Kind == node.KindEnum && f.Default != nil {
				def, _ := f.Default.(string)
				if !slices.Contains(f.Enum, def) {
					t.Errorf("%s field %s: default %#v is not among %v", s.TypeID, f.Name, f.Default, f.Enum)
				}
			}
		}
		seen := map[string]bool{}
		for _, p := range slices.Concat(s.Inputs, s.Outputs) {
			if !snakeCase.MatchString(p.ID) || p.Label == "" {
				t.Errorf("%s: port %+v; want a snake_case id and a label", s.TypeID, p)
			}
			if seen[p.ID] {
				t.Errorf("%s: port id %q appears twice", s.TypeID, p.ID)
			}
			seen[p.ID] = true
		}
		if _, err := s.Decode(nil); err != nil && node.CodeOf(err) == node.CodeInternal {
			t.Errorf("%s: Decode(nil) error %v has no code", s.TypeID, err)
		}
	}
}

func TestDescriptorJSON(t *testing.T) {
	t.Parallel()
	for _, s := range builtinSpecs(t) {
		b, err := json.Marshal(s.Descriptor())
		if err != nil {
			t.Fatalf("%s: json.Marshal(Descriptor) error: %v", s.TypeID, err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: descriptor JSON does not read back: %v", s.TypeID, err)
		}
		if got := slices.Sorted(maps.Keys(m)); !slices.Equal(got, catalogKeys) {
			t.Errorf("%s: descriptor keys = %v; want %v", s.TypeID, got, catalogKeys)
		}
		if m["type_id"] != s.TypeID || m["node_type"] != string(s.Category) || m["trigger_capable"] != s.Trigger ||
			m["enabled"] != s.Enabled || m["is_plugin"] != false || m["dynamic_ports"] != (s.PortsFor != nil) {
			t.Errorf("%s: descriptor %s does not match the spec", s.TypeID, b)
		}
		ports, _ := m["ports"].(map[string]any)
		for _, k := range []string{"inputs", "outputs"} {
			if _, ok := ports[k].([]any); !ok {
				t.Errorf("%s: ports.%s = %#v; want a JSON array", s.TypeID, k, ports[k])
			}
		}
		if got := slices.Sorted(maps.Keys(ports)); !slices.Equal(got, []string{"inputs", "outputs"}) {
			t.Errorf("%s: ports keys = %v; want [inputs outputs]", s.TypeID, got)
		}
		if _, ok := m["input_schema"].(map[string]any); !ok {
			t.Errorf("%s: input_schema = %#v; want an object", s.TypeID, m["input_schema"])
		}
		if _, ok := m["output_schema"].(map[string]any); !ok {
			t.Errorf("%s: output_schema = %#v; want an object", s.TypeID, m["output_schema"])
		}
	}
}

// TestDescriptorArity: an input that takes several wires (Merge) shows
// "arity":"many"; every other port leaves arity out.
func TestDescriptorArity(t *testing.T) {
	t.Parallel()
	sawMerge := false
	for _, s := range builtinSpecs(t) {
		b, err := json.Marshal(s.Descriptor().Ports)
		if err != nil {
			t.Fatalf("%s: json.Marshal(Ports) error: %v", s.TypeID, err)
		}
		var ports struct{ Inputs, Outputs []map[string]any }
		if err := json.Unmarshal(b, &ports); err != nil {
			t.Fatalf("%s: ports JSON does not read back: %v", s.TypeID, err)
		}
		for _, p := range ports.Outputs {
			if _, ok := p["arity"]; ok {
				t.Errorf("%s: output port %v shows arity; want it left out", s.TypeID, p)
			}
		}
		for _, p := range ports.Inputs {
			a, ok := p["arity"]
			if s.TypeID == "merge" {
				sawMerge = true
				if a != "many" {
					t.Errorf("merge: input port %v arity = %v; want \"many\"", p, a)
				}
			} else if ok {
				t.Errorf("%s: input port %v shows arity; want it left out", s.TypeID, p)
			}
		}
	}
	if !sawMerge {
		t.Errorf("no merge node type with an input port in the catalog")
	}
}

func TestDescriptorEmptySpec(t *testing.T) {
	t.Parallel()
	d := (&node.Spec{TypeID: "bare"}).Descriptor()
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatalf("json.Marshal error: %v", err)
	}
	want := `"ports":{"inputs":[],"outputs":[]}`
	if !bytes.Contains(b, []byte(want)) {
		t.Errorf("Descriptor JSON = %s; want it to hold %s", b, want)
	}
	if _, err := compileDraft7("mem:///bare/output.json", d.OutputSchema); err != nil {
		t.Errorf("default output schema does not compile: %v", err)
	}
	req, _ := d.InputSchema["required"].([]string)
	if req == nil || len(req) != 0 {
		t.Errorf("input_schema required = %#v; want an empty list", d.InputSchema["required"])
	}
}

func TestInputSchemaFields(t *testing.T) {
	t.Parallel()
	s := &node.Spec{TypeID: "t", Fields: []node.Field{
		{Name: "url", Kind: node.KindText, Required: true},
		{Name: "n", Kind: node.KindInteger, Min: node.Bound(1), Max: node.Bound(9), Default: 3},
		{Name: "method", Kind: node.KindEnum, Enum: []string{"GET", "POST"}, Default: "GET"},
		{Name: "api_key", Kind: node.KindText, Credential: true},
		{Name: "sql", Kind: node.KindText, NoExpressions: true},
		{Name: "tags", Kind: node.KindList},
	}}
	is := s.InputSchema()
	if got := is["required"]; !slices.Equal(got.([]string), []string{"url"}) {
		t.Errorf("required = %v; want [url]", got)
	}
	props := is["properties"].(map[string]any)
	n := props["n"].(map[string]any)
	if n["type"] != "integer" || n["minimum"] != 1.0 || n["maximum"] != 9.0 || n["default"] != 3 {
		t.Errorf("n schema = %v; want integer 1..9 default 3", n)
	}
	if _, ok := n["x-svc-expression"]; ok {
		t.Errorf("n schema = %v; want no x-svc-expression on a number", n)
	}
	if url := props["url"].(map[string]any); url["x-svc-expression"] != true {
		t.Errorf("url schema = %v; want x-svc-expression true", url)
	}
	if sql := props["sql"].(map[string]any); sql["x-svc-expression"] != nil {
		t.Errorf("sql schema = %v; want no x-svc-expression", sql)
	}
	if key := props["api_key"].(map[string]any); key["x-svc-credential"] != true || key["x-svc-secret"] != true || key["writeOnly"] != true {
		t.Errorf("api_key schema = %v; want credential, secret and writeOnly", key)
	}
	if m := props["method"].(map[string]any); !slices.Equal(m["enum"].([]any), []any{"GET", "POST"}) {
		t.Errorf("method schema = %v; want enum [GET POST]", m)
	}
	sch, err := compileDraft7("mem:///t/input.json", is)
	if err != nil {
		t.Fatalf("input schema does not compile: %v", err)
	}
	good, _ := roundTrip(map[string]any{"url": "x", "n": 4, "method": "POST", "tags": []any{"a"}})
	if err := sch.Validate(good); err != nil {
		t.Errorf("Validate(good config) error: %v", err)
	}
	bad, _ := roundTrip(map[string]any{"n": 4})
	if err := sch.Validate(bad); err == nil {
		t.Errorf("Validate(config without url) = nil; want an error")
	}
}
