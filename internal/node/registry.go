package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Registry maps type ids to specs. It is a value: the default one is filled
// by the init functions of the node packages, a server clones it and changes
// the clone (plugins, --allow-* flags), tests build one with only the types
// they need. A Registry is safe for concurrent reads; it must not be changed
// while other goroutines read it (swap in a changed clone instead).
type Registry struct {
	specs map[string]*Spec
	// sorted is specs by type id, rebuilt by every change so that readers
	// never write.
	sorted []*Spec
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{specs: map[string]*Spec{}} }

// Add registers a spec. It fails on a duplicate type id or an incomplete spec.
func (r *Registry) Add(s *Spec) error {
	if err := s.check(); err != nil {
		return err
	}
	if _, dup := r.specs[s.TypeID]; dup {
		return fmt.Errorf("node type %q is registered twice", s.TypeID)
	}
	r.specs[s.TypeID] = s
	r.resort()
	return nil
}

// Replace registers a spec in place of the one with its type id (or adds
// it): the server uses it to install a node configured with its flags.
func (r *Registry) Replace(s *Spec) error {
	if err := s.check(); err != nil {
		return err
	}
	r.specs[s.TypeID] = s
	r.resort()
	return nil
}

func (s *Spec) check() error {
	if s.TypeID == "" || s.New == nil {
		return fmt.Errorf("node type %q: spec needs a type id and a constructor", s.TypeID)
	}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		if f.Name == "" || seen[f.Name] {
			return fmt.Errorf("node type %q: field %q is empty or declared twice", s.TypeID, f.Name)
		}
		seen[f.Name] = true
		if f.Kind == KindEnum && len(f.Enum) == 0 {
			return fmt.Errorf("node type %q: enum field %q lists no values", s.TypeID, f.Name)
		}
	}
	if s.Trigger && len(s.Inputs) > 0 {
		return fmt.Errorf("node type %q: a trigger has no input port", s.TypeID)
	}
	return nil
}

// Lookup returns the spec of a type id.
func (r *Registry) Lookup(typeID string) (*Spec, bool) {
	s, ok := r.specs[typeID]
	return s, ok
}

// Specs returns every spec sorted by type id. The slice is shared: callers
// must not change it.
func (r *Registry) Specs() []*Spec { return r.sorted }

func (r *Registry) resort() {
	r.sorted = slices.SortedFunc(maps.Values(r.specs), func(a, b *Spec) int {
		return strings.Compare(a.TypeID, b.TypeID)
	})
}

// Len is the number of registered types.
func (r *Registry) Len() int { return len(r.specs) }

// Clone returns a registry with the same specs that can be changed alone.
func (r *Registry) Clone() *Registry {
	return &Registry{specs: maps.Clone(r.specs), sorted: r.sorted}
}

// SetEnabled switches a type on or off in this registry. It reports false
// when the type is not registered.
func (r *Registry) SetEnabled(typeID string, enabled bool) bool {
	s, ok := r.specs[typeID]
	if !ok {
		return false
	}
	c := *s
	c.Enabled = enabled
	r.specs[typeID] = &c
	r.resort()
	return true
}

var (
	defaultMu  sync.Mutex
	defaultReg = NewRegistry()
)

// Register adds a spec to the default registry. It is meant for init
// functions and panics on a duplicate id, as database/sql.Register does.
func Register(s *Spec) {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	if err := defaultReg.Add(s); err != nil {
		panic(err)
	}
}

// Default returns a clone of the default registry: every type registered by
// the node packages linked into the program.
func Default() *Registry {
	defaultMu.Lock()
	defer defaultMu.Unlock()
	return defaultReg.Clone()
}

// Descriptor is a node type as the catalog (GET /api/nodes) shows it.
type Descriptor struct {
	TypeID         string         `json:"type_id"`
	DisplayName    string         `json:"display_name"`
	NodeType       Category       `json:"node_type"`
	Version        string         `json:"version"`
	Description    string         `json:"description"`
	Author         string         `json:"author"`
	InputSchema    map[string]any `json:"input_schema"`
	OutputSchema   map[string]any `json:"output_schema"`
	Ports          Ports          `json:"ports"`
	DynamicPorts   bool           `json:"dynamic_ports"`
	IsPlugin       bool           `json:"is_plugin"`
	TriggerCapable bool           `json:"trigger_capable"`
	Enabled        bool           `json:"enabled"`
}

// Ports are a descriptor's inputs and outputs.
type Ports struct {
	Inputs  []Port `json:"inputs"`
	Outputs []Port `json:"outputs"`
}

// Descriptor returns the catalog entry of the spec.
func (s *Spec) Descriptor() Descriptor {
	out := s.Output
	if out == nil {
		out = map[string]any{"$schema": "http://json-schema.org/draft-07/schema#"}
	}
	in := s.Inputs
	if in == nil {
		in = []Port{}
	}
	outs := s.Outputs
	if outs == nil {
		outs = []Port{}
	}
	return Descriptor{
		TypeID:         s.TypeID,
		DisplayName:    s.DisplayName,
		NodeType:       s.Category,
		Version:        s.Version,
		Description:    s.Description,
		Author:         s.Author,
		InputSchema:    s.InputSchema(),
		OutputSchema:   out,
		Ports:          Ports{Inputs: in, Outputs: outs},
		DynamicPorts:   s.PortsFor != nil,
		IsPlugin:       s.Plugin,
		TriggerCapable: s.Trigger,
		Enabled:        s.Enabled,
	}
}

// Object is a helper for output schemas: an object with the given
// properties, each a JSON Schema.
func Object(props map[string]any) map[string]any {
	return map[string]any{
		"$schema":    "http://json-schema.org/draft-07/schema#",
		"type":       "object",
		"properties": props,
	}
}

// T is a helper for output schemas: {"type": t} with an optional description.
func T(t string, description ...string) map[string]any {
	m := map[string]any{}
	if t != "" {
		m["type"] = t
	}
	if len(description) > 0 {
		m["description"] = description[0]
	}
	return m
}
