// Package state holds the server's cluster state: the go-memdb schema,
// every read and write transaction, the index table, watch sets and the
// blocking-query helper, and snapshot/restore.
//
// Every write takes the Raft index of the log entry that caused it and
// commits in one memdb transaction, so a failed write leaves nothing
// behind. The package knows nothing about Raft, RPC or HTTP; the FSM calls
// the write methods.
//
// Objects returned by reads are shared with the store and with other
// readers: callers must not modify them. Writers copy a stored object
// before changing it. Objects passed to a write become owned by the store
// (their index fields are set in place) and must not be modified afterwards;
// a failed write may already have set those fields on its arguments.
package state

import (
	"fmt"
	"sync"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// StateStore is the server's replicated cluster state.
type StateStore struct {
	reader

	abandon *abandonSignal

	// batchQueueFeed receives, after each commit, the batch queue rows
	// the write added (see SetBatchQueueFeed).
	batchQueueFeed func([]*structs.BatchQueueEntry)

	// batchQueueRouter decides which new evals enter the batch queue
	// (see SetBatchQueueRouter).
	batchQueueRouter BatchQueueRouter

	// changeFeed receives, after each commit, the objects the write
	// changed (see SetChangeFeed).
	changeFeed ChangeFeed

	// nodeAllocs and jobAllocs wake the watchers of a node's or a job's
	// allocs (see WatchNodeAllocs, WatchJobAllocs).
	nodeAllocs, jobAllocs allocWatch
	// nodeSets serves the schedulers' node lists to this store's
	// snapshots; a restored store starts with its own.
	nodeSets nodeSetCache
}

// reader holds the read methods shared by StateStore and StateSnapshot.
type reader struct {
	db *memdb.MemDB
}

// abandonSignal is closed when the store is replaced by a restore.
type abandonSignal struct {
	once sync.Once
	ch   chan struct{}
}

// NewStateStore returns an empty store.
func NewStateStore() (*StateStore, error) {
	db, err := memdb.NewMemDB(stateSchema())
	if err != nil {
		return nil, fmt.Errorf("create state store: %w", err)
	}
	txn := db.Txn(true)
	if err := insertBuiltins(txn); err != nil {
		txn.Abort()
		return nil, fmt.Errorf("create state store: %w", err)
	}
	txn.Commit()
	return &StateStore{
		reader:     reader{db: db},
		abandon:    &abandonSignal{ch: make(chan struct{})},
		nodeAllocs: allocWatch{trackIndex: true},
	}, nil
}

// AbandonCh returns a channel closed when the store has been replaced by a
// restore; blocking queries wake on it.
func (s *StateStore) AbandonCh() <-chan struct{} { return s.abandon.ch }

// Abandon marks the store as replaced. It is safe to call more than once.
func (s *StateStore) Abandon() { s.abandon.once.Do(func() { close(s.abandon.ch) }) }

// Index returns the last Raft index that wrote to table, or 0.
func (r *reader) Index(table string) (uint64, error) {
	txn := r.db.Txn(false)
	raw, err := txn.First(TableIndex, "id", table)
	if err != nil {
		return 0, fmt.Errorf("read index of %q: %w", table, err)
	}
	if raw == nil {
		return 0, nil
	}
	return raw.(*IndexEntry).Value, nil
}

// LatestIndex returns the highest index of any table, or 0 for an empty
// store.
func (r *reader) LatestIndex() (uint64, error) {
	txn := r.db.Txn(false)
	iter, err := txn.Get(TableIndex, "id")
	if err != nil {
		return 0, fmt.Errorf("read latest index: %w", err)
	}
	var max uint64
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		if v := raw.(*IndexEntry).Value; v > max {
			max = v
		}
	}
	return max, nil
}

// writeTxn is a memdb write transaction that remembers which tables and
// jobs it touched, so that the index table and job statuses are brought up
// to date once, at commit.
type writeTxn struct {
	*memdb.Txn
	index uint64

	touched map[string]struct{}

	// dirtyJobs are jobs whose status must be recomputed before commit.
	dirtyJobs map[structs.NamespacedID]struct{}

	// evalDelete makes a job with neither allocs nor evals left dead
	// rather than pending, because its evals were garbage collected.
	evalDelete bool

	// enqueued are the batch queue rows this write added.
	enqueued []*structs.BatchQueueEntry

	// queued are the IDs of the evals this write stored that wait in the
	// batch queue (see GroupWrite.Queued).
	queued map[string]struct{}

	// route is the store's batch queue router, nil for none.
	route BatchQueueRouter

	// allocNodes and allocJobs are the nodes and jobs (by
	// jobAllocsKey) whose allocs this write changed.
	allocNodes, allocJobs map[string]struct{}
}

// touch records that table was written.
func (tx *writeTxn) touch(tables ...string) {
	for _, t := range tables {
		tx.touched[t] = struct{}{}
	}
}

// markJob asks for the job's status to be recomputed before commit.
func (tx *writeTxn) markJob(namespace, jobID string) {
	tx.dirtyJobs[structs.NamespacedID{Namespace: namespace, ID: jobID}] = struct{}{}
}

// write runs fn in one write transaction at the given Raft index. When fn
// fails the transaction is aborted and nothing is written.
func (s *StateStore) write(index uint64, fn func(tx *writeTxn) error) error {
	tx := &writeTxn{
		Txn:       s.db.Txn(true),
		index:     index,
		touched:   make(map[string]struct{}),
		dirtyJobs: make(map[structs.NamespacedID]struct{}),
		route:     s.batchQueueRouter,
	}
	defer tx.Abort() // no-op after Commit
	if s.changeFeed != nil {
		tx.TrackChanges()
	}

	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.settleJobStatuses(); err != nil {
		return err
	}
	for table := range tx.touched {
		if err := tx.Insert(TableIndex, &IndexEntry{Key: table, Value: index}); err != nil {
			return fmt.Errorf("update index of %q: %w", table, err)
		}
	}
	changes := tx.Changes()
	s.nodeAllocs.mark(tx.allocNodes, index)
	tx.Commit()
	s.nodeAllocs.notify(tx.allocNodes)
	s.jobAllocs.notify(tx.allocJobs)
	if s.changeFeed != nil && len(changes) > 0 {
		s.changeFeed(index, changes)
	}
	if len(tx.enqueued) > 0 && s.batchQueueFeed != nil {
		s.batchQueueFeed(tx.enqueued)
	}
	return nil
}

// insertBuiltins writes the default namespace and the built-in node pools
// into a new store. They carry index 1 but do not touch the index table,
// so an empty store still reports index 0.
func insertBuiltins(txn *memdb.Txn) error {
	if err := txn.Insert(TableNamespaces, structs.BuiltinNamespace()); err != nil {
		return fmt.Errorf("insert default namespace: %w", err)
	}
	for _, p := range structs.BuiltinNodePools() {
		if err := txn.Insert(TableNodePools, p); err != nil {
			return fmt.Errorf("insert node pool %q: %w", p.Name, err)
		}
	}
	return nil
}
