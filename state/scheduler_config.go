package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// SchedulerConfig returns the scheduler configuration and its ModifyIndex;
// both are zero before the first write.
func (r *reader) SchedulerConfig() (uint64, *structs.SchedulerConfiguration, error) {
	return r.SchedulerConfigWatch(nil)
}

// SchedulerConfigWatch is SchedulerConfig that also watches the row.
func (r *reader) SchedulerConfigWatch(ws memdb.WatchSet) (uint64, *structs.SchedulerConfiguration, error) {
	cfg, err := schedulerConfig(r.db.Txn(false), ws)
	if err != nil || cfg == nil {
		return 0, nil, err
	}
	return cfg.ModifyIndex, cfg, nil
}

func schedulerConfig(txn *memdb.Txn, ws memdb.WatchSet) (*structs.SchedulerConfiguration, error) {
	watchCh, raw, err := txn.FirstWatch(TableSchedulerConfig, "id")
	if err != nil {
		return nil, fmt.Errorf("scheduler config lookup: %w", err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.SchedulerConfiguration), nil
}

// SchedulerSetConfig replaces the scheduler configuration. When the new
// configuration has the batch queue off, the same transaction empties the
// queue table, so no reader sees the queue off with rows still in it; it
// returns the pending evals that waited in the queue, for the caller to
// hand to the broker.
func (s *StateStore) SchedulerSetConfig(index uint64, cfg *structs.SchedulerConfiguration) ([]*structs.Evaluation, error) {
	_, evals, err := s.applySchedulerConfig(index, cfg, false, 0)
	return evals, err
}

// SchedulerCASConfig is SchedulerSetConfig, applied only if the current
// ModifyIndex is cas (0: no configuration was written yet). It reports
// whether the configuration was replaced; a failed check is not an error
// and writes nothing.
func (s *StateStore) SchedulerCASConfig(index, cas uint64, cfg *structs.SchedulerConfiguration) (bool, []*structs.Evaluation, error) {
	return s.applySchedulerConfig(index, cfg, true, cas)
}

func (s *StateStore) applySchedulerConfig(index uint64, cfg *structs.SchedulerConfiguration, checkCAS bool, cas uint64) (bool, []*structs.Evaluation, error) {
	var applied bool
	var evals []*structs.Evaluation
	err := s.write(index, func(tx *writeTxn) error {
		var err error
		applied, err = tx.setSchedulerConfig(cfg, checkCAS, cas)
		if err != nil || !applied || cfg.BatchQueue.Enabled {
			return err
		}
		evals, err = tx.drainBatchQueue()
		return err
	})
	if err != nil {
		return false, nil, err
	}
	return applied, evals, nil
}

func (tx *writeTxn) setSchedulerConfig(cfg *structs.SchedulerConfiguration, checkCAS bool, cas uint64) (bool, error) {
	if cfg == nil {
		return false, errors.New("set scheduler config: config is nil")
	}
	existing, err := schedulerConfig(tx.Txn, nil)
	if err != nil {
		return false, fmt.Errorf("set scheduler config: %w", err)
	}
	if checkCAS {
		var current uint64
		if existing != nil {
			current = existing.ModifyIndex
		}
		if current != cas {
			return false, nil
		}
	}
	if existing != nil {
		cfg.CreateIndex = existing.CreateIndex
	} else {
		cfg.CreateIndex = tx.index
	}
	cfg.ModifyIndex = tx.index
	if err := tx.Insert(TableSchedulerConfig, cfg); err != nil {
		return false, fmt.Errorf("set scheduler config: %w", err)
	}
	tx.touch(TableSchedulerConfig)
	return true, nil
}
