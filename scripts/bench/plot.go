package main

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// perSecond counts the events in each whole second after start.
func perSecond(start time.Time, events []time.Time, seconds int) plotter.XYs {
	counts := make([]float64, seconds)
	for _, e := range events {
		if e.IsZero() {
			continue
		}
		s := int(e.Sub(start) / time.Second)
		if s >= 0 && s < seconds {
			counts[s]++
		}
	}
	xy := make(plotter.XYs, seconds)
	for i := range xy {
		xy[i].X, xy[i].Y = float64(i), counts[i]
	}
	return xy
}

// plotTimeline draws allocs registered, placed, running and complete per
// second as lines, and saves it as a PNG. gonum/plot draws it: a pure-Go
// plotting library imported by this program only, not by bin/nomad.
func plotTimeline(t *timeline, title, path string) error {
	if t == nil {
		return fmt.Errorf("no timeline")
	}
	seconds := int(t.end().Sub(t.start)/time.Second) + 1
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the first registration"
	p.Y.Label.Text = "allocs in that second"
	p.Add(plotter.NewGrid())
	if err := plotutil.AddLinePoints(p,
		"registered", perSecond(t.start, t.registered, seconds),
		"placed", perSecond(t.start, t.placed, seconds),
		"running", perSecond(t.start, t.running, seconds),
		"complete", perSecond(t.start, t.complete, seconds),
	); err != nil {
		return err
	}
	p.Legend.Top = true
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}
