package periodicschedule

import (
	"fmt"
	"time"

	"github.com/hashicorp/cronexpr"
	"github.com/nomadq/nomadq/structs"
)

// periodicSpecs returns the cron expressions of a periodic config: the
// Specs list, or the older single Spec.
func periodicSpecs(p *structs.PeriodicConfig) []string {
	if len(p.Specs) > 0 {
		return p.Specs
	}
	if p.Spec != "" {
		return []string{p.Spec}
	}
	return nil
}

// periodicLocation returns the time zone the config's crons are read in.
func periodicLocation(p *structs.PeriodicConfig) (*time.Location, error) {
	if p.TimeZone == "" {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(p.TimeZone)
	if err != nil {
		return nil, fmt.Errorf("periodic time_zone %q: %w", p.TimeZone, err)
	}
	return loc, nil
}

// Next returns the earliest launch of p strictly after
// after, reading each cron in p's time zone. It returns the zero time
// when no cron fires again.
func Next(p *structs.PeriodicConfig, after time.Time) (time.Time, error) {
	loc, err := periodicLocation(p)
	if err != nil {
		return time.Time{}, err
	}
	var next time.Time
	for _, spec := range periodicSpecs(p) {
		expr, err := parseCron(spec)
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic cron %q: %w", spec, err)
		}
		t, err := cronNextSafe(expr, after.In(loc))
		if err != nil {
			return time.Time{}, fmt.Errorf("periodic cron %q: %w", spec, err)
		}
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	return next, nil
}

// cronNextSafe is cronNext that turns a panic of cronexpr (it has known
// ones on unusual expressions) into an error instead of taking the leader
// down.
func cronNextSafe(expr *cronexpr.Expression, after time.Time) (t time.Time, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cron evaluation failed: %v", r)
		}
	}()
	return cronNext(expr, after), nil
}

// cronNext is expr.Next with two DST repairs. cronexpr can answer a time
// that is not after its argument around a clock change, so the search is
// moved forward until it advances. And when clocks fall back, a wall-clock
// time that repeats launches once, at its first occurrence, unless the
// cron also fires between the two occurrences (crons that fire more often
// than the repeated period keep firing through it in absolute time).
func cronNext(expr *cronexpr.Expression, after time.Time) time.Time {
	from := after
	for range 8 {
		t := expr.Next(from)
		if t.IsZero() {
			return t
		}
		if t.After(after) && !repeatedWallClock(expr, t) {
			return t
		}
		if t.After(from) {
			from = t
		}
		from = from.Add(time.Second)
	}
	return time.Time{}
}

// repeatedWallClock reports whether t is the second occurrence of a wall
// clock time that the cron already fired at, with no firing in between.
func repeatedWallClock(expr *cronexpr.Expression, t time.Time) bool {
	_, off := t.Zone()
	_, offBefore := t.Add(-3 * time.Hour).Zone()
	if offBefore <= off {
		return false
	}
	first := t.Add(-time.Duration(offBefore-off) * time.Second)
	if first.Format(time.DateTime) != t.Format(time.DateTime) {
		return false
	}
	return expr.Next(first.Add(-time.Second)).Equal(first) && expr.Next(first).Equal(t)
}

// Step is what the dispatcher does with one periodic job now.
type Step struct {
	// Launch is set when a child is due; At is its launch time.
	Launch bool
	At     time.Time
	// Wake is when to look at the job again when nothing is due (zero:
	// never, the crons do not fire again).
	Wake time.Time
}

// Decide computes the dispatcher's step for a job whose schedule
// resumes after anchor (its last launch or submission). A launch that is
// due is made at its scheduled time; when more than one launch was missed
// (a leader change, a long pause) they collapse into a single catch-up
// launch at now, never a burst.
func Decide(p *structs.PeriodicConfig, anchor, now time.Time) (Step, error) {
	due, err := Next(p, anchor)
	if err != nil || due.IsZero() {
		return Step{}, err
	}
	if due.After(now) {
		return Step{Wake: due}, nil
	}
	following, err := Next(p, due)
	if err != nil {
		return Step{}, err
	}
	if following.IsZero() || following.After(now) {
		return Step{Launch: true, At: due}, nil
	}
	return Step{Launch: true, At: now}, nil
}

// parseCron parses a cron expression; cronexpr panics on some inputs.
func parseCron(spec string) (e *cronexpr.Expression, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("invalid cron expression %q", spec)
		}
	}()
	return cronexpr.Parse(spec)
}
