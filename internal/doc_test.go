package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocComments checks STYLE.md rule 20: every package and every exported
// name (methods of exported types included) has a doc comment.
func TestDocComments(t *testing.T) {
	t.Parallel()
	pkgDoc := map[string]bool{}
	fset := token.NewFileSet()
	for _, root := range []string{".", "../cmd"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
			if err != nil {
				return err
			}
			dir := filepath.Dir(path)
			if _, seen := pkgDoc[dir]; !seen || f.Doc != nil {
				pkgDoc[dir] = pkgDoc[dir] || f.Doc != nil
			}
			for _, missing := range undocumented(f) {
				t.Errorf("%s: %s has no doc comment", fset.Position(missing.Pos()), name(missing))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for dir, ok := range pkgDoc {
		if !ok {
			t.Errorf("package %s has no package doc comment", dir)
		}
	}
}

func undocumented(f *ast.File) []ast.Node {
	var out []ast.Node
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && !exportedRecv(d.Recv) {
				continue
			}
			out = append(out, d)
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						out = append(out, s)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
							out = append(out, s)
							break
						}
					}
				}
			}
		}
	}
	return out
}

func exportedRecv(fl *ast.FieldList) bool {
	t := fl.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if g, ok := t.(*ast.IndexExpr); ok {
		t = g.X
	}
	id, ok := t.(*ast.Ident)
	return ok && id.IsExported()
}

func name(n ast.Node) string {
	switch d := n.(type) {
	case *ast.FuncDecl:
		return d.Name.Name
	case *ast.TypeSpec:
		return d.Name.Name
	case *ast.ValueSpec:
		return d.Names[0].Name
	}
	return "?"
}
