// Package builtin links every built-in node family into a program: importing
// it registers their types in node.Default.
package builtin

import (
	_ "github.com/svcrun/svc/internal/nodes/action"
	_ "github.com/svcrun/svc/internal/nodes/data"
	_ "github.com/svcrun/svc/internal/nodes/database"
	_ "github.com/svcrun/svc/internal/nodes/email"
	_ "github.com/svcrun/svc/internal/nodes/files"
	_ "github.com/svcrun/svc/internal/nodes/flow"
	_ "github.com/svcrun/svc/internal/nodes/logic"
	_ "github.com/svcrun/svc/internal/nodes/process"
	_ "github.com/svcrun/svc/internal/nodes/trigger"
)
