package jobspec

import (
	"os"
	"testing"

	"github.com/shoenig/test/must"
)

// BenchmarkParse200LineJob parses a realistic ~200-line service job with
// variables, locals, functions and a dynamic block.
func BenchmarkParse200LineJob(b *testing.B) {
	const path = "testdata/bench/big.nomad.hcl"
	src, err := os.ReadFile(path)
	must.NoError(b, err)

	job, err := ParseWithConfig(&ParseConfig{Path: path, Body: src, Strict: true})
	must.NoError(b, err)
	must.Len(b, 4, job.TaskGroups)

	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseWithConfig(&ParseConfig{Path: path, Body: src, Strict: true}); err != nil {
			b.Fatal(err)
		}
	}
}
