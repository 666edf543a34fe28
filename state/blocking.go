package state

import (
	"context"
	"errors"

	"github.com/hashicorp/go-memdb"
)

// QueryFn is one run of a blocking query. It reads s, adds what it read to
// ws, and returns its result with the index that result reflects (see the
// index rules of the HTTP API: an object's ModifyIndex, or a table index).
type QueryFn func(ws memdb.WatchSet, s *StateStore) (resp any, index uint64, err error)

// BlockingQuery runs query until its index passes minIndex.
//
// With minIndex 0 the query runs once. Otherwise, while the returned index
// is at or below minIndex, it waits for a change to anything the query
// watched and runs again. When ctx ends first, the latest result is
// returned with a nil error if the deadline passed, or with ctx's error if
// it was cancelled. The caller's ctx is the only bound on the wait: the RPC
// layer caps it at 300 s and adds up to 1/16 of jitter.
//
// A restore replaces the store and closes its abandon channel; the query
// then runs once more against this (now stale) store and returns, so that
// the caller re-issues it against the new one.
func (s *StateStore) BlockingQuery(ctx context.Context, minIndex uint64, query QueryFn) (any, uint64, error) {
	for {
		ws := memdb.NewWatchSet()
		ws.Add(s.AbandonCh())
		resp, index, err := query(ws, s)
		if err != nil {
			return nil, index, err
		}
		if minIndex == 0 || index > minIndex {
			return resp, index, nil
		}
		select {
		case <-s.AbandonCh():
			return resp, index, nil
		default:
		}
		if err := ws.WatchCtx(ctx); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return resp, index, nil
			}
			return resp, index, err
		}
	}
}
