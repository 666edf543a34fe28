package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableBatchQueue holds the batch job queue: one row per queued or
// released job, with its Raft-stored sort key and release record.
const TableBatchQueue = "batch_queue"

// TableBatchQueueStats holds one row, the queue table's counts.
const TableBatchQueueStats = "batch_queue_stats"

// batchQueueRecord and batchQueueStatsRecord tag batch queue rows in
// snapshot streams. They are far from the other record types so that
// tables added later do not collide.
const (
	batchQueueRecord      recordType = 200
	batchQueueStatsRecord recordType = 201
)

func init() {
	type table = struct {
		table  string
		record recordType
		newRow func() any
	}
	snapshotTables = append(snapshotTables,
		table{TableBatchQueue, batchQueueRecord, func() any { return new(structs.BatchQueueEntry) }},
		table{TableBatchQueueStats, batchQueueStatsRecord, func() any { return new(BatchQueueStats) }})
}

// BatchQueueStats counts the rows of the batch queue table. Every write
// that changes the table keeps it in step, in the same transaction, so
// the leader reads the queue's depth and its enqueue and removal totals
// without scanning the table.
type BatchQueueStats struct {
	ID string // always TableBatchQueue: the table has one row

	Queued   int // rows waiting for release
	Released int // rows released and not yet placed or removed

	// Enqueued counts every row ever added; Removed every row that left
	// without being placed (job stopped, purged, re-registered as another
	// type or, after its release, with a new version, or the queue
	// switched off).
	Enqueued uint64
	Removed  uint64
}

func batchQueueTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableBatchQueue,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "JobID"},
				}},
			},
		},
	}
}

func batchQueueStatsTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableBatchQueueStats,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {Name: "id", Unique: true, Indexer: &memdb.StringFieldIndex{Field: "ID"}},
		},
	}
}

// BatchQueueStats returns the queue table's counts.
func (r *reader) BatchQueueStats(ws memdb.WatchSet) (BatchQueueStats, error) {
	return batchQueueStats(r.db.Txn(false), ws)
}

func batchQueueStats(txn *memdb.Txn, ws memdb.WatchSet) (BatchQueueStats, error) {
	watchCh, raw, err := txn.FirstWatch(TableBatchQueueStats, "id", TableBatchQueue)
	if err != nil {
		return BatchQueueStats{}, fmt.Errorf("read batch queue stats: %w", err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return BatchQueueStats{ID: TableBatchQueue}, nil
	}
	return *raw.(*BatchQueueStats), nil
}

// countBatchQueue applies a change to the queue table's counts.
func (tx *writeTxn) countBatchQueue(change func(*BatchQueueStats)) error {
	s, err := batchQueueStats(tx.Txn, nil)
	if err != nil {
		return err
	}
	change(&s)
	if err := tx.Insert(TableBatchQueueStats, &s); err != nil {
		return fmt.Errorf("update batch queue stats: %w", err)
	}
	tx.touch(TableBatchQueueStats)
	return nil
}

// BatchQueueTableIndex returns the Raft index of the last write to the
// queue table and watches it: ws fires on every enqueue, replacement,
// release and removal.
func (r *reader) BatchQueueTableIndex(ws memdb.WatchSet) (uint64, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableIndex, "id", TableBatchQueue)
	if err != nil {
		return 0, fmt.Errorf("read batch queue index: %w", err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return 0, nil
	}
	return raw.(*IndexEntry).Value, nil
}

// SetBatchQueueFeed makes every write that adds batch queue rows hand
// them to fn once committed, so the leader's queue learns of new rows
// without an index over the table (an index would cost a few hundred
// bytes a row) and without scanning it. fn runs inside the FSM's apply
// and must not block. Set it before the store takes writes.
func (s *StateStore) SetBatchQueueFeed(fn func([]*structs.BatchQueueEntry)) {
	s.batchQueueFeed = fn
}

// BatchQueueEntries returns every batch queue row, unordered.
func (r *reader) BatchQueueEntries(ws memdb.WatchSet) ([]*structs.BatchQueueEntry, error) {
	iter, err := r.db.Txn(false).Get(TableBatchQueue, "id")
	if err != nil {
		return nil, fmt.Errorf("list batch queue: %w", err)
	}
	return collect[*structs.BatchQueueEntry](ws, iter, nil), nil
}

// BatchQueueEach calls fn with every batch queue row, unordered, without
// collecting them.
func (r *reader) BatchQueueEach(fn func(*structs.BatchQueueEntry)) error {
	iter, err := r.db.Txn(false).Get(TableBatchQueue, "id")
	if err != nil {
		return fmt.Errorf("list batch queue: %w", err)
	}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		fn(raw.(*structs.BatchQueueEntry))
	}
	return nil
}

