package main

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestParseBench(t *testing.T) {
	out := []byte(`goos: linux
goarch: amd64
pkg: github.com/nomadq/nomadq/scheduler
BenchmarkPlacement/nodes=1000/type=batch/spread=false-2         	       1	 280049033 ns/op	        28.00 us/placement
BenchmarkPlacement/nodes=1000/type=batch/spread=false-2         	       1	 290049033 ns/op	        29.00 us/placement
BenchmarkUpsertAllocs10kOneTxn-2       	       1	 427605136 ns/op	     23386 allocs/s
PASS
`)
	res, err := parseBench(out)
	must.NoError(t, err)
	must.Eq(t, []float64{28, 29}, res.get("BenchmarkPlacement/nodes=1000/type=batch/spread=false", "us/placement"))
	must.Eq(t, []float64{23386}, res.get("BenchmarkUpsertAllocs10kOneTxn", "allocs/s"))
	must.Eq(t, []float64{427605136}, res.get("BenchmarkUpsertAllocs10kOneTxn", "ns/op"))
}

func TestMedianAndNum(t *testing.T) {
	must.Eq(t, 2, median([]float64{3, 1, 2}))
	must.Eq(t, 2.5, median([]float64{4, 1, 2, 3}))
	must.Eq(t, "1,234", num(1234.4))
	must.Eq(t, "5", num(5))
	must.Eq(t, "0.25", num(0.25))
}
