package command

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

func TestNodePoolCommands(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	spec := writeSpec(t, "pool.hcl", `
node_pool "gpu" {
  description       = "Nodes with GPUs"
  node_identity_ttl = "12h"
  meta {
    vendor = "acme"
  }
}
`)
	code, out, errOut := cli(t, addr, "node", "pool", "apply", spec)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully applied node pool \"gpu\"!\n", out)

	code, out, errOut = cli(t, addr, "node", "pool", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	golden(t, "node_pool_list", out)

	code, out, errOut = cli(t, addr, "node", "pool", "info", "gpu")
	must.Eq(t, 0, code, must.Sprint(errOut))
	golden(t, "node_pool_info", out)

	code, out, errOut = cli(t, addr, "node", "pool", "nodes", "gpu")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "No nodes\n", out)
	code, out, errOut = cli(t, addr, "node", "pool", "nodes", "-t", "{{range .}}{{.NodePool}}{{end}}", "default")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "default\n", out)

	// A job in the gpu pool is listed there and keeps the pool in use.
	job := writeSpec(t, "gpu.nomad.hcl", `
job "render" {
  type      = "batch"
  node_pool = "gpu"
  group "g" {
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "1s"
      }
    }
  }
}
`)
	code, out, errOut = cli(t, addr, "job", "run", "-detach", job)
	must.Eq(t, 0, code, must.Sprint(errOut, out))
	code, out, errOut = cli(t, addr, "node", "pool", "jobs", "gpu")
	must.Eq(t, 0, code, must.Sprint(errOut))
	golden(t, "node_pool_jobs", out)

	refusals := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"delete in use", []string{"node", "pool", "delete", "gpu"}, `node pool "gpu" has non-terminal jobs in regions: [global]`},
		{"delete built-in", []string{"node", "pool", "delete", "all"}, `deleting built-in node pool "all" is not allowed`},
		{"change built-in", []string{"node", "pool", "apply", writeSpec(t, "d.hcl", "node_pool \"default\" {\n  description = \"x\"\n}\n")}, `modifying node pool "default" is not allowed`},
		{"scheduler config", []string{"node", "pool", "apply", writeSpec(t, "s.hcl", "node_pool \"s\" {\n  scheduler_config {\n    scheduler_algorithm = \"spread\"\n  }\n}\n")}, "SchedulerConfiguration (scheduler_config) is not supported"},
		{"bad ttl", []string{"node", "pool", "apply", writeSpec(t, "t.hcl", "node_pool \"t\" {\n  node_identity_ttl = \"soon\"\n}\n")}, `node_identity_ttl "soon" is not a duration`},
		{"info unknown", []string{"node", "pool", "info", "zzz"}, `No node pool with prefix "zzz" found`},
		{"job in unknown pool", []string{"job", "run", "-detach", writeSpec(t, "j.nomad.hcl", "job \"x\" {\n  node_pool = \"nope\"\n  group \"g\" {\n    task \"t\" {\n      driver = \"mock_driver\"\n    }\n  }\n}\n")}, `job "x" is in nonexistent node pool "nope"`},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, tc.args...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}

	code, out, errOut = cli(t, addr, "node", "pool", "apply", "-json", writeSpec(t, "p.json", `{"Name": "tmp", "NodeIdentityTTL": "1h"}`))
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, out, errOut = cli(t, addr, "node", "pool", "delete", "tmp")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully deleted node pool \"tmp\"!\n", out)
}
