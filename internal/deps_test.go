// Package internal_test holds checks that span the internal packages.
package internal_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportBoundaries keeps the document, contract, expression and engine
// packages free of HTTP and database code (STYLE.md rule 5): they are used
// by the server, the CLI and the MCP bridge alike.
func TestImportBoundaries(t *testing.T) {
	t.Parallel()
	forbidden := []string{"net/http", "database/sql"}
	for _, pkg := range []string{"workflow", "node", "expr", "engine", "value"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/svcrun/svc/internal/"+pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f {
					t.Errorf("internal/%s depends on %s", pkg, f)
				}
			}
		}
	}
}
