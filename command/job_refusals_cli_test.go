package command

import (
	"testing"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// Against a real agent: run and plan refuse a job with a field nomadq does
// not act on, naming it, and register nothing; what is accepted carries
// the update/migrate warning; a driver no node offers is named in the
// plan's placement failure.
func TestCLI_RefusalsAndWarnings(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()
	refused := jobFile(t, "", "", `vault {
  role = "app"
}`)
	const vault = `job "x" group "g" task "t": field "Vault" is not supported by nomadq`

	t.Run("run refuses", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "run", refused)
		must.Eq(t, 1, code, must.Sprint(out))
		must.StrContains(t, errOut, vault)
	})
	t.Run("plan refuses", func(t *testing.T) {
		// Plan keeps Nomad's exit codes: 255 is an error, 1 means changes.
		code, out, errOut := cli(t, addr, "job", "plan", refused)
		must.Eq(t, 255, code, must.Sprint(out))
		must.StrContains(t, errOut, vault)
	})
	t.Run("init example refused", func(t *testing.T) {
		code, _, errOut := cli(t, addr, "job", "run", "testdata/init_example.nomad.hcl")
		must.Eq(t, 1, code)
		// Its nomad-provider service and its port's "to" (bridge
		// networking) are accepted now; the ui block is not.
		must.StrContains(t, errOut, `field "UI" is not supported by nomadq`)
		must.StrNotContains(t, errOut, `"Services`)
	})
	t.Run("plan names the docker driver and warns", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "plan", "testdata/init_example_accepted.nomad.hcl")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, `Task Group "cache" (failed to place 1 allocation):`)
		must.StrContains(t, out, `* Constraint "missing drivers": 1 nodes excluded by filter`)
		must.StrContains(t, out, `* Infeasible: no node has driver "docker"`)
		must.StrContains(t, out, "Job Warnings:\n"+
			`job "example": update block: rolling updates and canaries are not implemented by nomadq; an update replaces every alloc at once`)
		must.StrNotContains(t, out, "migrate block")
	})
	t.Run("run warns", func(t *testing.T) {
		code, out, errOut := cli(t, addr, "job", "run", "-detach", "testdata/init_example_accepted.nomad.hcl")
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.StrContains(t, out, "Job Warnings:\n")
		must.StrContains(t, out, `job "example": update block: rolling updates and canaries are not implemented by nomadq`)
	})

	c, err := api.NewClient(&api.Config{Address: addr})
	must.NoError(t, err)
	jobs, _, err := c.Jobs().List(nil)
	must.NoError(t, err)
	must.SliceLen(t, 1, jobs, must.Sprint("only the accepted job is registered"))
	must.Eq(t, "example", jobs[0].ID)
}
