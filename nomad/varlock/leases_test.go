package varlock

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestLeases_ExpireAndDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		expired := make(chan string, 1)
		l := New(func(_ structs.NamespacedID, id string) { expired <- id })
		key := structs.NamespacedID{Namespace: "default", ID: "a"}
		lock := &structs.VariableLock{ID: "L1", TTL: 15 * time.Second, LockDelay: 20 * time.Second}

		l.Track(key, lock)
		must.MapEmpty(t, l.timers, must.Sprint("no leases before leadership"))
		l.SetEnabled(true)
		l.Track(key, lock)

		time.Sleep(10 * time.Second)
		l.Track(key, lock) // renewed: a new 15 s lease
		time.Sleep(10 * time.Second)
		synctest.Wait()
		must.Eq(t, 0, len(expired), must.Sprint("a renewed lease has not run out"))

		time.Sleep(5 * time.Second)
		synctest.Wait()
		must.Eq(t, "L1", <-expired)
		until, delayed := l.DelayedUntil(key, time.Now())
		must.True(t, delayed)
		must.Eq(t, time.Now().Add(20*time.Second), until)

		time.Sleep(20 * time.Second)
		_, delayed = l.DelayedUntil(key, time.Now())
		must.False(t, delayed)

		// A released lock has no delay, and losing leadership stops leases.
		l.Track(key, lock)
		l.Untrack(key)
		l.Track(structs.NamespacedID{Namespace: "default", ID: "b"}, lock)
		l.SetEnabled(false)
		time.Sleep(time.Minute)
		synctest.Wait()
		must.Eq(t, 0, len(expired))
		_, delayed = l.DelayedUntil(key, time.Now())
		must.False(t, delayed)
	})
}