// BatchQueueEntryByJob returns the job's queue row, or nil.
func (r *reader) BatchQueueEntryByJob(ws memdb.WatchSet, namespace, jobID string) (*structs.BatchQueueEntry, error) {
	return batchQueueEntry(r.db.Txn(false), ws, namespace, jobID)
}

func batchQueueEntry(txn *memdb.Txn, ws memdb.WatchSet, namespace, jobID string) (*structs.BatchQueueEntry, error) {
	watchCh, raw, err := txn.FirstWatch(TableBatchQueue, "id", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("batch queue lookup %q: %w", jobID, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.BatchQueueEntry), nil
}

// BatchQueueHoldsEval reports whether the eval waits in the batch queue
// (its job's entry holds it, not yet released); such an eval must not go
// to the broker.
func (r *reader) BatchQueueHoldsEval(eval *structs.Evaluation) bool {
	e, err := batchQueueEntry(r.db.Txn(false), nil, eval.Namespace, eval.JobID)
	return err == nil && e != nil && e.EvalID == eval.ID && !e.Released()
}

// BatchQueueApply writes one round of the leader's decisions: the Done
// entries, placed, leave the table, and the Release entries get their
// release record. It returns the evals to hand to the broker. An entry
// that no longer holds the named eval, or a release of an entry released
// already, is skipped, so a repeated or stale decision is never applied
// twice.
func (s *StateStore) BatchQueueApply(index uint64, req *structs.BatchQueueReleaseRequest) ([]*structs.Evaluation, error) {
	var evals []*structs.Evaluation
	err := s.write(index, func(tx *writeTxn) error {
		for _, ref := range req.Done {
			entry, err := batchQueueEntry(tx.Txn, nil, ref.Namespace, ref.JobID)
			if err != nil {
				return err
			}
			if entry == nil || entry.EvalID != ref.EvalID || !entry.Released() {
				continue
			}
			if err := tx.Delete(TableBatchQueue, entry); err != nil {
				return fmt.Errorf("remove %q from batch queue: %w", ref.JobID, err)
			}
			tx.touch(TableBatchQueue)
			if err := tx.countBatchQueue(func(s *BatchQueueStats) { s.Released-- }); err != nil {
				return err
			}
		}
		for _, ref := range req.Release {
			entry, err := batchQueueEntry(tx.Txn, nil, ref.Namespace, ref.JobID)
			if err != nil {
				return err
			}
			if entry == nil || entry.EvalID != ref.EvalID || entry.Released() {
				continue
			}
			job, err := jobByID(tx.Txn, nil, ref.Namespace, ref.JobID)
			if err != nil {
				return err
			}
			if job == nil {
				continue // purged: its entry went with it
			}
			if err := tx.dropBatchQueueControl(entry.Namespace, entry.JobID); err != nil {
				return err
			}
			c := entry.Copy()
			c.Release = &structs.BatchQueueRelease{Index: index, Time: req.ReleaseTime, JobVersion: job.Version}
			if err := tx.Insert(TableBatchQueue, c); err != nil {
				return fmt.Errorf("release %q: %w", ref.JobID, err)
			}
			tx.touch(TableBatchQueue)
			if err := tx.countBatchQueue(func(s *BatchQueueStats) { s.Queued--; s.Released++ }); err != nil {
				return err
			}
			eval, err := tx.evalByID(ref.EvalID)
			if err != nil {
				return err
			}
			if eval != nil && eval.Status == structs.EvalStatusPending {
				evals = append(evals, eval)
			}
		}
		return nil
	})
	return evals, err
}

// drainBatchQueue empties the queue table, as switching the queue off
// does, and returns the pending evals of the entries that were still
// queued, for the broker.
func (tx *writeTxn) drainBatchQueue() ([]*structs.Evaluation, error) {
	iter, err := tx.Get(TableBatchQueue, "id")
	if err != nil {
		return nil, fmt.Errorf("drain batch queue: %w", err)
	}
	entries := collect[*structs.BatchQueueEntry](nil, iter, nil)
	if len(entries) == 0 {
		return nil, nil
	}
	var evals []*structs.Evaluation
	for _, e := range entries {
		if err := tx.Delete(TableBatchQueue, e); err != nil {
			return nil, fmt.Errorf("drain batch queue: %w", err)
		}
		if err := tx.dropBatchQueueControl(e.Namespace, e.JobID); err != nil {
			return nil, err
		}
		if e.Released() {
			continue
		}
		ev, err := tx.evalByID(e.EvalID)
		if err != nil {
			return nil, fmt.Errorf("drain batch queue: %w", err)
		}
		if ev != nil && ev.Status == structs.EvalStatusPending {
			evals = append(evals, ev)
		}
	}
	if testHookDrainBatchQueue != nil {
		if err := testHookDrainBatchQueue(); err != nil {
			return nil, fmt.Errorf("drain batch queue: %w", err)
		}
	}
	tx.touch(TableBatchQueue)
	err = tx.countBatchQueue(func(s *BatchQueueStats) {
		s.Removed += uint64(len(entries))
		s.Queued, s.Released = 0, 0
	})
	return evals, err
}

// testHookDrainBatchQueue, set only by tests, runs after the drain has
// deleted the rows: an error from it shows that a configuration write
// failing halfway leaves nothing behind.
var testHookDrainBatchQueue func() error

// BatchQueueRouting is what the batch queue's routing rule decides for a
// newly written eval.
type BatchQueueRouting int

const (
	// BatchQueuePass leaves the queue table as it is: the eval goes to
	// the broker or blocked evals as usual.
	BatchQueuePass BatchQueueRouting = iota
	// BatchQueueEnqueue adds the eval's job to the queue with a new sort
	// key taken from the eval and the write's Raft index.
	BatchQueueEnqueue
	// BatchQueueReplace makes the job's queued entry hold the eval instead
	// of its current one, which is canceled; the entry keeps its place.
	BatchQueueReplace
)

// BatchQueueFacts answers a routing rule's questions about a new eval's
// job from inside the write that stores the eval. Each answer costs a
// read, so a rule asks only what it needs.
type BatchQueueFacts interface {
	// Enabled reports whether the replicated configuration has the queue on.
	Enabled() (bool, error)
	// Job returns the eval's job, nil when it is gone.
	Job() (*structs.Job, error)
	// Entry returns the job's queue row, nil when it has none.
	Entry() (*structs.BatchQueueEntry, error)
	// LiveAlloc reports whether the job has a non-terminal alloc.
	LiveAlloc() (bool, error)
}

// BatchQueueRouter decides whether a newly written eval waits in the
// batch queue. The policy belongs to the queue (batchqueue.Route); the
// store applies its decision in the same transaction.
type BatchQueueRouter func(eval *structs.Evaluation, facts BatchQueueFacts) (BatchQueueRouting, error)

// SetBatchQueueRouter makes every write of a new eval ask route whether
// it enters the batch queue. A store without a router queues nothing.
// Set it before the store takes writes.
func (s *StateStore) SetBatchQueueRouter(route BatchQueueRouter) {
	s.batchQueueRouter = route
}

// routeFacts reads a routing rule's facts inside a write.
type routeFacts struct {
	tx   *writeTxn
	eval *structs.Evaluation
}

func (f routeFacts) Enabled() (bool, error) {
	cfg, err := schedulerConfig(f.tx.Txn, nil)
	if err != nil || cfg == nil {
		return false, err
	}
	return cfg.BatchQueue.Enabled, nil
}

func (f routeFacts) Job() (*structs.Job, error) {
	return jobByID(f.tx.Txn, nil, f.eval.Namespace, f.eval.JobID)
}

func (f routeFacts) Entry() (*structs.BatchQueueEntry, error) {
	return batchQueueEntry(f.tx.Txn, nil, f.eval.Namespace, f.eval.JobID)
}

func (f routeFacts) LiveAlloc() (bool, error) {
	iter, err := f.tx.Get(TableAllocs, "job", f.eval.Namespace, f.eval.JobID)
	if err != nil {
		return false, fmt.Errorf("batch queue: allocs of %q: %w", f.eval.JobID, err)
	}
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if !raw.(*structs.Allocation).TerminalStatus() {
			return true, nil
		}
	}
	return false, nil
}

