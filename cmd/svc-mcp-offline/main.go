// Command svc-mcp-offline is the offline-only build of the svc tool bridge
// (see cmd/svc-mcp): it lists node types, validates workflows and writes
// workflow files, and never contacts a server.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcrun/svc/internal/mcpbridge"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := mcpbridge.Main(ctx, mcpbridge.Program{Name: "svc-mcp-offline", Offline: true}, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
