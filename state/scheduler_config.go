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

// SchedulerSetConfig replaces the scheduler configuration.
func (s *StateStore) SchedulerSetConfig(index uint64, cfg *structs.SchedulerConfiguration) error {
	return s.write(index, func(tx *writeTxn) error {
		_, err := tx.setSchedulerConfig(cfg, false, 0)
		return err
	})
}

// SchedulerCASConfig replaces the scheduler configuration only if its
// current ModifyIndex is cas (0: no configuration was written yet). It
// reports whether the configuration was replaced; a failed check is not an
// error.
func (s *StateStore) SchedulerCASConfig(index, cas uint64, cfg *structs.SchedulerConfiguration) (bool, error) {
	var applied bool
	err := s.write(index, func(tx *writeTxn) error {
		var err error
		applied, err = tx.setSchedulerConfig(cfg, true, cas)
		return err
	})
	if err != nil {
		return false, err
	}
	return applied, nil
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