// batchQueueNewEval applies the router's decision for a newly written
// eval: a new entry, or a queued entry that holds the eval instead of the
// one it replaces (canceled in the same transaction, so a restore never
// finds two).
func (tx *writeTxn) batchQueueNewEval(eval *structs.Evaluation) error {
	if tx.route == nil {
		return nil
	}
	switch decision, err := tx.route(eval, routeFacts{tx: tx, eval: eval}); {
	case err != nil:
		return err
	case decision == BatchQueueReplace:
		entry, err := batchQueueEntry(tx.Txn, nil, eval.Namespace, eval.JobID)
		if err != nil {
			return err
		}
		if entry == nil || entry.Released() {
			return fmt.Errorf("batch queue: replace the eval of %q: no queued entry", eval.JobID)
		}
		if err := tx.cancelQueuedEval(entry.EvalID, fmt.Sprintf("replaced in the batch queue by evaluation %q", eval.ID)); err != nil {
			return err
		}
		c := entry.Copy()
		c.EvalID = eval.ID
		if err := tx.Insert(TableBatchQueue, c); err != nil {
			return fmt.Errorf("requeue %q: %w", eval.JobID, err)
		}
		tx.touch(TableBatchQueue)
		tx.markQueued(eval.ID)
		return tx.summaryQueuedInBatchQueue(eval.Namespace, eval.JobID)
	case decision == BatchQueueEnqueue:
		entry := &structs.BatchQueueEntry{
			Namespace:    eval.Namespace,
			JobID:        eval.JobID,
			EvalID:       eval.ID,
			Priority:     eval.Priority,
			EnqueueIndex: tx.index,
			EnqueueTime:  eval.CreateTime,
		}
		if err := tx.Insert(TableBatchQueue, entry); err != nil {
			return fmt.Errorf("enqueue %q: %w", eval.JobID, err)
		}
		tx.touch(TableBatchQueue)
		tx.enqueued = append(tx.enqueued, entry)
		tx.markQueued(eval.ID)
		if err := tx.summaryQueuedInBatchQueue(eval.Namespace, eval.JobID); err != nil {
			return err
		}
		return tx.countBatchQueue(func(s *BatchQueueStats) { s.Queued++; s.Enqueued++ })
	}
	return nil
}

