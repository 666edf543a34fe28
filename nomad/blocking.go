package nomad

import (
	"context"
	"math/rand/v2"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// queryFn runs one read against st, registering what it read in ws, and
// returns the index that answers the query.
type queryFn func(ws memdb.WatchSet, st *state.StateStore) (uint64, error)

// blockingRPC runs a read, and when the query asks to block (a min index)
// re-runs it on each change of what it read until its index passes the min
// index or the wait (default and cap 300 s, plus up to 1/16 jitter) ends.
// A state restore wakes it through the old store's abandon channel.
func (s *Server) blockingRPC(q *structs.QueryOptions, m *structs.QueryMeta, run queryFn) error {
	var ctx context.Context = context.Background()
	if q.MinQueryIndex > 0 {
		wait := time.Duration(q.MaxQueryTime)
		if wait <= 0 || wait > structs.MaxBlockingRPCQueryTime {
			wait = structs.MaxBlockingRPCQueryTime
		}
		wait += time.Duration(rand.Int64N(int64(wait)/16 + 1))
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait)
		defer cancel()
	}
	for {
		st := s.State()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		ws.Add(s.shutdownCh)
		index, err := run(ws, st)
		if err != nil {
			return err
		}
		s.setQueryMeta(m)
		m.Index = index
		if q.MinQueryIndex == 0 || index > q.MinQueryIndex {
			return nil
		}
		if ws.WatchCtx(ctx) != nil || s.isShutdown() {
			return nil // timed out: answer with the unchanged data
		}
	}
}

// setQueryMeta fills in what the reader knows about the leader.
func (s *Server) setQueryMeta(m *structs.QueryMeta) {
	if s.IsLeader() {
		m.KnownLeader = true
		m.LastContact = 0
		return
	}
	m.KnownLeader = s.Leader() != ""
	m.LastContact = int64(time.Since(s.raft.LastContact()))
}

// maxIndex returns the highest of the named tables' indexes, floored at 1
// so that a blocking query is always possible.
func maxIndex(st *state.StateStore, tables ...string) (uint64, error) {
	var max uint64 = 1
	for _, t := range tables {
		i, err := st.Index(t)
		if err != nil {
			return 0, err
		}
		if i > max {
			max = i
		}
	}
	return max, nil
}

// tableIndex returns the table's index without a floor: 0 while nothing
// was ever written to it. Nomad's list endpoints answer so (the api
// module's tests expect X-Nomad-Index 0 for a listing of nothing).
func tableIndex(st *state.StateStore, table string) (uint64, error) {
	return st.Index(table)
}
