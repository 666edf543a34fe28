package state

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// GroupWrite group-commits several Raft entries: their writes share one
// memdb transaction. Each entry is written at its own index exactly as a
// write of its own would (the same objects, index fields, job statuses
// and index table rows), so the state after the commit does not depend on
// how entries were grouped; what the group saves is one commit, and one
// copy of the upper levels of every index tree, per entry.
//
// Nothing is visible to readers until Commit. Each write hands back, in
// Queued, which of the evals it stored wait in the batch queue, so the
// caller routes the others without reading the store again. When an entry
// fails, the group is spoilt: Abort it and apply the entries one at a
// time instead, which gives the failed entry its error and the others
// their writes.
//
// Only the FSM's apply loop, the store's one writer, may open a group
// write; while it is open no other write can start.
type GroupWrite struct {
	s  *StateStore
	tx *writeTxn

	// err is the first entry error; the group is spoilt.
	err error

	// nodes and jobs whose allocs some entry changed, woken at commit.
	nodes, jobs map[string]struct{}
	enqueued    []*structs.BatchQueueEntry

	// queued are the IDs of the evals the last write stored that wait in
	// the batch queue.
	queued map[string]struct{}

	// pieces are each index's changes for the change feed; seen is the
	// transaction's change list as of the last piece. Writes at one index
	// (the two writes of an alloc update entry) make one piece, split out when a
	// write at another index begins or at commit.
	pieces  []changePiece
	seen    memdb.Changes
	written bool
	at      uint64
}

type changePiece struct {
	index   uint64
	changes memdb.Changes
}

// BeginGroupWrite opens a group write.
func (s *StateStore) BeginGroupWrite() *GroupWrite {
	tx := &writeTxn{
		Txn:       s.db.Txn(true),
		touched:   make(map[string]struct{}),
		dirtyJobs: make(map[structs.NamespacedID]struct{}),
		route:     s.batchQueueRouter,
	}
	if s.changeFeed != nil {
		tx.TrackChanges()
	}
	return &GroupWrite{s: s, tx: tx, nodes: make(map[string]struct{}), jobs: make(map[string]struct{})}
}

// write runs one entry's writes at index in the group's transaction and
// settles them as StateStore.write does before its commit.
func (b *GroupWrite) write(index uint64, fn func(tx *writeTxn) error) error {
	if b.err != nil {
		return fmt.Errorf("group write spoilt by an earlier entry: %w", b.err)
	}
	tx := b.tx
	tx.queued = nil
	if b.written && index != b.at && b.s.changeFeed != nil {
		// The writes at the last index are complete: split their
		// changes out before this entry adds its own.
		b.takeChanges(b.at)
	}
	tx.index = index
	if err := b.settle(index, fn); err != nil {
		b.err = err
		return err
	}
	b.s.nodeAllocs.mark(tx.allocNodes, index)
	for k := range tx.allocNodes {
		b.nodes[k] = struct{}{}
	}
	for k := range tx.allocJobs {
		b.jobs[k] = struct{}{}
	}
	tx.allocNodes, tx.allocJobs = nil, nil
	b.enqueued = append(b.enqueued, tx.enqueued...)
	tx.enqueued = nil
	b.queued = tx.queued
	b.written = true
	b.at = index
	return nil
}

func (b *GroupWrite) settle(index uint64, fn func(tx *writeTxn) error) error {
	tx := b.tx
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.settleJobStatuses(); err != nil {
		return err
	}
	clear(tx.dirtyJobs)
	for table := range tx.touched {
		if err := tx.Insert(TableIndex, &IndexEntry{Key: table, Value: index}); err != nil {
			return fmt.Errorf("update index of %q: %w", table, err)
		}
	}
	clear(tx.touched)
	return nil
}

// takeChanges records the changes of the writes at index since the last
// piece (one entry's, or several at one index). memdb lists
// a transaction's changes once per object, at the place of its last
// write and with the object as it was before the transaction: the
// objects this entry did not write keep the order they had after the
// previous entry, and the ones it wrote follow them. So the entry's own
// changes are what follows the part of the list that matches the
// previous one; an object an earlier entry of the group wrote too gets,
// as its Before, what that entry left.
func (b *GroupWrite) takeChanges(index uint64) {
	all := b.tx.Changes()
	i := 0
	var rewritten []memdb.Change
	for _, c := range b.seen {
		if i < len(all) && sameChange(all[i], c) {
			i++
		} else {
			rewritten = append(rewritten, c)
		}
	}
	// Changes may return the transaction's own list: copy before editing.
	entry := slices.Clone(all[i:])
	if len(rewritten) > 0 {
		left := make(map[string]any, len(rewritten))
		for _, c := range rewritten {
			left[b.changeKey(c)] = c.After
		}
		for k := range entry {
			if obj, ok := left[b.changeKey(entry[k])]; ok {
				entry[k].Before = obj
			}
		}
	}
	if len(entry) > 0 {
		b.pieces = append(b.pieces, changePiece{index: index, changes: entry})
	}
	b.seen = all
}

