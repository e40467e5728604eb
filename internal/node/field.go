package node

// Kind is the type of a config field. It decides how a raw value is read
// (rule 3 of spec/nodes.md) and whether {{ }} expressions are evaluated in it
// (rule 2: text fields yes, number and enumerated fields no).
type Kind int

const (
	// KindText holds text. It accepts expressions; a field that is exactly
	// one expression keeps the value's JSON type, so after evaluation it may
	// hold any value.
	KindText Kind = iota
	// KindNumber is a number, or text that reads as one.
	KindNumber
	// KindInteger is a whole number, or text that reads as one.
	KindInteger
	// KindBoolean is true or false, or text or 0/1 that reads as one.
	KindBoolean
	// KindEnum is one of Field.Enum.
	KindEnum
	// KindAny is any JSON value, kept as it is. Expressions are evaluated in
	// the strings inside it.
	KindAny
	// KindJSON is any JSON value, or text holding one, which is parsed.
	KindJSON
	// KindObject is a JSON object, or text holding one.
	KindObject
	// KindArray is a JSON array, or text holding one.
	KindArray
	// KindList is a list of strings: an array, or comma-separated text.
	KindList
)

// Expressions reports whether {{ }} in the kind's text is evaluated.
func (k Kind) Expressions() bool {
	switch k {
	case KindNumber, KindInteger, KindBoolean, KindEnum:
		return false
	}
	return true
}

// Field describes one config field.
type Field struct {
	Name        string
	Description string
	Kind        Kind
	// Required fields that are blank fail the node with INVALID_CONFIG (or
	// MissingCode) and are reported by the required_config check.
	Required bool
	// Default is used when the field is blank (absent, null or only white
	// space).
	Default any
	// Min and Max bound a number; a valid number outside them is clamped,
	// or refused when Strict is set.
	Min, Max *float64
	Strict   bool
	// Enum lists the allowed values of a KindEnum field; FoldCase accepts
	// them in any letter case and answers with the listed spelling.
	Enum     []string
	FoldCase bool
	// Code replaces INVALID_CONFIG for an unreadable or disallowed value;
	// MissingCode replaces it for a blank required field.
	Code        string
	MissingCode string
	// Secret values are masked in run results and logs.
	Secret bool
	// Credential fields may name a saved credential instead of holding the
	// secret: {"credential": "<id>"}. They are always Secret.
	Credential bool
	// NoExpressions makes {{ }} in the field fail the node instead of being
	// evaluated (a SQL query, where it would be an injection).
	NoExpressions bool
	// Schema holds extra JSON Schema keywords for the field (items,
	// properties, examples).
	Schema map[string]any
}

// Bound returns a pointer to f, for Field.Min and Field.Max.
func Bound(f float64) *float64 { return &f }

// InputSchema returns the JSON Schema (Draft 7) of the spec's config fields.
func (s *Spec) InputSchema() map[string]any {
	props := make(map[string]any, len(s.Fields))
	required := []string{}
	for _, f := range s.Fields {
		props[f.Name] = f.schema()
		if f.Required {
			required = append(required, f.Name)
		}
	}
	return map[string]any{
		"$schema":              "http://json-schema.org/draft-07/schema#",
		"type":                 "object",
		"properties":           props,
		"required":             required,
		"additionalProperties": true,
	}
}

func (f Field) schema() map[string]any {
	m := map[string]any{}
	switch f.Kind {
	case KindText:
		m["type"] = "string"
	case KindNumber:
		m["type"] = "number"
	case KindInteger:
		m["type"] = "integer"
	case KindBoolean:
		m["type"] = "boolean"
	case KindEnum:
		m["type"] = "string"
		enum := make([]any, len(f.Enum))
		for i, e := range f.Enum {
			enum[i] = e
		}
		m["enum"] = enum
	case KindAny:
	case KindJSON:
	case KindObject:
		m["type"] = []any{"object", "string"}
	case KindArray:
		m["type"] = []any{"array", "string"}
	case KindList:
		m["type"] = []any{"array", "string"}
		m["items"] = map[string]any{"type": "string"}
	}
	if f.Description != "" {
		m["description"] = f.Description
	}
	if f.Default != nil {
		m["default"] = f.Default
	}
	if f.Min != nil {
		m["minimum"] = *f.Min
	}
	if f.Max != nil {
		m["maximum"] = *f.Max
	}
	if f.Kind.Expressions() && !f.NoExpressions {
		m["x-svc-expression"] = true
	}
	if f.Secret || f.Credential {
		m["writeOnly"] = true
		m["x-svc-secret"] = true
	}
	if f.Credential {
		m["x-svc-credential"] = true
	}
	for k, v := range f.Schema {
		m[k] = v
	}
	return m
}
