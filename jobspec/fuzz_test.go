package jobspec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds job files to the parser as `nomad job run` and
// /v1/jobs/parse do: HCL or HCL-JSON by content. Whatever the input, the
// parser answers a job or an error, never a panic, and a job it answers
// can be sent to the API as JSON.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{
		"testdata/good/*.nomad.hcl",
		"testdata/good/*.nomad.json",
		"testdata/bad/*.nomad.hcl",
		"testdata/bad/*.nomad.json",
		"../examples/*.nomad.hcl",
	} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(src)
		}
	}
	f.Add([]byte(`job "x" { group "g" { task "t" { driver = "raw_exec" config { command = "true" } } } }`))
	f.Add([]byte(`{"job": {"x": {"group": {"g": {"task": {"t": {"driver": "raw_exec"}}}}}}}`))

	f.Fuzz(func(t *testing.T, src []byte) {
		job, err := ParseWithConfig(&ParseConfig{Path: "fuzz.nomad.hcl", Body: src})
		if err != nil {
			if job != nil {
				t.Fatalf("parse returned a job and an error: %v", err)
			}
			return
		}
		if job == nil {
			t.Fatal("parse returned neither a job nor an error")
		}
		if _, err := json.Marshal(job); err != nil {
			t.Fatalf("parsed job cannot be sent as JSON: %v", err)
		}
	})
}

// FuzzParseVars feeds -var values (and NOMAD_VAR_ environment values) to
// the job files that declare variables, as `nomad job run -var` does:
// whatever the value, the parser answers a job or an error, never a
// panic.
func FuzzParseVars(f *testing.F) {
	files, err := filepath.Glob("testdata/good/variables_*.nomad.hcl")
	if err != nil {
		f.Fatal(err)
	}
	var srcs [][]byte
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		srcs = append(srcs, src)
	}
	if len(srcs) == 0 {
		f.Fatal("no job files with variables")
	}
	for i := range srcs {
		for _, v := range []string{
			"count=5",
			"count=five",
			`datacenters=["a", "b"]`,
			`datacenters=[`,
			`labels={ team = "x" }`,
			`limits={ cpu = 1, memory = 2 }`,
			`limits={ cpu = "x" }`,
			"debug=true",
			"image=app:arg1",
			"replicas=9",
			"env=prod",
			"unknown=1",
			"noequals",
			"=1",
		} {
			f.Add(uint8(i), v, false)
			f.Add(uint8(i), v, true)
		}
	}

	f.Fuzz(func(t *testing.T, which uint8, v string, fromEnv bool) {
		cfg := &ParseConfig{Path: "vars.nomad.hcl", Body: srcs[int(which)%len(srcs)]}
		if fromEnv {
			cfg.Envs = []string{"NOMAD_VAR_" + v}
		} else {
			cfg.ArgVars = []string{v}
		}
		job, err := ParseWithConfig(cfg)
		if err == nil && job == nil {
			t.Fatal("parse returned neither a job nor an error")
		}
		if err != nil && job != nil {
			t.Fatalf("parse returned a job and an error: %v", err)
		}
	})
}
