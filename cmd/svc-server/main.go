// Command svc-server is the svc workflow server and its command-line tools.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/svcrun/svc/internal/app"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
