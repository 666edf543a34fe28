package state

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// AllocByID returns the allocation, or nil.
func (r *reader) AllocByID(ws memdb.WatchSet, id string) (*structs.Allocation, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableAllocs, "id", id)
	if err != nil {
		return nil, fmt.Errorf("alloc lookup %q: %w", id, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Allocation), nil
}

// AllocsByJob returns the allocations of a job. Unless anyCreateIndex is
// set, allocations left by an earlier job of the same ID (purged and
// registered again) are left out.
func (r *reader) AllocsByJob(ws memdb.WatchSet, namespace, jobID string, anyCreateIndex bool) ([]*structs.Allocation, error) {
	txn := r.db.Txn(false)
	job, err := jobByID(txn, ws, namespace, jobID)
	if err != nil {
		return nil, err
	}
	iter, err := txn.Get(TableAllocs, "job", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("list allocs of job %q: %w", jobID, err)
	}
	return collect(ws, iter, func(a *structs.Allocation) bool {
		return anyCreateIndex || job == nil || a.Job == nil || a.Job.CreateIndex == job.CreateIndex
	}), nil
}

// AllocsByNode returns every allocation placed on a node.
func (r *reader) AllocsByNode(ws memdb.WatchSet, nodeID string) ([]*structs.Allocation, error) {
	iter, err := r.db.Txn(false).Get(TableAllocs, "node_prefix", nodeID)
	if err != nil {
		return nil, fmt.Errorf("list allocs of node %q: %w", nodeID, err)
	}
	// The prefix also matches longer node IDs that start with nodeID.
	return collect(ws, iter, func(a *structs.Allocation) bool { return a.NodeID == nodeID }), nil
}

// AllocsByNodeTerminal returns the allocations of a node that are (or are
// not) terminal.
func (r *reader) AllocsByNodeTerminal(ws memdb.WatchSet, nodeID string, terminal bool) ([]*structs.Allocation, error) {
	iter, err := r.db.Txn(false).Get(TableAllocs, "node", nodeID, terminal)
	if err != nil {
		return nil, fmt.Errorf("list allocs of node %q: %w", nodeID, err)
	}
	return collect[*structs.Allocation](ws, iter, nil), nil
}

// AllocsByEval returns the allocations an evaluation placed or updated.
// An eval's allocs belong to its job, so they are read from the job's
// allocs (there is no eval index, see allocTableSchema); for an eval no
// longer in the state (deleted with `nomad eval delete`, or an ID that
// never was one) every alloc is scanned, as the allocs may outlive it.
func (r *reader) AllocsByEval(ws memdb.WatchSet, evalID string) ([]*structs.Allocation, error) {
	txn := r.db.Txn(false)
	var eval *structs.Evaluation
	// An ID that is not a UUID names no eval: the lookup's error only
	// says so, and the scan below answers for it.
	if watchCh, raw, err := txn.FirstWatch(TableEvals, "id", evalID); err == nil {
		ws.Add(watchCh)
		if raw != nil {
			eval = raw.(*structs.Evaluation)
		}
	}
	var (
		iter memdb.ResultIterator
		err  error
	)
	if eval != nil {
		iter, err = txn.Get(TableAllocs, "job", eval.Namespace, eval.JobID)
	} else {
		iter, err = txn.Get(TableAllocs, "id")
	}
	if err != nil {
		return nil, fmt.Errorf("list allocs of eval %q: %w", evalID, err)
	}
	return collect(ws, iter, func(a *structs.Allocation) bool { return a.EvalID == evalID }), nil
}

// Allocs returns every allocation in creation order.
func (r *reader) Allocs(ws memdb.WatchSet) ([]*structs.Allocation, error) {
	iter, err := r.db.Txn(false).Get(TableAllocs, "id")
	if err != nil {
		return nil, fmt.Errorf("list allocs: %w", err)
	}
	allocs := collect[*structs.Allocation](ws, iter, nil)
	// The id index yields ID order; a stable sort keeps it among allocs
	// of one CreateIndex.
	slices.SortStableFunc(allocs, func(a, b *structs.Allocation) int { return cmp.Compare(a.CreateIndex, b.CreateIndex) })
	return allocs, nil
}