// changeKey names the object a change is about: its table and primary
// key.
func (b *GroupWrite) changeKey(c memdb.Change) string {
	obj := c.After
	if obj == nil {
		obj = c.Before
	}
	idx, ok := b.s.db.DBSchema().Tables[c.Table].Indexes["id"].Indexer.(memdb.SingleIndexer)
	if !ok {
		return c.Table
	}
	_, key, err := idx.FromObject(obj)
	if err != nil {
		return c.Table
	}
	return c.Table + "\x00" + string(key)
}

func sameChange(a, b memdb.Change) bool {
	return a.Table == b.Table && a.Before == b.Before && a.After == b.After
}

// Commit makes every entry's writes visible at once, then wakes the
// watchers and feeds the change feed (entry by entry, each with its own
// index) and the batch queue, as each write of its own would have.
func (b *GroupWrite) Commit() error {
	if b.err != nil {
		b.tx.Abort()
		return fmt.Errorf("group write spoilt: %w", b.err)
	}
	if b.written && b.s.changeFeed != nil {
		b.takeChanges(b.at)
	}
	b.tx.Commit()
	b.s.nodeAllocs.notify(b.nodes)
	b.s.jobAllocs.notify(b.jobs)
	if b.s.changeFeed != nil {
		for _, p := range b.pieces {
			b.s.changeFeed(p.index, p.changes)
		}
	}
	if len(b.enqueued) > 0 && b.s.batchQueueFeed != nil {
		b.s.batchQueueFeed(b.enqueued)
	}
	return nil
}

// Abort drops everything the group wrote.
func (b *GroupWrite) Abort() { b.tx.Abort() }

// Queued reports whether the group's last write left the eval with this
// ID waiting in the batch queue: the write routed it there, or found it
// held there already. Such an eval must not go to the broker; the batch
// queue releases it.
func (b *GroupWrite) Queued(evalID string) bool {
	_, ok := b.queued[evalID]
	return ok
}

// The writes a group takes: the FSM's writes that store evals.

// UpsertJobWithSubmission is StateStore.UpsertJobWithSubmission in the group.
func (b *GroupWrite) UpsertJobWithSubmission(index uint64, job *structs.Job, sub *structs.JobSubmission, eval *structs.Evaluation) error {
	return b.write(index, upsertJobWithSubmission(job, sub, eval))
}

// UpsertEvals is StateStore.UpsertEvals in the group.
func (b *GroupWrite) UpsertEvals(index uint64, evals []*structs.Evaluation) error {
	return b.write(index, upsertEvals(evals))
}

// UpdateAllocsFromClient is StateStore.UpdateAllocsFromClient in the group.
func (b *GroupWrite) UpdateAllocsFromClient(index uint64, allocs []*structs.Allocation) error {
	return b.write(index, updateAllocsFromClient(allocs))
}

// UpsertPlanResults is StateStore.UpsertPlanResults in the group.
func (b *GroupWrite) UpsertPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error {
	if req == nil {
		return errNilPlanResults
	}
	return b.write(index, upsertPlanResults(req))
}

// UpdateAllocsDesiredTransitions is StateStore.UpdateAllocsDesiredTransitions
// in the group.
func (b *GroupWrite) UpdateAllocsDesiredTransitions(index uint64, transitions map[string]*structs.DesiredTransition, evals []*structs.Evaluation) error {
	return b.write(index, updateAllocsDesiredTransitions(transitions, evals))
}

// UpsertPeriodicLaunch is StateStore.UpsertPeriodicLaunch in the group.
func (b *GroupWrite) UpsertPeriodicLaunch(index uint64, child *structs.Job, eval *structs.Evaluation, launch *structs.PeriodicLaunch) error {
	if err := checkPeriodicLaunch(launch); err != nil {
		return err
	}
	return b.write(index, upsertPeriodicLaunch(child, eval, launch))
}