// batchQueueStillHolds records a rewritten pending eval as queued when
// its job's entry holds it: routing happens once per eval ID, and a
// rewrite must not send a held eval to the broker.
func (tx *writeTxn) batchQueueStillHolds(eval *structs.Evaluation) error {
	if tx.route == nil || eval.Status != structs.EvalStatusPending {
		return nil
	}
	entry, err := batchQueueEntry(tx.Txn, nil, eval.Namespace, eval.JobID)
	if err != nil {
		return err
	}
	if entry != nil && entry.EvalID == eval.ID && !entry.Released() {
		tx.markQueued(eval.ID)
	}
	return nil
}

// markQueued records that the eval waits in the batch queue, for the
// writer to hand back (GroupWrite.Queued).
func (tx *writeTxn) markQueued(evalID string) {
	if tx.queued == nil {
		tx.queued = make(map[string]struct{})
	}
	tx.queued[evalID] = struct{}{}
}

// batchQueueJobChanged keeps the queue table in step with a job write: a
// stopped job leaves the queue (its queued eval canceled), and a released
// job registered with a new version is done; the new version's eval is
// routed afresh.
func (tx *writeTxn) batchQueueJobChanged(job *structs.Job) error {
	entry, err := batchQueueEntry(tx.Txn, nil, job.Namespace, job.ID)
	if err != nil || entry == nil {
		return err
	}
	switch {
	case job.Stop:
		return tx.removeBatchQueueEntry(entry, "job stopped while queued")
	case job.Type != structs.JobTypeBatch:
		// Its new eval is not a batch eval and went to the broker; the
		// held one is stale.
		return tx.removeBatchQueueEntry(entry, fmt.Sprintf("job re-registered as a %s job while queued", job.Type))
	case entry.Released() && job.Version != entry.Release.JobVersion:
		return tx.removeBatchQueueEntry(entry, "")
	}
	return nil
}

// batchQueueJobDeleted removes a purged job's entry.
func (tx *writeTxn) batchQueueJobDeleted(namespace, jobID string) error {
	entry, err := batchQueueEntry(tx.Txn, nil, namespace, jobID)
	if err != nil || entry == nil {
		return err
	}
	return tx.removeBatchQueueEntry(entry, "job purged while queued")
}

func (tx *writeTxn) removeBatchQueueEntry(entry *structs.BatchQueueEntry, why string) error {
	if err := tx.Delete(TableBatchQueue, entry); err != nil {
		return fmt.Errorf("remove %q from batch queue: %w", entry.JobID, err)
	}
	if err := tx.dropBatchQueueControl(entry.Namespace, entry.JobID); err != nil {
		return err
	}
	tx.touch(TableBatchQueue)
	err := tx.countBatchQueue(func(s *BatchQueueStats) {
		if entry.Released() {
			s.Released--
		} else {
			s.Queued--
		}
		s.Removed++
	})
	if err != nil || entry.Released() || why == "" {
		return err
	}
	return tx.cancelQueuedEval(entry.EvalID, why)
}

// cancelQueuedEval cancels a pending eval that the queue held back.
func (tx *writeTxn) cancelQueuedEval(evalID, why string) error {
	old, err := tx.evalByID(evalID)
	if err != nil || old == nil || old.Status != structs.EvalStatusPending {
		return err
	}
	c := old.Copy()
	c.Status = structs.EvalStatusCancelled
	c.StatusDescription = why
	c.ModifyIndex = tx.index
	if err := tx.Insert(TableEvals, c); err != nil {
		return fmt.Errorf("cancel queued eval %q: %w", evalID, err)
	}
	tx.touch(TableEvals)
	tx.markJob(c.Namespace, c.JobID)
	return nil
}