// AllocsAnyOrder returns every allocation, in no promised order: for
// callers that fold over all of them (capacity sums, a key-in-use check)
// and need not pay for Allocs' sort.
func (r *reader) AllocsAnyOrder(ws memdb.WatchSet) ([]*structs.Allocation, error) {
	iter, err := r.db.Txn(false).Get(TableAllocs, "id")
	if err != nil {
		return nil, fmt.Errorf("list allocs: %w", err)
	}
	return collect[*structs.Allocation](ws, iter, nil), nil
}

// AllocsByNamespace returns the allocations of one namespace, ordered by ID.
func (r *reader) AllocsByNamespace(ws memdb.WatchSet, namespace string) ([]*structs.Allocation, error) {
	iter, err := allocsOfNamespace(r.db.Txn(false), namespace)
	if err != nil {
		return nil, fmt.Errorf("list allocs of namespace %q: %w", namespace, err)
	}
	allocs := collect[*structs.Allocation](ws, iter, nil)
	slices.SortFunc(allocs, func(a, b *structs.Allocation) int { return strings.Compare(a.ID, b.ID) })
	return allocs, nil
}

// allocsOfNamespace iterates over the allocations of one namespace, by
// job. The empty JobID prefix ends the namespace at its terminator, so
// "prod" does not match the allocs of "prod2".
func allocsOfNamespace(txn *memdb.Txn, namespace string) (memdb.ResultIterator, error) {
	return txn.Get(TableAllocs, "job_prefix", namespace, "")
}

// AllocsByIDPrefix returns the allocations of a namespace ("*" for all)
// whose ID starts with prefix, ordered by ID.
func (r *reader) AllocsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Allocation, error) {
	iter, err := r.db.Txn(false).Get(TableAllocs, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list allocs with prefix %q: %w", prefix, err)
	}
	return collect(ws, iter, func(a *structs.Allocation) bool {
		return matchNamespace(namespace, a.Namespace)
	}), nil
}

// UpsertAllocs writes allocations as the server sees them. A new alloc
// gets CreateIndex = ModifyIndex = AllocModifyIndex = index. An existing
// one keeps its CreateIndex, CreateTime and the client's task states and
// client status; the server's client status wins only when it ends an
// alloc the client has not ended (lost, unknown, complete, failed). An
// alloc without a Job gets the stored one; an alloc whose job is unknown
// is an error.
func (s *StateStore) UpsertAllocs(index uint64, allocs []*structs.Allocation) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, alloc := range allocs {
			if err := tx.upsertAlloc(alloc); err != nil {
				return err
			}
		}
		return nil
	})
}

// UpdateAllocsFromClient applies a client's status reports. Only the
// client-owned fields are taken: ClientStatus, ClientDescription,
// TaskStates and ModifyTime. ModifyIndex becomes index; AllocModifyIndex,
// which tracks server changes, stays. Reports for allocs that no longer
// exist (garbage collected) are skipped.
func (s *StateStore) UpdateAllocsFromClient(index uint64, allocs []*structs.Allocation) error {
	return s.write(index, updateAllocsFromClient(allocs))
}

func updateAllocsFromClient(allocs []*structs.Allocation) func(tx *writeTxn) error {
	return func(tx *writeTxn) error {
		for _, update := range allocs {
			if err := tx.updateAllocFromClient(update); err != nil {
				return err
			}
		}
		return nil
	}
}

// UpsertPlanResults commits a plan: it stops the plan's stopped allocs
// (their desired status and description are merged onto the stored
// alloc), writes the placed and updated allocs as UpsertAllocs does (an
// alloc without a Job gets the request's job), bumps the planned eval's
// ModifyIndex and writes the request's evals.
func (s *StateStore) UpsertPlanResults(index uint64, req *structs.ApplyPlanResultsRequest) error {
	if req == nil {
		return errNilPlanResults
	}
	return s.write(index, upsertPlanResults(req))
}

var errNilPlanResults = errors.New("apply plan results: request is nil")

