package state

import (
	"fmt"
	"sort"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableJobSubmission holds the source each job version was registered
// from, when the submitter sent it.
const TableJobSubmission = "job_submission"

// jobSubmissionRecord is the snapshot record of a job submission; the
// value is Nomad's snapshot type for the table, fixed so that tables
// added to the iota list do not renumber it.
const jobSubmissionRecord recordType = 29

func init() {
	snapshotTables = append(snapshotTables, struct {
		table  string
		record recordType
		newRow func() any
	}{TableJobSubmission, jobSubmissionRecord, func() any { return new(structs.JobSubmission) }})
}

func jobSubmissionTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobSubmission,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "JobID"},
					uintIndexer("Version", func(obj any) (uint64, bool) { return obj.(*structs.JobSubmission).Version, true }),
				}},
			},
		},
	}
}

// JobSubmission returns the source of one version of a job, or nil when
// none is stored.
func (r *reader) JobSubmission(ws memdb.WatchSet, namespace, jobID string, version uint64) (*structs.JobSubmission, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableJobSubmission, "id", namespace, jobID, version)
	if err != nil {
		return nil, fmt.Errorf("job %q version %d submission lookup: %w", jobID, version, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.JobSubmission), nil
}

// UpsertJobWithSubmission registers a job, the source it was written in
// (may be nil) and its evaluation (may be nil) in one transaction, as one
// Raft entry of a job registration does. The source is stored under the
// version the registration leaves the job at; a version that already has
// a source keeps it.
func (s *StateStore) UpsertJobWithSubmission(index uint64, job *structs.Job, sub *structs.JobSubmission, eval *structs.Evaluation) error {
	return s.write(index, upsertJobWithSubmission(job, sub, eval))
}

func upsertJobWithSubmission(job *structs.Job, sub *structs.JobSubmission, eval *structs.Evaluation) func(tx *writeTxn) error {
	return func(tx *writeTxn) error {
		if err := tx.upsertJob(job); err != nil {
			return err
		}
		if err := tx.upsertJobSubmission(job, sub); err != nil {
			return fmt.Errorf("upsert job %q: %w", job.ID, err)
		}
		if eval == nil {
			return nil
		}
		eval.JobModifyIndex = job.JobModifyIndex
		return tx.upsertEval(eval)
	}
}

func (tx *writeTxn) upsertJobSubmission(job *structs.Job, sub *structs.JobSubmission) error {
	if sub == nil {
		return nil
	}
	existing, err := tx.First(TableJobSubmission, "id", job.Namespace, job.ID, job.Version)
	if err != nil {
		return fmt.Errorf("submission lookup: %w", err)
	}
	if existing != nil {
		return nil
	}
	row := sub.Copy()
	row.Namespace, row.JobID, row.Version, row.JobModifyIndex = job.Namespace, job.ID, job.Version, job.JobModifyIndex
	if err := tx.Insert(TableJobSubmission, row); err != nil {
		return fmt.Errorf("store submission of version %d: %w", job.Version, err)
	}
	tx.touch(TableJobSubmission)
	return tx.pruneJobSubmissions(job.Namespace, job.ID)
}

// jobSubmissions returns the stored sources of a job, newest version
// first.
func (tx *writeTxn) jobSubmissions(namespace, jobID string) ([]*structs.JobSubmission, error) {
	iter, err := tx.Get(TableJobSubmission, "id_prefix", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("list submissions of job %q: %w", jobID, err)
	}
	// The prefix also matches longer IDs that start with jobID.
	subs := collect(nil, iter, func(s *structs.JobSubmission) bool { return s.JobID == jobID })
	sort.Slice(subs, func(i, k int) bool { return subs[i].Version > subs[k].Version })
	return subs, nil
}

// pruneJobSubmissions keeps the sources of as many versions as the
// job_version table keeps.
func (tx *writeTxn) pruneJobSubmissions(namespace, jobID string) error {
	subs, err := tx.jobSubmissions(namespace, jobID)
	if err != nil {
		return err
	}
	for _, old := range subs[min(len(subs), maxJobVersions):] {
		if err := tx.Delete(TableJobSubmission, old); err != nil {
			return fmt.Errorf("drop submission of version %d: %w", old.Version, err)
		}
	}
	return nil
}

// deleteJobSubmissions drops every stored source of a purged job.
func (tx *writeTxn) deleteJobSubmissions(namespace, jobID string) error {
	subs, err := tx.jobSubmissions(namespace, jobID)
	if err != nil {
		return err
	}
	for _, s := range subs {
		if err := tx.Delete(TableJobSubmission, s); err != nil {
			return fmt.Errorf("drop submission of version %d: %w", s.Version, err)
		}
	}
	if len(subs) > 0 {
		tx.touch(TableJobSubmission)
	}
	return nil
}
