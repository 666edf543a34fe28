package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// figure is one measured value: the median of its runs, with the issue's
// target beside it when there is one.
type figure struct {
	Name   string
	Runs   []float64 // one value per run
	Unit   string
	Target *target // nil when the issue sets none
}

// target is a bound from issue 22.
type target struct {
	Text  string             // as the page shows it, e.g. "< 100"
	Check func(float64) bool // whether a median meets it
	// WhyNot, when set, is a link (relative to the page) to what the
	// profiles say about why the target is not met on this machine; the
	// page shows it beside a figure that misses its target.
	WhyNot string
}

// Where the page points for a missed target: sections of
// website/performance-notes.md (TestWhyNotLinks_NameSections checks them).
const (
	whyNotHTTP        = "performance-notes.md#why-not-http-registration"
	whyNotSmallJobs   = "performance-notes.md#why-not-many-small-jobs"
	whyNotDrainGrowth = "performance-notes.md#why-not-the-drains-rss-growth"
)

var whyNotLinks = []string{whyNotHTTP, whyNotSmallJobs, whyNotDrainGrowth}

// because sets where the page points when the target is not met.
func (t *target) because(link string) *target {
	t.WhyNot = link
	return t
}

func atLeast(v float64) *target {
	return &target{Text: "≥ " + num(v), Check: func(x float64) bool { return x >= v }}
}

func under(v float64) *target {
	return &target{Text: "< " + num(v), Check: func(x float64) bool { return x < v }}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// quantile is the q-th quantile of sorted durations (nearest rank).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// num formats a figure with a sensible number of digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "–"
	case a >= 1000:
		return commas(int64(math.Round(v)))
	case v == math.Trunc(v) && a < 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func commas(n int64) string {
	s := fmt.Sprint(n)
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
