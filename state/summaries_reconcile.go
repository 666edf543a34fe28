package state

import (
	"fmt"
	"reflect"

	"github.com/nomadq/nomadq/structs"
)

// ReconcileJobSummaries recomputes every job's summary from state: the
// alloc counts of each task group from the job's allocs, and the child
// counts of periodic and parameterized jobs from their children. Queued
// counts come from evaluations, not allocs, and are kept. Only summaries
// that differ are written.
func (s *StateStore) ReconcileJobSummaries(index uint64) error {
	return s.write(index, func(tx *writeTxn) error {
		iter, err := tx.Get(TableJobs, "id")
		if err != nil {
			return fmt.Errorf("reconcile summaries: %w", err)
		}
		jobs := collect[*structs.Job](nil, iter, nil)
		children := make(map[structs.NamespacedID][]*structs.Job)
		for _, j := range jobs {
			if j.ParentID != "" {
				parent := structs.NamespacedID{Namespace: j.Namespace, ID: j.ParentID}
				children[parent] = append(children[parent], j)
			}
		}
		for _, job := range jobs {
			old, err := tx.jobSummary(job.Namespace, job.ID)
			if err != nil {
				return err
			}
			sum, err := tx.computeSummary(job, old, children[structs.NamespacedID{Namespace: job.Namespace, ID: job.ID}])
			if err != nil {
				return fmt.Errorf("reconcile summary of job %q: %w", job.ID, err)
			}
			if old != nil && reflect.DeepEqual(sum.Summary, old.Summary) && reflect.DeepEqual(sum.Children, old.Children) {
				continue
			}
			if err := tx.putSummary(sum); err != nil {
				return err
			}
		}
		return nil
	})
}

// computeSummary builds a job's summary from its allocs and children.
func (tx *writeTxn) computeSummary(job *structs.Job, old *structs.JobSummary, children []*structs.Job) (*structs.JobSummary, error) {
	sum := &structs.JobSummary{
		JobID:       job.ID,
		Namespace:   job.Namespace,
		Summary:     make(map[string]structs.TaskGroupSummary, len(job.TaskGroups)),
		CreateIndex: job.CreateIndex,
	}
	for _, tg := range job.TaskGroups {
		var queued int
		if old != nil {
			queued = old.Summary[tg.Name].Queued
		}
		sum.Summary[tg.Name] = structs.TaskGroupSummary{Queued: queued}
	}
	if job.IsPeriodic() || job.IsParameterized() {
		sum.Children = &structs.JobChildrenSummary{}
		for _, c := range children {
			countChild(sum.Children, c.Status, +1)
		}
		return sum, nil
	}
	allocs, err := tx.Get(TableAllocs, "job", job.Namespace, job.ID)
	if err != nil {
		return nil, err
	}
	for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
		a := raw.(*structs.Allocation)
		// Allocs of an earlier incarnation of the job (purged and
		// registered again) do not count, as in updateSummaryWithAlloc.
		if a.Job == nil || a.Job.CreateIndex != job.CreateIndex {
			continue
		}
		tg := sum.Summary[a.TaskGroup]
		countAlloc(&tg, a.ClientStatus, +1)
		countTimedOut(&tg, a, +1)
		sum.Summary[a.TaskGroup] = tg
	}
	return sum, nil
}