func upsertPlanResults(req *structs.ApplyPlanResultsRequest) func(tx *writeTxn) error {
	return func(tx *writeTxn) error {
		for _, stopped := range req.AllocsStopped {
			if err := tx.stopAlloc(stopped); err != nil {
				return fmt.Errorf("apply plan results of eval %q: %w", req.EvalID, err)
			}
		}
		for _, alloc := range req.AllocsUpdated {
			if alloc != nil && alloc.Job == nil && req.Job != nil {
				alloc.Job = req.Job
			}
			if err := tx.upsertAlloc(alloc); err != nil {
				return fmt.Errorf("apply plan results of eval %q: %w", req.EvalID, err)
			}
			if err := tx.linkPrevious(alloc); err != nil {
				return fmt.Errorf("apply plan results of eval %q: %w", req.EvalID, err)
			}
		}
		// The planned eval's ModifyIndex moves to this commit, unless the
		// request writes the eval itself (the scheduler's verdict).
		if req.EvalID != "" && !slices.ContainsFunc(req.Evals, func(e *structs.Evaluation) bool { return e.ID == req.EvalID }) {
			eval, err := tx.evalByID(req.EvalID)
			if err != nil {
				return fmt.Errorf("apply plan results: %w", err)
			}
			if eval != nil {
				c := eval.Copy()
				c.ModifyIndex = tx.index
				if err := tx.Insert(TableEvals, c); err != nil {
					return fmt.Errorf("apply plan results of eval %q: %w", req.EvalID, err)
				}
				tx.touch(TableEvals)
			}
		}
		for _, eval := range req.Evals {
			if err := tx.upsertEval(eval); err != nil {
				return fmt.Errorf("apply plan results of eval %q: %w", req.EvalID, err)
			}
		}
		return nil
	}
}

// linkPrevious points a replacement's predecessor at it (NextAllocation),
// so the lineage of a rescheduled alloc can be followed both ways.
func (tx *writeTxn) linkPrevious(alloc *structs.Allocation) error {
	if alloc == nil || alloc.PreviousAllocation == "" {
		return nil
	}
	prev, err := tx.allocByID(alloc.PreviousAllocation)
	if err != nil || prev == nil || prev.NextAllocation == alloc.ID {
		return err
	}
	c := prev.Copy()
	c.NextAllocation = alloc.ID
	c.ModifyIndex = tx.index
	if err := tx.Insert(TableAllocs, c); err != nil {
		return fmt.Errorf("link alloc %q to its replacement: %w", prev.ID, err)
	}
	return nil
}

