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
