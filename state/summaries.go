package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// JobSummaryByID returns the summary of a job, or nil.
func (r *reader) JobSummaryByID(ws memdb.WatchSet, namespace, jobID string) (*structs.JobSummary, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableJobSummary, "id", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("job summary lookup %q: %w", jobID, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.JobSummary), nil
}

// JobSummaries returns every job summary, ordered by namespace and job ID.
func (r *reader) JobSummaries(ws memdb.WatchSet) ([]*structs.JobSummary, error) {
	iter, err := r.db.Txn(false).Get(TableJobSummary, "id")
	if err != nil {
		return nil, fmt.Errorf("list job summaries: %w", err)
	}
	return collect[*structs.JobSummary](ws, iter, nil), nil
}

func (tx *writeTxn) jobSummary(namespace, jobID string) (*structs.JobSummary, error) {
	raw, err := tx.First(TableJobSummary, "id", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("job summary lookup %q: %w", jobID, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.JobSummary), nil
}

func (tx *writeTxn) putSummary(s *structs.JobSummary) error {
	s.ModifyIndex = tx.index
	if err := tx.Insert(TableJobSummary, s); err != nil {
		return fmt.Errorf("write summary of job %q: %w", s.JobID, err)
	}
	tx.touch(TableJobSummary)
	return nil
}

// updateSummaryWithJob creates the job's summary if needed and adds an
// entry for every task group it does not count yet. Entries of groups
// that left the job stay: their allocs may still report.
func (tx *writeTxn) updateSummaryWithJob(job *structs.Job) error {
	existing, err := tx.jobSummary(job.Namespace, job.ID)
	if err != nil {
		return err
	}
	var summary *structs.JobSummary
	changed := false
	if existing == nil {
		summary = &structs.JobSummary{
			JobID:       job.ID,
			Namespace:   job.Namespace,
			Summary:     make(map[string]structs.TaskGroupSummary, len(job.TaskGroups)),
			CreateIndex: job.CreateIndex,
		}
		changed = true
	} else {
		summary = existing.Copy()
		if summary.Summary == nil {
			summary.Summary = make(map[string]structs.TaskGroupSummary, len(job.TaskGroups))
		}
	}
	if (job.IsPeriodic() || job.IsParameterized()) && summary.Children == nil {
		summary.Children = &structs.JobChildrenSummary{}
		changed = true
	}
	for _, tg := range job.TaskGroups {
		if _, ok := summary.Summary[tg.Name]; !ok {
			summary.Summary[tg.Name] = structs.TaskGroupSummary{}
			changed = true
		}
	}
	if !changed {
		return nil
	}
	return tx.putSummary(summary)
}

// updateSummaryWithAlloc moves an allocation's count from the bucket of
// its previous client status (none for a new alloc) to that of its new one.
// A new placement also takes one from the group's queued count.
func (tx *writeTxn) updateSummaryWithAlloc(alloc, existing *structs.Allocation) error {
	if existing != nil && existing.ClientStatus == alloc.ClientStatus && timedOut(existing) == timedOut(alloc) {
		return nil
	}
	current, err := tx.jobSummary(alloc.Namespace, alloc.JobID)
	if err != nil {
		return err
	}
	// No summary: the job was purged. A summary from another incarnation
	// of the job (purged and registered again) does not count old allocs.
	if current == nil || (alloc.Job != nil && alloc.Job.CreateIndex != current.CreateIndex) {
		return nil
	}
	summary := current.Copy()
	if summary.Summary == nil {
		summary.Summary = make(map[string]structs.TaskGroupSummary)
	}
	tg := summary.Summary[alloc.TaskGroup]
	if existing == nil {
		if tg.Queued > 0 {
			tg.Queued--
		}
	} else {
		countAlloc(&tg, existing.ClientStatus, -1)
	}
	countAlloc(&tg, alloc.ClientStatus, +1)
	countTimedOut(&tg, existing, -1)
	countTimedOut(&tg, alloc, +1)
	summary.Summary[alloc.TaskGroup] = tg
	return tx.putSummary(summary)
}

// timedOut reports whether an alloc completed because it reached its
// group's max_run_duration: the client ends it complete, with this
// description.
func timedOut(a *structs.Allocation) bool {
	return a != nil && a.ClientStatus == structs.AllocClientStatusComplete &&
		a.ClientDescription == structs.AllocTimeoutReasonMaxRunDuration
}

// countTimedOut adds delta to the timed-out count when the alloc timed
// out, never going below zero.
func countTimedOut(tg *structs.TaskGroupSummary, a *structs.Allocation, delta int) {
	if timedOut(a) {
		tg.TimedOut = max(0, tg.TimedOut+delta)
	}
}

// countAlloc adds delta to the bucket of a client status, never going
// below zero.
func countAlloc(tg *structs.TaskGroupSummary, clientStatus string, delta int) {
	var bucket *int
	switch clientStatus {
	case structs.AllocClientStatusPending:
		bucket = &tg.Starting
	case structs.AllocClientStatusRunning:
		bucket = &tg.Running
	case structs.AllocClientStatusComplete:
		bucket = &tg.Complete
	case structs.AllocClientStatusFailed:
		bucket = &tg.Failed
	case structs.AllocClientStatusLost:
		bucket = &tg.Lost
	case structs.AllocClientStatusUnknown:
		bucket = &tg.Unknown
	default:
		return
	}
	*bucket = max(0, *bucket+delta)
}

// updateSummaryQueued takes the queued counts of the eval's job's groups
// from the eval.
func (tx *writeTxn) updateSummaryQueued(eval *structs.Evaluation) error {
	if len(eval.QueuedAllocations) == 0 {
		return nil
	}
	current, err := tx.jobSummary(eval.Namespace, eval.JobID)
	if err != nil || current == nil {
		return err
	}
	var summary *structs.JobSummary
	for group, queued := range eval.QueuedAllocations {
		tg, ok := current.Summary[group]
		if !ok || tg.Queued == queued {
			continue
		}
		if summary == nil {
			summary = current.Copy()
		}
		tg.Queued = queued
		summary.Summary[group] = tg
	}
	if summary == nil {
		return nil
	}
	return tx.putSummary(summary)
}

// summaryQueuedInBatchQueue counts a job whose eval waits in the batch
// queue as queued: the scheduler has not seen it yet, so each group's
// Queued is its whole count until the eval, once released, reports the
// scheduler's own counts.
func (tx *writeTxn) summaryQueuedInBatchQueue(namespace, jobID string) error {
	raw, err := tx.First(TableJobs, "id", namespace, jobID)
	if err != nil {
		return fmt.Errorf("job lookup %q: %w", jobID, err)
	}
	current, err := tx.jobSummary(namespace, jobID)
	if err != nil || current == nil || raw == nil {
		return err
	}
	job := raw.(*structs.Job)
	var summary *structs.JobSummary
	for _, group := range job.TaskGroups {
		tg, ok := current.Summary[group.Name]
		if !ok || tg.Queued == group.Count {
			continue
		}
		if summary == nil {
			summary = current.Copy()
		}
		tg.Queued = group.Count
		summary.Summary[group.Name] = tg
	}
	if summary == nil {
		return nil
	}
	return tx.putSummary(summary)
}

// adjustParentChildren moves a child job from the parent's count of
// oldStatus to that of newStatus; an empty status means the child did not
// exist before, or no longer exists.
func (tx *writeTxn) adjustParentChildren(namespace, parentID, oldStatus, newStatus string) error {
	current, err := tx.jobSummary(namespace, parentID)
	if err != nil {
		return fmt.Errorf("parent %q: %w", parentID, err)
	}
	// The parent may have been purged before its children.
	if current == nil {
		return nil
	}
	summary := current.Copy()
	if summary.Children == nil {
		summary.Children = &structs.JobChildrenSummary{}
	}
	countChild(summary.Children, oldStatus, -1)
	countChild(summary.Children, newStatus, +1)
	return tx.putSummary(summary)
}

func countChild(c *structs.JobChildrenSummary, status string, delta int64) {
	var bucket *int64
	switch status {
	case structs.JobStatusPending:
		bucket = &c.Pending
	case structs.JobStatusRunning:
		bucket = &c.Running
	case structs.JobStatusDead:
		bucket = &c.Dead
	default:
		return
	}
	*bucket = max(0, *bucket+delta)
}
