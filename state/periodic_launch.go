package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TablePeriodicLaunch holds the last launch of each periodic job.
const TablePeriodicLaunch = "periodic_launch"

// periodicLaunchRecord is the snapshot record of a periodic launch. Its
// value is fixed rather than taken from the iota list so that tables added
// there do not renumber it.
const periodicLaunchRecord recordType = 64

func periodicLaunchTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TablePeriodicLaunch,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ID"},
				}},
			},
		},
	}
}

// PeriodicLaunchByID returns the launch record of a periodic job, or nil.
func (r *reader) PeriodicLaunchByID(ws memdb.WatchSet, namespace, id string) (*structs.PeriodicLaunch, error) {
	txn := r.db.Txn(false)
	watchCh, raw, err := txn.FirstWatch(TablePeriodicLaunch, "id", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("periodic launch %q: %w", id, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.PeriodicLaunch), nil
}

// PeriodicLaunches returns every launch record.
func (r *reader) PeriodicLaunches(ws memdb.WatchSet) ([]*structs.PeriodicLaunch, error) {
	iter, err := r.db.Txn(false).Get(TablePeriodicLaunch, "id")
	if err != nil {
		return nil, fmt.Errorf("periodic launches: %w", err)
	}
	return collect[*structs.PeriodicLaunch](ws, iter, nil), nil
}

// UpsertPeriodicLaunch stores a periodic child job, its eval and the
// parent's launch record in one transaction, as one Raft entry of a
// periodic launch does.
func (s *StateStore) UpsertPeriodicLaunch(index uint64, child *structs.Job, eval *structs.Evaluation, launch *structs.PeriodicLaunch) error {
	if err := checkPeriodicLaunch(launch); err != nil {
		return err
	}
	return s.write(index, upsertPeriodicLaunch(child, eval, launch))
}

func checkPeriodicLaunch(launch *structs.PeriodicLaunch) error {
	if launch == nil || launch.ID == "" || launch.Namespace == "" {
		return errors.New("upsert periodic launch: missing job ID or namespace")
	}
	return nil
}

func upsertPeriodicLaunch(child *structs.Job, eval *structs.Evaluation, launch *structs.PeriodicLaunch) func(tx *writeTxn) error {
	return func(tx *writeTxn) error {
		if child != nil {
			if err := tx.upsertJob(child); err != nil {
				return err
			}
			if eval != nil {
				eval.JobModifyIndex = child.JobModifyIndex
				if err := tx.upsertEval(eval); err != nil {
					return err
				}
			}
		}
		l := *launch
		existing, err := tx.First(TablePeriodicLaunch, "id", l.Namespace, l.ID)
		if err != nil {
			return fmt.Errorf("upsert periodic launch %q: %w", l.ID, err)
		}
		l.CreateIndex, l.ModifyIndex = tx.index, tx.index
		if existing != nil {
			l.CreateIndex = existing.(*structs.PeriodicLaunch).CreateIndex
		}
		if err := tx.Insert(TablePeriodicLaunch, &l); err != nil {
			return fmt.Errorf("upsert periodic launch %q: %w", l.ID, err)
		}
		tx.touch(TablePeriodicLaunch)
		return nil
	}
}

// deletePeriodicLaunch drops the launch record of a purged job.
func (tx *writeTxn) deletePeriodicLaunch(namespace, id string) error {
	existing, err := tx.First(TablePeriodicLaunch, "id", namespace, id)
	if err != nil || existing == nil {
		return err
	}
	if err := tx.Delete(TablePeriodicLaunch, existing); err != nil {
		return err
	}
	tx.touch(TablePeriodicLaunch)
	return nil
}
