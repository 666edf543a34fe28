package command

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func writeSpec(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	must.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	return path
}

func TestNamespaceCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "namespace", "apply", "-description", "API services", "api-prod")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully applied namespace \"api-prod\"!\n", out)

	spec := writeSpec(t, "ns.hcl", `
name        = "batch"
description = "Batch work"
capabilities {
  enabled_task_drivers = ["raw_exec", "mock_driver"]
  disabled_network_modes = ["bridge"]
}
meta {
  batch_queue_weight = "3"
  owner              = "data"
}
`)
	code, out, errOut = cli(t, addr, "namespace", "apply", spec)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully applied namespace \"batch\"!\n", out)

	jsonSpec := writeSpec(t, "ns.json", `{"Name": "json-ns", "Description": "from JSON"}`)
	code, _, errOut = cli(t, addr, "namespace", "apply", "-json", jsonSpec)
	must.Eq(t, 0, code, must.Sprint(errOut))

	code, out, errOut = cli(t, addr, "namespace", "list")
	must.Eq(t, 0, code, must.Sprint(errOut))
	golden(t, "namespace_list", out)

	code, out, errOut = cli(t, addr, "namespace", "status", "batch")
	must.Eq(t, 0, code, must.Sprint(errOut))
	golden(t, "namespace_status", out)

	code, out, _ = cli(t, addr, "namespace", "status", "-t", "{{.Meta.owner}}", "bat")
	must.Eq(t, 0, code)
	must.Eq(t, "data\n", out)

	refusals := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"quota", []string{"namespace", "apply", "-quota", "small", "q"}, `Quota "small" is not supported`},
		{"node pool config", []string{"namespace", "apply", writeSpec(t, "np.hcl", "name = \"np\"\nnode_pool_config {\n  default = \"gpu\"\n}\n")}, "NodePoolConfiguration (node_pool_config) is not supported"},
		{"unknown key", []string{"namespace", "apply", writeSpec(t, "bad.hcl", "name = \"x\"\ncolour = \"red\"\n")}, `An argument named "colour" is not expected here`},
		{"bad name", []string{"namespace", "apply", "a*b"}, `invalid name "a*b"`},
		{"delete default", []string{"namespace", "delete", "default"}, "can not delete default namespace"},
		{"status unknown", []string{"namespace", "status", "zzz"}, `Namespace "zzz" matched no namespaces`},
		{"ambiguous", []string{"namespace", "status", "a"}, "Prefix matched multiple namespaces"},
	}
	_, _, _ = cli(t, addr, "namespace", "apply", "api-dev")
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, tc.args...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}

	code, out, errOut = cli(t, addr, "namespace", "delete", "json-ns")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Successfully deleted namespace \"json-ns\"!\n", out)
	code, out, _ = cli(t, addr, "namespace", "list", "-t", "{{range .}}{{.Name}} {{end}}")
	must.Eq(t, 0, code)
	must.Eq(t, "api-dev batch api-prod default \n", out)
}
