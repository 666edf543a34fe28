package state

import (
	"errors"
	"fmt"
	"sort"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// maxJobVersions is how many versions of a job the job_version table keeps.
const maxJobVersions = 6

// ErrNotFound is wrapped by writes that target an object that does not
// exist. It carries no HTTP code: leader loops meet it too, and log it;
// an RPC endpoint that returns it codes it 404 (nomad's codeNotFound).
var ErrNotFound = errors.New("not found")

// JobByID returns the job, or nil when it does not exist.
func (r *reader) JobByID(ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	txn := r.db.Txn(false)
	return jobByID(txn, ws, namespace, id)
}

func jobByID(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) (*structs.Job, error) {
	watchCh, raw, err := txn.FirstWatch(TableJobs, "id", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("job lookup %q: %w", id, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Job), nil
}

// Jobs returns every job, ordered by namespace and ID.
func (r *reader) Jobs(ws memdb.WatchSet) ([]*structs.Job, error) {
	iter, err := r.db.Txn(false).Get(TableJobs, "id")
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return collect[*structs.Job](ws, iter, nil), nil
}

// JobsByNamespace returns the jobs of one namespace, ordered by ID.
func (r *reader) JobsByNamespace(ws memdb.WatchSet, namespace string) ([]*structs.Job, error) {
	return r.JobsByIDPrefix(ws, namespace, "")
}

// JobsByIDPrefix returns the jobs of a namespace whose ID starts with
// prefix, ordered by ID.
func (r *reader) JobsByIDPrefix(ws memdb.WatchSet, namespace, prefix string) ([]*structs.Job, error) {
	iter, err := r.db.Txn(false).Get(TableJobs, "id_prefix", namespace, prefix)
	if err != nil {
		return nil, fmt.Errorf("list jobs with prefix %q: %w", prefix, err)
	}
	return collect[*structs.Job](ws, iter, nil), nil
}

// PeriodicJobs returns the periodic jobs.
func (r *reader) PeriodicJobs(ws memdb.WatchSet) ([]*structs.Job, error) {
	iter, err := r.db.Txn(false).Get(TableJobs, "periodic")
	if err != nil {
		return nil, fmt.Errorf("list periodic jobs: %w", err)
	}
	return collect[*structs.Job](ws, iter, nil), nil
}

// JobVersionsByID returns the kept versions of a job, newest first.
func (r *reader) JobVersionsByID(ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	return jobVersions(r.db.Txn(false), ws, namespace, id)
}

func jobVersions(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) ([]*structs.Job, error) {
	iter, err := txn.Get(TableJobVersion, "id_prefix", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("list versions of job %q: %w", id, err)
	}
	// The prefix also matches longer IDs that start with id.
	versions := collect(ws, iter, func(j *structs.Job) bool { return j.ID == id })
	sort.Slice(versions, func(i, k int) bool { return versions[i].Version > versions[k].Version })
	return versions, nil
}

// JobByIDAndVersion returns one kept version of a job, or nil.
func (r *reader) JobByIDAndVersion(ws memdb.WatchSet, namespace, id string, version uint64) (*structs.Job, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableJobVersion, "id", namespace, id, version)
	if err != nil {
		return nil, fmt.Errorf("job %q version %d lookup: %w", id, version, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Job), nil
}

// UpsertJob registers a new job or a new version of an existing one.
//
// A new job gets CreateIndex = ModifyIndex = JobModifyIndex = index and
// Version 0. An existing job keeps its CreateIndex and gets ModifyIndex =
// index; only when its spec changed does it get JobModifyIndex = index and
// the next Version. The job's status is computed, its summary gets an entry
// for every task group, and the version is recorded.
func (s *StateStore) UpsertJob(index uint64, job *structs.Job) error {
	return s.write(index, func(tx *writeTxn) error { return tx.upsertJob(job) })
}

// UpsertJobWithEval registers a job and its evaluation in one transaction,
// as one Raft entry of a job registration does. The eval's JobModifyIndex
// is set to the job's.
func (s *StateStore) UpsertJobWithEval(index uint64, job *structs.Job, eval *structs.Evaluation) error {
	return s.UpsertJobWithSubmission(index, job, nil, eval)
}

// DeleteJob purges a job with its versions and summary. Its evals and
// allocs stay until they are garbage collected.
func (s *StateStore) DeleteJob(index uint64, namespace, id string) error {
	return s.write(index, func(tx *writeTxn) error { return tx.deleteJob(namespace, id) })
}

func (tx *writeTxn) upsertJob(job *structs.Job) error {
	if job == nil {
		return errors.New("upsert job: job is nil")
	}
	if job.ID == "" {
		return errors.New("upsert job: missing job ID")
	}
	if job.Namespace == "" {
		return fmt.Errorf("upsert job %q: missing namespace", job.ID)
	}
	if job.NodePool == "" {
		job.NodePool = structs.DefaultNodePool
	}

	existing, err := jobByID(tx.Txn, nil, job.Namespace, job.ID)
	if err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	if existing == nil || existing.NodePool != job.NodePool {
		if err := tx.checkJobHome(job); err != nil {
			return err
		}
	}
	oldStatus := ""
	if existing == nil {
		job.CreateIndex = tx.index
		job.ModifyIndex = tx.index
		job.JobModifyIndex = tx.index
		job.Version = 0
	} else {
		oldStatus = existing.Status
		job.CreateIndex = existing.CreateIndex
		job.ModifyIndex = tx.index
		if existing.SpecChanged(job) {
			job.JobModifyIndex = tx.index
			job.Version = existing.Version + 1
		} else {
			job.JobModifyIndex = existing.JobModifyIndex
			job.Version = existing.Version
			job.Stable = existing.Stable
		}
	}

	status, err := tx.jobStatus(job)
	if err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	job.Status = status

	if err := tx.Insert(TableJobs, job); err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	tx.touch(TableJobs)
	if job.ParentID != "" && (existing == nil || oldStatus != status) {
		if err := tx.adjustParentChildren(job.Namespace, job.ParentID, oldStatus, status); err != nil {
			return fmt.Errorf("upsert job %q: %w", job.ID, err)
		}
	}
	if err := tx.updateSummaryWithJob(job); err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	if err := tx.upsertJobVersion(job); err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	if err := tx.batchQueueJobChanged(job); err != nil {
		return fmt.Errorf("upsert job %q: %w", job.ID, err)
	}
	return nil
}

// checkJobHome refuses a job whose namespace or node pool does not exist,
// with Nomad's wording, so that a namespace or pool deleted between a
// register's check and its commit cannot be left with a job.
func (tx *writeTxn) checkJobHome(job *structs.Job) error {
	ns, err := namespaceByName(tx.Txn, nil, job.Namespace)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.NewBadRequestf("job %q is in nonexistent namespace %q", job.ID, job.Namespace)
	}
	pool, err := nodePoolByName(tx.Txn, nil, job.NodePool)
	if err != nil {
		return err
	}
	if pool == nil {
		return structs.NewBadRequestf("job %q is in nonexistent node pool %q", job.ID, job.NodePool)
	}
	return nil
}

// upsertJobVersion records the job in the version table and drops the
// oldest versions beyond maxJobVersions.
func (tx *writeTxn) upsertJobVersion(job *structs.Job) error {
	if err := tx.Insert(TableJobVersion, job); err != nil {
		return fmt.Errorf("record version %d: %w", job.Version, err)
	}
	tx.touch(TableJobVersion)
	versions, err := jobVersions(tx.Txn, nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	for _, old := range versions[min(len(versions), maxJobVersions):] {
		if err := tx.Delete(TableJobVersion, old); err != nil {
			return fmt.Errorf("drop version %d: %w", old.Version, err)
		}
	}
	return nil
}

func (tx *writeTxn) deleteJob(namespace, id string) error {
	job, err := jobByID(tx.Txn, nil, namespace, id)
	if err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	if job == nil {
		return fmt.Errorf("delete job %q in namespace %q: %w", id, namespace, ErrNotFound)
	}
	if err := tx.Delete(TableJobs, job); err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	// Its alloc watchers (the batch queue) see it gone; no one watches it
	// after, so its channel is not kept.
	tx.touchJobAllocs(namespace, id)
	versions, err := jobVersions(tx.Txn, nil, namespace, id)
	if err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	for _, v := range versions {
		if err := tx.Delete(TableJobVersion, v); err != nil {
			return fmt.Errorf("delete job %q version %d: %w", id, v.Version, err)
		}
	}
	summary, err := tx.First(TableJobSummary, "id", namespace, id)
	if err != nil {
		return fmt.Errorf("delete job %q summary: %w", id, err)
	}
	if summary != nil {
		if err := tx.Delete(TableJobSummary, summary); err != nil {
			return fmt.Errorf("delete job %q summary: %w", id, err)
		}
	}
	tx.touch(TableJobs, TableJobVersion, TableJobSummary)
	if err := tx.batchQueueJobDeleted(namespace, id); err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	if err := tx.deletePeriodicLaunch(namespace, id); err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	if err := tx.deleteJobSubmissions(namespace, id); err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	if err := tx.deleteScalingEvents(namespace, id); err != nil {
		return fmt.Errorf("delete job %q: %w", id, err)
	}
	if job.ParentID != "" {
		if err := tx.adjustParentChildren(namespace, job.ParentID, job.Status, ""); err != nil {
			return fmt.Errorf("delete job %q: %w", id, err)
		}
	}
	return nil
}

// jobStatus computes a job's status from its type, its allocs and evals.
func (tx *writeTxn) jobStatus(job *structs.Job) (string, error) {
	if job.Type == structs.JobTypeSystem || job.IsPeriodic() || job.IsParameterized() {
		if job.Stop {
			return structs.JobStatusDead, nil
		}
		return structs.JobStatusRunning, nil
	}

	allocs, err := tx.Get(TableAllocs, "job", job.Namespace, job.ID)
	if err != nil {
		return "", fmt.Errorf("job status: %w", err)
	}
	for raw := allocs.Next(); raw != nil; raw = allocs.Next() {
		if !raw.(*structs.Allocation).TerminalStatus() {
			return structs.JobStatusRunning, nil
		}
	}

	evals, err := tx.Get(TableEvals, "job_prefix", job.Namespace, job.ID, "")
	if err != nil {
		return "", fmt.Errorf("job status: %w", err)
	}
	hasEval := false
	for raw := evals.Next(); raw != nil; raw = evals.Next() {
		if !raw.(*structs.Evaluation).TerminalStatus() {
			return structs.JobStatusPending, nil
		}
		hasEval = true
	}

	if hasEval || job.Stop || tx.evalDelete {
		return structs.JobStatusDead, nil
	}
	return structs.JobStatusPending, nil
}

// settleJobStatuses recomputes the status of every job marked by the
// transaction and writes the jobs whose status changed.
func (tx *writeTxn) settleJobStatuses() error {
	for id := range tx.dirtyJobs {
		job, err := jobByID(tx.Txn, nil, id.Namespace, id.ID)
		if err != nil {
			return fmt.Errorf("update status of job %q: %w", id.ID, err)
		}
		if job == nil {
			continue
		}
		status, err := tx.jobStatus(job)
		if err != nil {
			return fmt.Errorf("update status of job %q: %w", id.ID, err)
		}
		if status == job.Status {
			continue
		}
		updated := *job
		updated.Status = status
		updated.ModifyIndex = tx.index
		if err := tx.Insert(TableJobs, &updated); err != nil {
			return fmt.Errorf("update status of job %q: %w", id.ID, err)
		}
		tx.touch(TableJobs)
		if job.ParentID != "" {
			if err := tx.adjustParentChildren(job.Namespace, job.ParentID, job.Status, status); err != nil {
				return fmt.Errorf("update status of job %q: %w", id.ID, err)
			}
		}
	}
	return nil
}

// collect drains iter into a slice, keeping the objects keep accepts (all
// when keep is nil), and adds the iterator's watch channel to ws.
func collect[T any](ws memdb.WatchSet, iter memdb.ResultIterator, keep func(T) bool) []T {
	ws.Add(iter.WatchCh())
	var out []T
	for raw := iter.Next(); raw != nil; raw = iter.Next() {
		obj := raw.(T)
		if keep == nil || keep(obj) {
			out = append(out, obj)
		}
	}
	return out
}

// matchNamespace reports whether an object in namespace ns is selected by
// the namespace filter; "*" selects every namespace.
func matchNamespace(filter, ns string) bool {
	return filter == "*" || filter == ns
}