func (tx *writeTxn) allocByID(id string) (*structs.Allocation, error) {
	raw, err := tx.First(TableAllocs, "id", id)
	if err != nil {
		return nil, fmt.Errorf("alloc lookup %q: %w", id, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Allocation), nil
}

func (tx *writeTxn) upsertAlloc(alloc *structs.Allocation) error {
	if alloc == nil {
		return errors.New("upsert alloc: alloc is nil")
	}
	if alloc.ID == "" {
		return errors.New("upsert alloc: missing alloc ID")
	}
	if alloc.Namespace == "" {
		return fmt.Errorf("upsert alloc %q: missing namespace", alloc.ID)
	}
	if alloc.JobID == "" {
		return fmt.Errorf("upsert alloc %q: missing job ID", alloc.ID)
	}
	existing, err := tx.allocByID(alloc.ID)
	if err != nil {
		return fmt.Errorf("upsert alloc: %w", err)
	}
	if alloc.Job == nil {
		if existing != nil && existing.Job != nil {
			alloc.Job = existing.Job
		} else {
			job, err := jobByID(tx.Txn, nil, alloc.Namespace, alloc.JobID)
			if err != nil {
				return fmt.Errorf("upsert alloc %q: %w", alloc.ID, err)
			}
			if job == nil {
				return fmt.Errorf("upsert alloc %q: job %q in namespace %q: %w", alloc.ID, alloc.JobID, alloc.Namespace, ErrNotFound)
			}
			alloc.Job = job
		}
	}

	if existing == nil {
		alloc.CreateIndex = tx.index
	} else {
		alloc.CreateIndex = existing.CreateIndex
		alloc.CreateTime = existing.CreateTime
		alloc.TaskStates = existing.TaskStates
		if !serverEndsAlloc(alloc.ClientStatus, existing.ClientStatus) {
			alloc.ClientStatus = existing.ClientStatus
			alloc.ClientDescription = existing.ClientDescription
		}
	}
	alloc.ModifyIndex = tx.index
	alloc.AllocModifyIndex = tx.index
	return tx.putAlloc(alloc, existing)
}

// stopAlloc merges the server's stop decision onto the stored alloc.
func (tx *writeTxn) stopAlloc(stopped *structs.Allocation) error {
	if stopped == nil {
		return errors.New("stop alloc: alloc is nil")
	}
	existing, err := tx.allocByID(stopped.ID)
	if err != nil {
		return fmt.Errorf("stop alloc: %w", err)
	}
	if existing == nil {
		return fmt.Errorf("stop alloc %q: %w", stopped.ID, ErrNotFound)
	}
	c := *existing
	c.DesiredStatus = stopped.DesiredStatus
	if c.DesiredStatus == "" || c.DesiredStatus == structs.AllocDesiredStatusRun {
		c.DesiredStatus = structs.AllocDesiredStatusStop
	}
	c.DesiredDescription = stopped.DesiredDescription
	if serverEndsAlloc(stopped.ClientStatus, existing.ClientStatus) {
		c.ClientStatus = stopped.ClientStatus
	}
	if stopped.FollowupEvalID != "" {
		c.FollowupEvalID = stopped.FollowupEvalID
	}
	if stopped.ModifyTime != 0 {
		c.ModifyTime = stopped.ModifyTime
	}
	c.ModifyIndex = tx.index
	c.AllocModifyIndex = tx.index
	return tx.putAlloc(&c, existing)
}

// serverEndsAlloc reports whether a client status set by the server
// replaces the stored one: the server may end (or mark unknown) an alloc
// the client has not ended, but it never revives one, and a copy of a
// running status it planned from must not undo a newer client report.
func serverEndsAlloc(proposed, stored string) bool {
	switch proposed {
	case structs.AllocClientStatusLost, structs.AllocClientStatusUnknown,
		structs.AllocClientStatusComplete, structs.AllocClientStatusFailed:
	default:
		return false
	}
	switch stored {
	case structs.AllocClientStatusComplete, structs.AllocClientStatusFailed, structs.AllocClientStatusLost:
		return false
	}
	return true
}

func (tx *writeTxn) updateAllocFromClient(update *structs.Allocation) error {
	if update == nil {
		return errors.New("update alloc from client: alloc is nil")
	}
	existing, err := tx.allocByID(update.ID)
	if err != nil {
		return fmt.Errorf("update alloc from client: %w", err)
	}
	if existing == nil {
		return nil
	}
	c := *existing
	c.ClientStatus = update.ClientStatus
	c.ClientDescription = update.ClientDescription
	c.TaskStates = update.TaskStates
	if update.NetworkStatus != nil {
		c.NetworkStatus = update.NetworkStatus
	}
	if update.ModifyTime != 0 {
		c.ModifyTime = update.ModifyTime
	}
	c.ModifyIndex = tx.index
	return tx.putAlloc(&c, existing)
}

// putAlloc inserts an alloc whose index fields are set and brings its
// job's summary and status along.
func (tx *writeTxn) putAlloc(alloc, existing *structs.Allocation) error {
	if err := tx.Insert(TableAllocs, alloc); err != nil {
		return fmt.Errorf("upsert alloc %q: %w", alloc.ID, err)
	}
	tx.touch(TableAllocs)
	if err := tx.deleteAllocServiceRegistrations(alloc); err != nil {
		return fmt.Errorf("upsert alloc %q: %w", alloc.ID, err)
	}
	// A client's own status report leaves the server's side of the alloc
	// (AllocModifyIndex) as it was, and that is all a node's alloc
	// watchers answer with: waking them would only have every client
	// re-read its allocs after each report it makes.
	if existing == nil || existing.AllocModifyIndex != alloc.AllocModifyIndex || existing.NodeID != alloc.NodeID {
		tx.touchNodeAllocs(alloc.NodeID)
		if existing != nil && existing.NodeID != alloc.NodeID {
			tx.touchNodeAllocs(existing.NodeID)
		}
	}
	tx.touchJobAllocs(alloc.Namespace, alloc.JobID)
	if err := tx.updateSummaryWithAlloc(alloc, existing); err != nil {
		return fmt.Errorf("upsert alloc %q: %w", alloc.ID, err)
	}
	tx.markJob(alloc.Namespace, alloc.JobID)
	return nil
}
