package checks

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// flipExec passes or fails as told.
type flipExec struct {
	mu   sync.Mutex
	code int
	runs int
}

func (f *flipExec) Exec(ctx context.Context, o *drivers.ExecOptions) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs++
	return f.code, nil
}

func (f *flipExec) set(code int) {
	f.mu.Lock()
	f.code = code
	f.mu.Unlock()
}

func TestRunner_IntervalsAndResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ex := &flipExec{}
		var mu sync.Mutex
		var seen []string
		r := NewRunner(nil, func(s Spec, o Outcome) {
			mu.Lock()
			seen = append(seen, o.Status)
			mu.Unlock()
		})
		chk := &structs.ServiceCheck{Name: "alive", Type: "script", Command: "true", Interval: 10 * time.Second, Timeout: time.Second}
		r.Sync([]Spec{{ID: "c1", Check: chk, Group: "web.app[0]", Task: "app", Service: "web", Exec: ex}})
		res := r.Results()["c1"]
		must.Eq(t, StatusPending, res.Status)
		must.Eq(t, "nomad: waiting to run", res.Output)
		must.Eq(t, ModeHealthiness, res.Mode)
		must.Eq(t, "web.app[0]", res.Group)

		// First run after half the interval.
		time.Sleep(5*time.Second + time.Millisecond)
		synctest.Wait()
		must.Eq(t, StatusSuccess, r.Results()["c1"].Status)

		ex.set(2)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		must.Eq(t, StatusFailure, r.Results()["c1"].Status)
		mu.Lock()
		must.Eq(t, []string{StatusSuccess, StatusFailure}, seen)
		mu.Unlock()

		// A check no longer listed stops and is forgotten.
		r.Sync(nil)
		must.MapEmpty(t, r.Results())
		r.Stop()
	})
}

func TestRestartWatch(t *testing.T) {
	fail := Outcome{Status: StatusFailure}
	ok := Outcome{Status: StatusSuccess}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type step struct {
		o       Outcome
		at      time.Duration // after start
		running bool
		restart bool
	}
	cases := []struct {
		name   string
		policy structs.CheckRestart
		steps  []step
	}{
		{name: "limit reached", policy: structs.CheckRestart{Limit: 2}, steps: []step{
			{fail, time.Second, true, false}, {fail, 2 * time.Second, true, true}, {fail, 3 * time.Second, true, false},
		}},
		{name: "success resets", policy: structs.CheckRestart{Limit: 2}, steps: []step{
			{fail, time.Second, true, false}, {ok, 2 * time.Second, true, false}, {fail, 3 * time.Second, true, false},
		}},
		{name: "grace not counted", policy: structs.CheckRestart{Limit: 1, Grace: 10 * time.Second}, steps: []step{
			{fail, time.Second, true, false}, {fail, 9 * time.Second, true, false}, {fail, 11 * time.Second, true, true},
		}},
		{name: "not running not counted", policy: structs.CheckRestart{Limit: 1}, steps: []step{
			{fail, time.Second, false, false}, {fail, 2 * time.Second, true, true},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.policy
			w := NewRestartWatch(&structs.ServiceCheck{CheckRestart: &p})
			for i, s := range tc.steps {
				started := start
				if !s.running {
					started = time.Time{}
				}
				must.Eq(t, s.restart, w.Observe(s.o, start.Add(s.at), started), must.Sprintf("step %d", i))
			}
		})
	}
	must.Nil(t, NewRestartWatch(&structs.ServiceCheck{}))
	must.Eq(t, `healthcheck: check "alive" unhealthy`, RestartReason("alive"))
}
