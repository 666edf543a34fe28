package command

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
	"github.com/nomadq/nomadq/agent/config"
)

func TestVarCommands(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()

	code, out, errOut := cli(t, addr, "var", "put", "-out", "none", "app/db", "user=admin", "pass=s3cret")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrHasPrefix(t, `Created variable "app/db" with modify index `, out)

	// Without -force the variable must not exist yet.
	code, _, errOut = cli(t, addr, "var", "put", "app/db", "user=other")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Check-and-Set conflict")
	must.StrContains(t, errOut, "add the -force or -check-index=")

	code, out, errOut = cli(t, addr, "var", "get", "-out", "table", "app/db")
	must.Eq(t, 0, code, must.Sprint(errOut))
	// The index depends on how many entries the agent wrote before.
	golden(t, "var_get_table", regexp.MustCompile(`Check Index = \d+`).ReplaceAllString(out, "Check Index = <N>"))

	code, out, _ = cli(t, addr, "var", "get", "-item", "pass", "app/db")
	must.Eq(t, 0, code)
	must.Eq(t, "s3cret", out)

	// The HCL form is a specification put reads back, its modify index
	// the check-and-set index.
	code, hclOut, errOut := cli(t, addr, "var", "get", "-out", "hcl", "app/db")
	must.Eq(t, 0, code, must.Sprint(errOut))
	spec := writeSpec(t, "db.hcl", hclOut)
	code, out, errOut = cli(t, addr, "var", "put", "-out", "json", "@"+spec, "pass=", "port=5432")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `"port": "5432"`)
	must.StrNotContains(t, out, "s3cret", must.Sprint(`"pass=" removes the item`))

	code, _, errOut = cli(t, addr, "var", "put", "-out", "none", "-force", "app/web", "k=v")
	must.Eq(t, 0, code, must.Sprint(errOut))
	code, out, _ = cli(t, addr, "var", "list", "-out", "table")
	must.Eq(t, 0, code)
	golden(t, "var_list_table", out)
	code, out, _ = cli(t, addr, "var", "list", "-out", "terse", "app/w")
	must.Eq(t, 0, code)
	must.Eq(t, "app/web\n", out)

	code, _, errOut = cli(t, addr, "var", "purge", "-check-index", "1", "app/web")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Check-and-Set conflict")
	code, out, _ = cli(t, addr, "var", "purge", "app/web")
	must.Eq(t, 0, code)
	must.Eq(t, "Successfully purged variable \"app/web\"!\n", out)

	refusals := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"get missing", []string{"var", "get", "nope"}, "Variable not found"},
		{"get bad out", []string{"var", "get", "-out", "yaml", "app/db"}, `Invalid value for "-out"`},
		{"template without go-template", []string{"var", "get", "-out", "json", "-template", "{{.Path}}", "app/db"}, "only valid when using 'go-template'"},
		{"put without data", []string{"var", "put", "app/x"}, "Must supply data"},
		{"put bad path", []string{"var", "put", "-force", "bad path", "k=v"}, `invalid path "bad path"`},
		{"put bad kv", []string{"var", "put", "app/x", "novalue"}, `"novalue" is not key=value`},
		{"wildcard namespace", []string{"var", "get", "-namespace", "*", "app/db"}, "wildcard namespace"},
		{"list bad out", []string{"var", "list", "-out", "hcl"}, `valid values are [go-template, json, table, terse]`},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := cli(t, addr, tc.args...)
			must.Eq(t, 1, code)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
}

func TestOperatorAPICommand(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()

	code, out, errOut := run(t, `{"Items":{"k":"v"}}`, "operator", "api", "-address", addr, "-X", "PUT", "/v1/var/api/x")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `"Path":"api/x"`)

	code, out, errOut = run(t, "", "operator", "api", "-address", addr, "-filter", `Path == "api/x"`, "/v1/vars")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, out, `"Path":"api/x"`)

	code, _, errOut = run(t, "", "operator", "api", "-address", addr, "-verbose", "/v1/var/api/x")
	must.Eq(t, 0, code)
	must.StrContains(t, errOut, "> GET /v1/var/api/x")
	must.StrContains(t, errOut, "< HTTP/1.1 200 OK")

	code, _, errOut = run(t, "", "operator", "api", "-address", addr, "-dryrun", "/v1/jobs")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "-dryrun flag is not supported")
	code, _, errOut = run(t, "", "operator", "api", "-address", addr, "-H", "nocolon", "/v1/jobs")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Headers must be in the form 'Key: Value'")
	code, _, errOut = run(t, "", "operator", "api", "-address", addr, "a", "b")
	must.Eq(t, 1, code)
	must.True(t, strings.Contains(errOut, "exactly 1 argument"))
}

// Job templates live in variables under nomad/job-templates/: with
// variables served, `job init -template` and `-list-templates` use them.
func TestJobInit_TemplateFromVariable(t *testing.T) {
	a := agenttest.New(t, func(c *config.Config) { c.Client.Enabled = false })
	addr := a.HTTPAddr()
	tmpl := writeSpec(t, "tmpl.hcl", "job \"from-template\" {}\n")
	code, _, errOut := cli(t, addr, "var", "put", "-out", "none", "nomad/job-templates/batch", "template=@"+tmpl)
	must.Eq(t, 0, code, must.Sprint(errOut))

	out := filepath.Join(t.TempDir(), "t.nomad.hcl")
	code, stdout, errOut := cli(t, addr, "job", "init", "-template", "batch", out)
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, stdout, "Initializing a job template from batch")
	written, err := os.ReadFile(out)
	must.NoError(t, err)
	must.Eq(t, "job \"from-template\" {}\n", string(written))

	code, stdout, errOut = cli(t, addr, "job", "init", "-list-templates")
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.StrContains(t, stdout, "batch")
}
