package jobspec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shoenig/test/must"
)

func TestParse_NestingTooDeep(t *testing.T) {
	const n = 5000
	cases := []struct {
		name string
		src  string
		at   string
	}{
		{
			name: "lists in an attribute",
			src:  `job "x" { meta = { a = ` + strings.Repeat("[", n) + strings.Repeat("]", n) + ` } }`,
			at:   "x.nomad.hcl:1,122-123",
		},
		{
			name: "blocks in a free-form config",
			src:  "job \"x\" {\n group \"g\" {\n task \"t\" {\n config " + strings.Repeat("{\n a ", n) + strings.Repeat("}\n", n) + "}\n}\n}\n",
			at:   "x.nomad.hcl:101,4-5",
		},
		{
			name: "objects in a free-form config",
			src:  "job \"x\" {\n group \"g\" {\n task \"t\" {\n config {\n a = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n}\n}\n}\n}\n",
			at:   "x.nomad.hcl:5,294-295",
		},
		{
			name: "parentheses",
			src:  "job \"x\" {\n meta = {\n a = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n}\n}\n",
			at:   "x.nomad.hcl:3,104-105",
		},
		{
			name: "template interpolations",
			src:  "job \"x\" {\n meta = {\n a = \"" + strings.Repeat("${", n) + "1" + strings.Repeat("}", n) + "\"\n}\n}\n",
			at:   "x.nomad.hcl:3,",
		},
		{
			name: "unary operators",
			src:  "job \"x\" {\n meta = {\n a = " + strings.Repeat("!", n) + "true\n}\n}\n",
			at:   "x.nomad.hcl:3,",
		},
		{
			name: "JSON objects in a config",
			src:  `{"job": {"x": {"group": {"g": {"task": {"t": {"config": ` + strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) + `}}}}}}}`,
			at:   "x.nomad.hcl:1,522-523",
		},
		{
			name: "JSON lists",
			src:  `{"job": {"x": {"meta": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}}`,
			at:   "x.nomad.hcl:1,121-122",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseWithConfig(&ParseConfig{Path: "x.nomad.hcl", Body: []byte(tc.src)})
			must.ErrorContains(t, err, tc.at)
			must.ErrorContains(t, err, "Nesting too deep; Blocks, objects, lists, parentheses and expressions may nest at most 100 levels")
		})
	}
}

func TestParse_NestingAtTheLimit(t *testing.T) {
	// job, group, task and config take four levels.
	inner := MaxNesting - 4
	src := "job \"x\" {\n group \"g\" {\n task \"t\" {\n driver = \"raw_exec\"\n config {\n a = " +
		strings.Repeat("[", inner) + strings.Repeat("]", inner) + "\n}\n}\n}\n}\n"
	job, err := ParseWithConfig(&ParseConfig{Path: "x.nomad.hcl", Body: []byte(src)})
	must.NoError(t, err)
	must.NotNil(t, job.TaskGroups[0].Tasks[0].Config["a"])

	deeper := strings.Replace(src, "= [", "= [[", 1)
	deeper = strings.Replace(deeper, "]\n", "]]\n", 1)
	_, err = ParseWithConfig(&ParseConfig{Path: "x.nomad.hcl", Body: []byte(deeper)})
	must.ErrorContains(t, err, "Nesting too deep")
}

func TestParse_BracesInStringsDoNotNest(t *testing.T) {
	src := "job \"x\" {\n meta = {\n a = \"" + strings.Repeat("{[(", 200) + "\"\n b = <<EOT\n" + strings.Repeat("{", 200) + "\nEOT\n }\n # " + strings.Repeat("{", 200) + "\n}\n"
	job, err := ParseWithConfig(&ParseConfig{Path: "x.nomad.hcl", Body: []byte(src)})
	must.NoError(t, err)
	must.Eq(t, strings.Repeat("{[(", 200), job.Meta["a"])

	json := `{"job": {"x": {"meta": {"a": "` + strings.Repeat(`{[\"`, 200) + `"}}}}`
	job, err = ParseWithConfig(&ParseConfig{Path: "x.nomad.json", Body: []byte(json)})
	must.NoError(t, err)
	must.Eq(t, strings.Repeat(`{["`, 200), job.Meta["a"])
}

// Variable values come from files (-var-file, and the Variables of
// /v1/jobs/parse) and from -var and NOMAD_VAR_: nested too deep, each is
// refused as the job file is.
func TestParse_VariableNestingTooDeep(t *testing.T) {
	const n = 5000
	src := []byte("variable \"v\" {\n type = list(any)\n}\njob \"x\" {\n meta = { a = \"${jsonencode(var.v)}\" }\n}\n")
	deepList := strings.Repeat("[", n) + strings.Repeat("]", n)
	dir := t.TempDir()
	hclFile := filepath.Join(dir, "vars.hcl")
	must.NoError(t, os.WriteFile(hclFile, []byte("v = "+deepList+"\n"), 0o644))
	jsonFile := filepath.Join(dir, "vars.json")
	must.NoError(t, os.WriteFile(jsonFile, []byte(`{"v": `+deepList+`}`), 0o644))

	cases := []struct {
		name string
		mod  func(*ParseConfig)
	}{
		{"HCL variable file", func(c *ParseConfig) { c.VarFiles = []string{hclFile} }},
		{"JSON variable file", func(c *ParseConfig) { c.VarFiles = []string{jsonFile} }},
		{"-var", func(c *ParseConfig) { c.ArgVars = []string{"v=" + deepList} }},
		{"NOMAD_VAR_", func(c *ParseConfig) { c.Envs = []string{"NOMAD_VAR_v=" + deepList} }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &ParseConfig{Path: "x.nomad.hcl", Body: src}
			tc.mod(cfg)
			_, err := ParseWithConfig(cfg)
			must.ErrorContains(t, err, "Nesting too deep")
		})
	}

	cfg := &ParseConfig{Path: "x.nomad.hcl", Body: src, ArgVars: []string{"v=[[1]]"}}
	job, err := ParseWithConfig(cfg)
	must.NoError(t, err)
	must.Eq(t, "[[1]]", job.Meta["a"])
}
