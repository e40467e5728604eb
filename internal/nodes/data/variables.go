package data

import (
	"context"
	"fmt"

	"github.com/svcrun/svc/internal/node"
	"github.com/svcrun/svc/internal/value"
)

func init() {
	node.Register(SetVariableSpec())
	node.Register(GetVariableSpec())
}

// noStore is logged when persist is on and no database is attached.
const noStore = "persist is on but no database is attached; the variable lives for this run only"

// SetVariableSpec is the Set Variable node: it sets $vars.<key> for the
// rest of the run and, with persist, saves it for later runs.
func SetVariableSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "set_variable",
		DisplayName: "Set Variable",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Sets a workflow variable ($vars.<key>), optionally saved for later runs.",
		Fields: []node.Field{
			{Name: "key", Kind: node.KindText, Required: true},
			{Name: "value", Kind: node.KindAny, Description: "any JSON value; text may hold {{ expressions }}"},
			{Name: "persist", Kind: node.KindBoolean, Default: false, Description: "also save to the database (per workflow)"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output:  node.Object(map[string]any{"key": node.T("string"), "value": node.T("")}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &SetVariable{Key: c.String("key"), Value: c.Value("value"), Persist: c.Bool("persist")}, nil
		},
	}
}

// SetVariable is a configured Set Variable node.
type SetVariable struct {
	Key     string
	Value   any
	Persist bool
}

// Run sets the variable. The log shows its name, type and size only.
func (s *SetVariable) Run(ctx context.Context, env node.Env) (node.Result, error) {
	env.SetVar(s.Key, s.Value)
	env.Logger().Info(fmt.Sprintf("set variable %s (%s, %d bytes)", s.Key, value.TypeName(s.Value), len(value.Encode(s.Value))))
	if s.Persist {
		store := env.Store()
		if store == nil {
			env.Logger().Warn(noStore)
		} else if err := store.VariableSet(ctx, env.WorkflowID(), s.Key, s.Value); err != nil {
			return node.Result{}, &node.Error{Code: node.CodeDBError, Message: "saving variable " + s.Key + " failed", Err: err}
		}
	}
	return node.Result{Output: map[string]any{"key": s.Key, "value": s.Value}}, nil
}

// GetVariableSpec is the Get Variable node: it reads $vars.<key>, falling
// back to the saved value with persist, then to default.
func GetVariableSpec() *node.Spec {
	return &node.Spec{
		TypeID:      "get_variable",
		DisplayName: "Get Variable",
		Category:    node.CategoryUtility,
		Version:     node.BuiltinVersion,
		Author:      node.BuiltinAuthor,
		Description: "Reads a workflow variable, or its saved value, or a default.",
		Fields: []node.Field{
			{Name: "key", Kind: node.KindText, Required: true},
			{Name: "persist", Kind: node.KindBoolean, Default: false, Description: "fall back to the value saved in the database"},
			{Name: "default", Kind: node.KindAny, Description: "value when the variable is not found"},
		},
		Inputs:  []node.Port{node.InPort},
		Outputs: []node.Port{node.OutPort},
		Output:  node.Object(map[string]any{"key": node.T("string"), "value": node.T(""), "found": node.T("boolean")}),
		Enabled: true,
		New: func(c node.Config) (node.Runner, error) {
			return &GetVariable{Key: c.String("key"), Persist: c.Bool("persist"), Default: c.Value("default")}, nil
		},
	}
}

// GetVariable is a configured Get Variable node.
type GetVariable struct {
	Key     string
	Persist bool
	Default any
}

// Run reads the variable.
func (g *GetVariable) Run(ctx context.Context, env node.Env) (node.Result, error) {
	v, found := env.Var(g.Key)
	if !found && g.Persist {
		store := env.Store()
		if store == nil {
			env.Logger().Warn(noStore)
		} else {
			var err error
			if v, found, err = store.VariableGet(ctx, env.WorkflowID(), g.Key); err != nil {
				return node.Result{}, &node.Error{Code: node.CodeDBError, Message: "reading variable " + g.Key + " failed", Err: err}
			}
		}
	}
	if !found {
		v = g.Default
	}
	return node.Result{Output: map[string]any{"key": g.Key, "value": v, "found": found}}, nil
}
