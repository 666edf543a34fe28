package config

import (
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/depstest"
)

// TestDeps_ConfigStartsNothing keeps the configuration a description:
// loading and checking it must not link the agent, the server or the
// client, whose packages start listeners, Raft and tasks. Test files
// count too (-test).
func TestDeps_ConfigStartsNothing(t *testing.T) {
	deps := depstest.Deps(t, true, ".")
	must.SliceContains(t, deps, "github.com/nomadq/nomadq/agent/config", must.Sprint("the listing should include the package itself"))
	for _, pkg := range []string{
		"github.com/nomadq/nomadq/agent",
		"github.com/nomadq/nomadq/nomad",
		"github.com/nomadq/nomadq/client",
		"github.com/nomadq/nomadq/state",
		"github.com/nomadq/nomadq/scheduler",
		"github.com/nomadq/nomadq/msgpackrpc",
	} {
		for _, d := range deps {
			if depstest.Within(d, pkg) && !strings.HasPrefix(d, "github.com/nomadq/nomadq/agent/config") {
				t.Errorf("agent/config depends on %s; it must start nothing, so it may not link %s", d, pkg)
			}
		}
	}
}
