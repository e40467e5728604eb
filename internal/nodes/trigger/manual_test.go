package trigger

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/node/nodetest"
)

func TestManualSpec(t *testing.T) {
	t.Parallel()
	s := ManualSpec()
	if s.TypeID != "manual_trigger" || !s.Trigger || s.Category != node.CategoryTrigger {
		t.Errorf("ManualSpec() = %q trigger %v category %q; want manual_trigger, a trigger", s.TypeID, s.Trigger, s.Category)
	}
	if len(s.Inputs) != 0 {
		t.Errorf("Inputs = %v; want none", s.Inputs)
	}
	if want := []node.Port{{ID: "start", Label: "Start"}}; !reflect.DeepEqual(s.Outputs, want) {
		t.Errorf("Outputs = %v; want %v", s.Outputs, want)
	}
	if s.DefaultOutput() != "start" {
		t.Errorf("DefaultOutput() = %q; want start", s.DefaultOutput())
	}
	if _, ok := node.Default().Lookup("manual_trigger"); !ok {
		t.Errorf("manual_trigger is not registered")
	}
}

func TestManualOutput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		raw  map[string]any
		want any
	}{
		{"absent", map[string]any{}, map[string]any{}},
		{"blank", map[string]any{"mock_payload": ""}, map[string]any{}},
		{"white space", map[string]any{"mock_payload": "  \n"}, map[string]any{}},
		{"null", map[string]any{"mock_payload": nil}, map[string]any{}},
		{"JSON text", map[string]any{"mock_payload": `{"name": "Ada", "n": 2}`}, map[string]any{"name": "Ada", "n": 2}},
		{"object", map[string]any{"mock_payload": map[string]any{"name": "Ada"}}, map[string]any{"name": "Ada"}},
		{"array text", map[string]any{"mock_payload": "[1, 2]"}, []any{1, 2}},
		{"number text", map[string]any{"mock_payload": "5"}, 5},
	}
	for _, tt := range tests {
		env := nodetest.New(nil)
		res, err := nodetest.Run(t.Context(), ManualSpec(), tt.raw, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(res.Output, tt.want) {
			t.Errorf("%s: Output = %#v; want %#v", tt.name, res.Output, tt.want)
		}
		if res.Port != "" && res.Port != "start" {
			t.Errorf("%s: Port = %q; want start", tt.name, res.Port)
		}
	}
}

func TestManualInvalidPayload(t *testing.T) {
	t.Parallel()
	for _, raw := range []string{"{nope", "hello", `{"a": 1} trailing`, "[1,"} {
		_, err := nodetest.Build(ManualSpec(), map[string]any{"mock_payload": raw})
		var ne *node.Error
		if !errors.As(err, &ne) || ne.Code != node.CodeInvalidConfig || ne.Field != "mock_payload" || !strings.Contains(ne.Error(), "mock_payload") {
			t.Errorf("Build(mock_payload %q) error = %v; want INVALID_CONFIG naming mock_payload", raw, err)
		}
	}
}

// TestManualPayloadWins: the payload a run starts with (a parent Execute
// Workflow's input) replaces mock_payload, even a null one.
func TestManualPayloadWins(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mock    any
		payload any
	}{
		{"object over mock", `{"mock": true}`, map[string]any{"real": 1}},
		{"without mock", nil, "text payload"},
		{"null payload", `{"mock": true}`, nil},
	}
	for _, tt := range tests {
		env := nodetest.New(nil)
		env.PayloadV, env.HasPayload = tt.payload, true
		res, err := nodetest.Run(t.Context(), ManualSpec(), map[string]any{"mock_payload": tt.mock}, env)
		if err != nil {
			t.Errorf("%s: Run error: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(res.Output, tt.payload) {
			t.Errorf("%s: Output = %#v; want the payload %#v", tt.name, res.Output, tt.payload)
		}
	}
}

// TestManualFreshObject: the {} of a blank mock_payload is not shared between
// runs, since a later node could be handed it.
func TestManualFreshObject(t *testing.T) {
	t.Parallel()
	r, err := nodetest.Build(ManualSpec(), nil)
	if err != nil {
		t.Fatalf("Build error: %v", err)
	}
	a, _ := r.Run(t.Context(), nodetest.New(nil))
	b, _ := r.Run(t.Context(), nodetest.New(nil))
	a.Output.(map[string]any)["x"] = 1
	if got := b.Output.(map[string]any); len(got) != 0 {
		t.Errorf("second run Output = %v after changing the first; want {}", got)
	}
}
