package data

import "github.com/svcrun/svc/internal/node/nodetest"

// srcEnv returns an Env whose node "src" has produced out.
func srcEnv(in, out any) *nodetest.Env {
	env := nodetest.New(in)
	env.Outs["src"] = out
	return env
}
