package allocrunner

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"
)

// A wall clock stepped back an hour before the deadline and set right
// two seconds after it delays the kill by at most maxRunRecheck past the
// correction, not by the hour; stepped forward and back before the
// deadline, it does not bring the kill forward.
func TestMaxRunDurationHook_WallClockSteps(t *testing.T) {
	cases := []struct {
		name          string
		step          time.Duration
		at, setRight  time.Duration // from the alloc's creation
		killedAtLeast time.Duration
		killedAtMost  time.Duration
	}{
		{name: "back, corrected after the deadline", step: -time.Hour, at: 8 * time.Second, setRight: 12 * time.Second,
			killedAtLeast: 12 * time.Second, killedAtMost: 12*time.Second + maxRunRecheck},
		{name: "forward, corrected before the deadline", step: time.Hour, at: 2 * time.Second, setRight: 6 * time.Second,
			killedAtLeast: 10 * time.Second, killedAtMost: 10 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var offset atomic.Int64
				wallNow = func() time.Time { return time.Now().Round(0).Add(time.Duration(offset.Load())) }
				defer func() { wallNow = time.Now }()

				a := maxRunAlloc(10 * time.Second)
				created := time.Unix(0, a.CreateTime)
				h, r := startHook(t, a)
				defer h.Shutdown()
				time.Sleep(tc.at)
				offset.Store(int64(tc.step))
				// An unrelated update while the clock is off changes
				// nothing.
				must.NoError(t, h.Update(withIndex(a, a.AllocModifyIndex+1)))
				time.Sleep(tc.setRight - tc.at)
				offset.Store(0)
				time.Sleep(20 * time.Second)
				synctest.Wait()
				kills := r.killTimes()
				must.SliceLen(t, 1, kills)
				late := kills[0].Sub(created)
				must.GreaterEq(t, tc.killedAtLeast, late)
				must.LessEq(t, tc.killedAtMost, late)
			})
		})
	}
}
