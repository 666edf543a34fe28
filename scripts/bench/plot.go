package main

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// bucketFor picks the plot's time step for a run of length span: 100 ms
// for runs of a few seconds (a drain now takes about two, which whole
// seconds would show as two points), whole seconds beyond 30 s.
func bucketFor(span time.Duration) time.Duration {
	if span <= 30*time.Second {
		return 100 * time.Millisecond
	}
	return time.Second
}

// perSecond counts the events in each bucket after start and scales the
// count to events per second.
func perSecond(start time.Time, events []time.Time, bucket time.Duration, buckets int) plotter.XYs {
	counts := make([]float64, buckets)
	for _, e := range events {
		if e.IsZero() {
			continue
		}
		b := int(e.Sub(start) / bucket)
		if b >= 0 && b < buckets {
			counts[b]++
		}
	}
	xy := make(plotter.XYs, buckets)
	for i := range xy {
		xy[i].X, xy[i].Y = (time.Duration(i) * bucket).Seconds(), counts[i]/bucket.Seconds()
	}
	return xy
}

// plotTimeline draws allocs registered, placed, running and complete per
// second as lines (stages with no events left out), and saves it as a
// PNG. gonum/plot draws it: a pure-Go plotting library imported by this
// program only, not by bin/nomad.
func plotTimeline(t *timeline, title, path string) error {
	if t == nil {
		return fmt.Errorf("no timeline")
	}
	span := t.end().Sub(t.start)
	bucket := bucketFor(span)
	buckets := int(span/bucket) + 1
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the first registration"
	p.Y.Label.Text = fmt.Sprintf("allocs per second (%s steps)", bucket)
	p.Add(plotter.NewGrid())
	var lines []any
	for _, stage := range []struct {
		name   string
		events []time.Time
	}{{"registered", t.registered}, {"placed", t.placed}, {"running", t.running}, {"complete", t.complete}} {
		if hasEvents(stage.events) {
			lines = append(lines, stage.name, perSecond(t.start, stage.events, bucket, buckets))
		}
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return err
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}

func hasEvents(ts []time.Time) bool {
	for _, t := range ts {
		if !t.IsZero() {
			return true
		}
	}
	return false
}
