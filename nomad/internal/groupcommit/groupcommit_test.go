package groupcommit

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestGroupCommit_GroupsWhileOneIsApplied: a piece goes out at once;
// the ones that arrive while it is applied go out together in the next
// entry, and every caller gets its own entry's index.
func TestGroupCommit_GroupsWhileOneIsApplied(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var entries [][]string
	c := New(100, func(pieces []string) (uint64, error) {
		mu.Lock()
		entries = append(entries, pieces)
		n := len(entries)
		mu.Unlock()
		if n == 1 {
			<-release
		}
		return uint64(100 + n), nil
	})
	entryCount := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(entries)
	}

	first := make(chan uint64)
	go func() {
		index, err := c.Submit("first", 1)
		must.NoError(t, err)
		first <- index
	}()
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return entryCount() == 1 }),
		wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))

	const later = 10
	indexes := make(chan uint64, later)
	for i := range later {
		go func() {
			index, err := c.Submit(fmt.Sprint("later-", i), 1)
			must.NoError(t, err)
			indexes <- index
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		entries, pieces := c.Waiting()
		return entries == 1 && pieces == later
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)

	must.Eq(t, 101, <-first)
	for range later {
		must.Eq(t, 102, <-indexes)
	}
	must.Eq(t, 2, entryCount())
	mu.Lock()
	defer mu.Unlock()
	must.Len(t, 1, entries[0])
	must.Len(t, later, entries[1])
}

// TestGroupCommit_CapsAnEntryAndSharesItsError: an entry carries at most
// max weight, and a failed entry fails each of its callers.
func TestGroupCommit_CapsAnEntryAndSharesItsError(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var sizes []int
	c := New(10, func(pieces []int) (uint64, error) {
		weight := 0
		for _, p := range pieces {
			weight += p
		}
		mu.Lock()
		sizes = append(sizes, weight)
		n := len(sizes)
		mu.Unlock()
		if n == 1 {
			<-release
			return 1, nil
		}
		return 0, errors.New("no leader")
	})
	go c.Submit(1, 1)
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(sizes) == 1
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.Submit(6, 6)
			errs <- err
		}()
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		entries, _ := c.Waiting()
		return entries == 3
	}), wait.Timeout(10*time.Second), wait.Gap(time.Millisecond)))
	close(release)
	for range 3 {
		must.ErrorContains(t, <-errs, "no leader")
	}
	mu.Lock()
	defer mu.Unlock()
	must.Eq(t, []int{1, 6, 6, 6}, sizes)
}
