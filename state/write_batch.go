package state

import (
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// WriteBatch applies several Raft entries in one memdb transaction. Each
// entry is written at its own index exactly as a write of its own would
// (the same objects, index fields, job statuses and index table rows), so
// the state after the batch does not depend on how entries were grouped;
// what the batch saves is one commit, and one copy of the upper levels of
// every index tree, per entry.
//
// Nothing is visible to readers until Commit. Reads an entry needs to
// make against the earlier entries of the batch go through the batch
// (BatchQueueHoldsEval). When an entry fails, the batch is spoilt: Abort it and
// apply the entries one at a time instead, which gives the failed entry
// its error and the others their writes.
//
// Only the FSM's apply loop, the store's one writer, may open a batch;
// while it is open no other write can start.
type WriteBatch struct {
	s  *StateStore
	tx *writeTxn

	// err is the first entry error; the batch is spoilt.
	err error

	// nodes and jobs whose allocs some entry changed, woken at commit.
	nodes, jobs map[string]struct{}
	enqueued    []*structs.BatchQueueEntry

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

// BeginBatch opens a write batch.
func (s *StateStore) BeginBatch() *WriteBatch {
	tx := &writeTxn{
		Txn:       s.db.Txn(true),
		touched:   make(map[string]struct{}),
		dirtyJobs: make(map[structs.NamespacedID]struct{}),
		route:     s.batchQueueRouter,
	}
	if s.changeFeed != nil {
		tx.TrackChanges()
	}
	return &WriteBatch{s: s, tx: tx, nodes: make(map[string]struct{}), jobs: make(map[string]struct{})}
}

// write runs one entry's writes at index in the batch's transaction and
// settles them as StateStore.write does before its commit.
func (b *WriteBatch) write(index uint64, fn func(tx *writeTxn) error) error {
	if b.err != nil {
		return fmt.Errorf("write batch spoilt by an earlier entry: %w", b.err)
	}
	tx := b.tx
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
	b.written = true
	b.at = index
	return nil
}

func (b *WriteBatch) settle(index uint64, fn func(tx *writeTxn) error) error {
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
// previous one; an object an earlier entry of the batch wrote too gets,
// as its Before, what that entry left.
func (b *WriteBatch) takeChanges(index uint64) {
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
func (b *WriteBatch) changeKey(c memdb.Change) string {
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
func (b *WriteBatch) Commit() error {
	if b.err != nil {
		b.tx.Abort()
		return fmt.Errorf("write batch spoilt: %w", b.err)
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

// Abort drops everything the batch wrote.
func (b *WriteBatch) Abort() { b.tx.Abort() }

// BatchQueueHoldsEval is StateStore.BatchQueueHoldsEval as of the batch's
// writes so far.
func (b *WriteBatch) BatchQueueHoldsEval(eval *structs.Evaluation) bool {
	e, err := batchQueueEntry(b.tx.Txn, nil, eval.Namespace, eval.JobID)
	return err == nil && e != nil && e.EvalID == eval.ID && !e.Released()
}

// The writes a batch takes: the ones the FSM applies by the thousand.

// UpsertJobWithSubmission is StateStore.UpsertJobWithSubmission in the batch.
func (b *WriteBatch) UpsertJobWithSubmission(index uint64, job *structs.Job, sub *structs.JobSubmission, eval *structs.Evaluation) error {
	return b.write(index, upsertJobWithSubmission(job, sub, eval))
}

// UpsertEvals is StateStore.UpsertEvals in the batch.
func (b *WriteBatch) UpsertEvals(index uint64, evals []*structs.Evaluation) error {
	return b.write(index, upsertEvals(evals))
}

// UpdateAllocsFromClient is StateStore.UpdateAllocsFromClient in the batch.
func (b *WriteBatch) UpdateAllocsFromClient(index uint64, allocs []*structs.Allocation) error {
	return b.write(index, updateAllocsFromClient(allocs))
}

// UpsertPlanResults is StateStore.UpsertPlanResults in the batch.
func (b *WriteBatch) UpsertPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error {
	if req == nil {
		return errNilPlanResults
	}
	return b.write(index, upsertPlanResults(req))
}
