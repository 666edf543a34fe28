package state

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// EvalByID returns the evaluation, or nil.
func (r *reader) EvalByID(ws memdb.WatchSet, id string) (*structs.Evaluation, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableEvals, "id", id)
	if err != nil {
		return nil, fmt.Errorf("eval lookup %q: %w", id, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Evaluation), nil
}

// EvalsByJob returns the evaluations of a job, ordered by status and ID.
func (r *reader) EvalsByJob(ws memdb.WatchSet, namespace, jobID string) ([]*structs.Evaluation, error) {
	iter, err := r.db.Txn(false).Get(TableEvals, "job_prefix", namespace, jobID, "")
	if err != nil {
		return nil, fmt.Errorf("list evals of job %q: %w", jobID, err)
	}
	return collect[*structs.Evaluation](ws, iter, nil), nil
}

// EvalsByIDPrefix returns the evaluations of a namespace ("*" for all)
// whose ID starts with prefix, ordered by ID.
func (r *reader) EvalsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Evaluation, error) {
	iter, err := r.db.Txn(false).Get(TableEvals, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list evals with prefix %q: %w", prefix, err)
	}
	return collect(ws, iter, func(e *structs.Evaluation) bool {
		return matchNamespace(namespace, e.Namespace)
	}), nil
}

// Evals returns every evaluation in creation order.
func (r *reader) Evals(ws memdb.WatchSet) ([]*structs.Evaluation, error) {
	iter, err := r.db.Txn(false).Get(TableEvals, "id")
	if err != nil {
		return nil, fmt.Errorf("list evals: %w", err)
	}
	evals := collect[*structs.Evaluation](ws, iter, nil)
	slices.SortStableFunc(evals, func(a, b *structs.Evaluation) int { return cmp.Compare(a.CreateIndex, b.CreateIndex) })
	return evals, nil
}

// EvalsByNamespace returns the evaluations of one namespace, ordered by ID.
func (r *reader) EvalsByNamespace(ws memdb.WatchSet, namespace string) ([]*structs.Evaluation, error) {
	// The job index starts with the namespace; "" as the job ID's
	// prefix keeps other namespaces that start with this one's name out.
	iter, err := r.db.Txn(false).Get(TableEvals, "job_prefix", namespace, "")
	if err != nil {
		return nil, fmt.Errorf("list evals of namespace %q: %w", namespace, err)
	}
	evals := collect[*structs.Evaluation](ws, iter, nil)
	slices.SortFunc(evals, func(a, b *structs.Evaluation) int { return cmp.Compare(a.ID, b.ID) })
	return evals, nil
}

// UpsertEvals writes evaluations. An existing eval keeps its CreateIndex;
// every eval gets ModifyIndex = index. The queued counts of the job's
// summary are taken from the evals, and the job's status is recomputed.
//
// A complete eval without placement failures cancels the job's blocked
// evals: the capacity they waited for is no longer needed.
func (s *StateStore) UpsertEvals(index uint64, evals []*structs.Evaluation) error {
	return s.write(index, upsertEvals(evals))
}

func upsertEvals(evals []*structs.Evaluation) func(tx *writeTxn) error {
	return func(tx *writeTxn) error {
		for _, eval := range evals {
			if err := tx.upsertEval(eval); err != nil {
				return err
			}
		}
		return nil
	}
}

// DeleteEval removes evaluations and allocations (garbage collection).
// IDs that do not exist are skipped. A job left with neither evals nor
// allocs becomes dead.
func (s *StateStore) DeleteEval(index uint64, evalIDs, allocIDs []string) error {
	return s.write(index, func(tx *writeTxn) error {
		tx.evalDelete = true
		var deleted []*structs.Allocation
		for _, id := range evalIDs {
			raw, err := tx.First(TableEvals, "id", id)
			if err != nil {
				return fmt.Errorf("delete eval %q: %w", id, err)
			}
			if raw == nil {
				continue
			}
			eval := raw.(*structs.Evaluation)
			if err := tx.Delete(TableEvals, eval); err != nil {
				return fmt.Errorf("delete eval %q: %w", id, err)
			}
			tx.touch(TableEvals)
			tx.markJob(eval.Namespace, eval.JobID)
		}
		for _, id := range allocIDs {
			raw, err := tx.First(TableAllocs, "id", id)
			if err != nil {
				return fmt.Errorf("delete alloc %q: %w", id, err)
			}
			if raw == nil {
				continue
			}
			alloc := raw.(*structs.Allocation)
			if err := tx.Delete(TableAllocs, alloc); err != nil {
				return fmt.Errorf("delete alloc %q: %w", id, err)
			}
			tx.touch(TableAllocs, IndexAllocsDeleted)
			tx.touchAllocs(alloc)
			tx.markJob(alloc.Namespace, alloc.JobID)
			deleted = append(deleted, alloc)
		}
		return tx.foldBatchQueueUsage(deleted)
	})
}

