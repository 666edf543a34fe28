package batchqueue

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

func TestEstimate(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// 1000 MB, 700 used: 300 free until +10m, 600 until +20m, then all.
	timed := Cluster{Total: mem(1000), Used: mem(700), Timed: []TimedAlloc{
		{End: t0.Add(10 * time.Minute), Res: mem(300)}, {End: t0.Add(20 * time.Minute), Res: mem(400)}}}
	untimed := Cluster{Total: mem(1000), Used: mem(700)}
	d := func(mb int64, run time.Duration) Demand { return Demand{Ask: mem(mb), Allocs: 1, MaxRun: run} }
	cases := []struct {
		name    string
		cluster Cluster
		line    []Demand
		want    []time.Duration // from t0; -1: unknown
	}{
		{"fits now", timed, []Demand{d(300, 0)}, []time.Duration{0}},
		{"waits for the first deadline", timed, []Demand{d(500, 0)}, []time.Duration{10 * time.Minute}},
		{"the shadow time of a big head", timed, []Demand{d(800, time.Hour)}, []time.Duration{20 * time.Minute}},
		{"a later workload waits for an earlier one's deadline", timed,
			[]Demand{d(1000, 5*time.Minute), d(100, 0)}, []time.Duration{20 * time.Minute, 25 * time.Minute}},
		{"never before the one ahead", timed,
			[]Demand{d(500, time.Minute), d(10, 0)}, []time.Duration{10 * time.Minute, 10 * time.Minute}},
		{"room held without a deadline: unknown from there on", timed,
			[]Demand{d(300, 0), d(800, 0), d(10, 0)}, []time.Duration{0, -1, -1}},
		{"no deadlines at all", untimed, []Demand{d(200, 0), d(200, 0)}, []time.Duration{0, -1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Estimate(tc.cluster, t0, tc.line)
			var rel []time.Duration
			for _, g := range got {
				if g.IsZero() {
					rel = append(rel, -1)
				} else {
					rel = append(rel, g.Sub(t0))
				}
			}
			must.Eq(t, tc.want, rel)
		})
	}
}
