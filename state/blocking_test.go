package state

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// listJobs is the query behind GET /v1/jobs: the jobs, at the jobs table
// index. Each run is reported on runs.
func listJobs(runs chan<- uint64) QueryFn {
	return func(ws memdb.WatchSet, s *StateStore) (any, uint64, error) {
		jobs, err := s.Jobs(ws)
		if err != nil {
			return nil, 0, err
		}
		index, err := s.Index(TableJobs)
		if err != nil {
			return nil, 0, err
		}
		runs <- index
		return jobs, index, nil
	}
}

type queryResult struct {
	resp  any
	index uint64
	err   error
}

// startQuery runs a blocking query in a goroutine and returns the channels
// of its runs and its result.
func startQuery(ctx context.Context, s *StateStore, minIndex uint64) (<-chan uint64, <-chan queryResult) {
	runs := make(chan uint64, 16)
	done := make(chan queryResult, 1)
	go func() {
		resp, index, err := s.BlockingQuery(ctx, minIndex, listJobs(runs))
		done <- queryResult{resp, index, err}
	}()
	return runs, done
}

func TestBlockingQuery_MinIndexZeroRunsOnce(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJob(3, mockJob("web")))
	runs := make(chan uint64, 1)
	resp, index, err := s.BlockingQuery(context.Background(), 0, listJobs(runs))
	must.NoError(t, err)
	must.Eq(t, 3, index)
	must.SliceLen(t, 1, resp.([]*structs.Job))
	must.Eq(t, 3, <-runs)
}

func TestBlockingQuery_ReturnsAtOnceWhenPastMinIndex(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertJob(3, mockJob("web")))
	runs := make(chan uint64, 1)
	_, index, err := s.BlockingQuery(context.Background(), 2, listJobs(runs))
	must.NoError(t, err)
	must.Eq(t, 3, index)
}

func TestBlockingQuery_WakesOnJobWriteNotOnNodeWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testStore(t)
		must.NoError(t, s.UpsertJob(1, mockJob("web")))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()

		runs, done := startQuery(ctx, s, 1)
		synctest.Wait() // the query ran once and is waiting on its watch set
		must.Eq(t, 1, <-runs)

		// A node write touches nothing the query watches.
		must.NoError(t, s.UpsertNode(2, mockNode()))
		synctest.Wait()
		must.Eq(t, 0, len(runs), must.Sprint("a node write must not wake a jobs query"))
		must.Eq(t, 0, len(done))

		// A job write wakes it, and the new index ends the query.
		must.NoError(t, s.UpsertJob(3, mockJob("api")))
		select {
		case res := <-done:
			must.NoError(t, res.err)
			must.Eq(t, 3, res.index)
			must.SliceLen(t, 2, res.resp.([]*structs.Job))
		case <-time.After(time.Minute):
			t.Fatal("query did not wake on a job write")
		}
		must.Eq(t, 3, <-runs)
		must.Eq(t, 0, len(runs))
	})
}

func TestBlockingQuery_TimeoutReturnsUnchangedIndex(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testStore(t)
		must.NoError(t, s.UpsertJob(4, mockJob("web")))
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Second)
		defer cancel()

		start := time.Now()
		runs, done := startQuery(ctx, s, 4)
		res := <-done
		must.NoError(t, res.err)
		must.Eq(t, 4, res.index)
		must.SliceLen(t, 1, res.resp.([]*structs.Job))
		must.Eq(t, 300*time.Second, time.Since(start))
		must.Eq(t, 4, <-runs)
		must.Eq(t, 0, len(runs))
	})
}

func TestBlockingQuery_CancelReturnsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testStore(t)
		must.NoError(t, s.UpsertJob(4, mockJob("web")))
		ctx, cancel := context.WithCancel(t.Context())
		_, done := startQuery(ctx, s, 4)
		synctest.Wait()
		cancel()
		res := <-done
		must.ErrorIs(t, res.err, context.Canceled)
		must.Eq(t, 4, res.index)
	})
}

func TestBlockingQuery_WakesOnAbandon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := testStore(t)
		must.NoError(t, s.UpsertJob(4, mockJob("web")))
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
		defer cancel()

		start := time.Now()
		_, done := startQuery(ctx, s, 4)
		synctest.Wait()
		must.Eq(t, 0, len(done))

		s.Abandon()
		s.Abandon() // twice is fine
		select {
		case res := <-done:
			must.NoError(t, res.err)
			must.Eq(t, 4, res.index)
		case <-time.After(time.Minute):
			t.Fatal("query did not wake on abandon")
		}
		must.Eq(t, 0, time.Since(start), must.Sprint("abandon wakes the query at once"))
	})
}

func TestBlockingQuery_ErrorStops(t *testing.T) {
	s := testStore(t)
	_, _, err := s.BlockingQuery(context.Background(), 5, func(ws memdb.WatchSet, s *StateStore) (any, uint64, error) {
		_, err := s.EvalByID(ws, structs.GenerateUUID())
		must.NoError(t, err)
		return nil, 0, errors.New("query failed")
	})
	must.ErrorContains(t, err, "query failed")
}