// IndexAllocsDeleted names the index-table entry that moves whenever
// allocations are deleted (garbage collected). A client's watch of its
// allocations answers with at least this index, so a deletion, which
// raises no alloc's modify index, still reaches the client.
const IndexAllocsDeleted = "allocs_deleted"

func (tx *writeTxn) upsertEval(eval *structs.Evaluation) error {
	if eval == nil {
		return errors.New("upsert eval: eval is nil")
	}
	if eval.ID == "" {
		return errors.New("upsert eval: missing eval ID")
	}
	if eval.Namespace == "" {
		return fmt.Errorf("upsert eval %q: missing namespace", eval.ID)
	}
	if eval.JobID == "" {
		return fmt.Errorf("upsert eval %q: missing job ID", eval.ID)
	}
	raw, err := tx.First(TableEvals, "id", eval.ID)
	if err != nil {
		return fmt.Errorf("upsert eval %q: %w", eval.ID, err)
	}
	if raw != nil {
		eval.CreateIndex = raw.(*structs.Evaluation).CreateIndex
	} else {
		eval.CreateIndex = tx.index
	}
	eval.ModifyIndex = tx.index
	if err := tx.Insert(TableEvals, eval); err != nil {
		return fmt.Errorf("upsert eval %q: %w", eval.ID, err)
	}
	tx.touch(TableEvals)
	tx.markJob(eval.Namespace, eval.JobID)

	if err := tx.updateSummaryQueued(eval); err != nil {
		return fmt.Errorf("upsert eval %q: %w", eval.ID, err)
	}
	if raw == nil {
		if err := tx.batchQueueNewEval(eval); err != nil {
			return fmt.Errorf("upsert eval %q: %w", eval.ID, err)
		}
	} else if err := tx.batchQueueStillHolds(eval); err != nil {
		return fmt.Errorf("upsert eval %q: %w", eval.ID, err)
	}
	if eval.Status == structs.EvalStatusComplete && len(eval.FailedTGAllocs) == 0 {
		if err := tx.cancelBlockedEvals(eval); err != nil {
			return fmt.Errorf("upsert eval %q: %w", eval.ID, err)
		}
	}
	return nil
}

// cancelBlockedEvals cancels the blocked evals of the job of a successful
// eval.
func (tx *writeTxn) cancelBlockedEvals(done *structs.Evaluation) error {
	iter, err := tx.Get(TableEvals, "job", done.Namespace, done.JobID, structs.EvalStatusBlocked)
	if err != nil {
		return fmt.Errorf("list blocked evals: %w", err)
	}
	blocked := collect[*structs.Evaluation](nil, iter, nil)
	for _, b := range blocked {
		c := b.Copy()
		c.Status = structs.EvalStatusCancelled
		c.StatusDescription = fmt.Sprintf("evaluation %q successful", done.ID)
		c.ModifyIndex = tx.index
		c.ModifyTime = done.ModifyTime
		if err := tx.Insert(TableEvals, c); err != nil {
			return fmt.Errorf("cancel blocked eval %q: %w", b.ID, err)
		}
	}
	return nil
}

func (tx *writeTxn) evalByID(id string) (*structs.Evaluation, error) {
	raw, err := tx.First(TableEvals, "id", id)
	if err != nil {
		return nil, fmt.Errorf("eval lookup %q: %w", id, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Evaluation), nil
}
