// Command svc-mcp is the Model Context Protocol tool bridge of svc: an MCP
// client starts it and speaks MCP over its standard input and output. It is
// online (a client of a svc server's REST API) when SVC_URL or --url is set,
// offline otherwise. See internal/mcpbridge and docs/mcp.md.
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
	code := mcpbridge.Main(ctx, mcpbridge.Program{Name: "svc-mcp"}, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
