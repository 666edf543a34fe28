package state

import (
	"errors"
	"fmt"
	"maps"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableScalingEvent holds the scaling history of each job.
const TableScalingEvent = "scaling_event"

// scalingEventRecord is the snapshot record of a job's scaling history,
// Nomad's snapshot type for the table.
const scalingEventRecord recordType = 19

func init() {
	snapshotTables = append(snapshotTables, struct {
		table  string
		record recordType
		newRow func() any
	}{TableScalingEvent, scalingEventRecord, func() any { return new(structs.JobScalingEvents) }})
}

func scalingEventTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableScalingEvent,
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

// ScalingEventsByJob returns a job's scaling events by task group, newest
// first, and the index that last changed them; nil when there are none.
func (r *reader) ScalingEventsByJob(ws memdb.WatchSet, namespace, jobID string) (map[string][]*structs.ScalingEvent, uint64, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableScalingEvent, "id", namespace, jobID)
	if err != nil {
		return nil, 0, fmt.Errorf("scaling events of job %q: %w", jobID, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, 0, nil
	}
	ev := raw.(*structs.JobScalingEvents)
	return ev.ScalingEvents, ev.ModifyIndex, nil
}

// UpsertScalingEvent adds an event to the front of a task group's scaling
// history, keeping the newest structs.JobTrackedScalingEvents.
func (s *StateStore) UpsertScalingEvent(index uint64, req *structs.ScalingEventRequest) error {
	if req == nil || req.ScalingEvent == nil || req.JobID == "" || req.Namespace == "" || req.TaskGroup == "" {
		return errors.New("upsert scaling event: missing event, job ID, namespace or task group")
	}
	return s.write(index, func(tx *writeTxn) error {
		raw, err := tx.First(TableScalingEvent, "id", req.Namespace, req.JobID)
		if err != nil {
			return fmt.Errorf("scaling events of job %q: %w", req.JobID, err)
		}
		row := &structs.JobScalingEvents{Namespace: req.Namespace, JobID: req.JobID}
		if raw != nil {
			row.ScalingEvents = maps.Clone(raw.(*structs.JobScalingEvents).ScalingEvents)
		}
		if row.ScalingEvents == nil {
			row.ScalingEvents = make(map[string][]*structs.ScalingEvent)
		}
		row.ModifyIndex = index
		ev := *req.ScalingEvent
		ev.CreateIndex = index
		events := append([]*structs.ScalingEvent{&ev}, row.ScalingEvents[req.TaskGroup]...)
		row.ScalingEvents[req.TaskGroup] = events[:min(len(events), structs.JobTrackedScalingEvents)]
		if err := tx.Insert(TableScalingEvent, row); err != nil {
			return fmt.Errorf("store scaling event of job %q: %w", req.JobID, err)
		}
		tx.touch(TableScalingEvent)
		return nil
	})
}

// deleteScalingEvents drops the scaling history of a purged job.
func (tx *writeTxn) deleteScalingEvents(namespace, jobID string) error {
	raw, err := tx.First(TableScalingEvent, "id", namespace, jobID)
	if err != nil || raw == nil {
		return err
	}
	if err := tx.Delete(TableScalingEvent, raw); err != nil {
		return fmt.Errorf("drop scaling events: %w", err)
	}
	tx.touch(TableScalingEvent)
	return nil
}
