package heartbeat

import (
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"
)

// expiries records expired node IDs in order.
type expiries struct {
	mu  sync.Mutex
	ids []string
}

func (e *expiries) add(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ids = append(e.ids, id)
}

func (e *expiries) get() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.ids...)
}

func TestTimers_ExpireAfterTTLPlusGraceNeverBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var exp expiries
		h := NewTimers(10*time.Second, 50, 10*time.Second, exp.add)
		h.stagger = func(d time.Duration) time.Duration { return d / 2 }

		ttl := h.Reset("node-1")
		must.Eq(t, 15*time.Second, ttl) // 10 s minimum + half of it as stagger

		time.Sleep(ttl + 10*time.Second - time.Millisecond)
		synctest.Wait()
		must.SliceEmpty(t, exp.get())

		time.Sleep(2 * time.Millisecond)
		synctest.Wait()
		must.Eq(t, []string{"node-1"}, exp.get())
		must.Eq(t, 0, h.Count())
	})
}

func TestTimers_ResetPostponesExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var exp expiries
		h := NewTimers(10*time.Second, 50, 10*time.Second, exp.add)
		h.stagger = func(time.Duration) time.Duration { return 0 }

		h.Reset("node-1")
		// Heartbeat every 9 s for a minute: never expires.
		for range 7 {
			time.Sleep(9 * time.Second)
			h.Reset("node-1")
		}
		synctest.Wait()
		must.SliceEmpty(t, exp.get())

		// Then silence: expires 20 s after the last heartbeat.
		time.Sleep(20*time.Second + time.Millisecond)
		synctest.Wait()
		must.Eq(t, []string{"node-1"}, exp.get())
	})
}

func TestTimers_TTLGrowsWithNodeCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var exp expiries
		h := NewTimers(10*time.Second, 50, 10*time.Second, exp.add)
		h.stagger = func(time.Duration) time.Duration { return 0 }
		for i := range 1000 {
			h.Reset(fmt.Sprintf("node-%d", i))
		}
		// 1000 tracked nodes at 50 heartbeats a second: 20 s apart.
		must.Eq(t, 20*time.Second, h.Reset("node-x"))
		h.Clear()
		synctest.Wait()
		must.Eq(t, 0, h.Count())
	})
}

func TestTimers_RemoveAndFailoverTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var exp expiries
		h := NewTimers(10*time.Second, 50, 10*time.Second, exp.add)
		h.stagger = func(time.Duration) time.Duration { return 0 }

		h.Reset("gone")
		h.Remove("gone")
		h.ResetTo("failover", 300*time.Second)

		time.Sleep(299 * time.Second)
		synctest.Wait()
		must.SliceEmpty(t, exp.get())

		time.Sleep(2 * time.Second)
		synctest.Wait()
		must.Eq(t, []string{"failover"}, exp.get())
	})
}
