package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableAutopilotConfig holds the one autopilot configuration row.
const TableAutopilotConfig = "autopilot-config"

// autopilotConfigRecord is the snapshot record of the autopilot
// configuration; fixed, like periodicLaunchRecord, so that tables added
// to the iota list do not renumber it.
const autopilotConfigRecord recordType = 65

func init() {
	type table = struct {
		table  string
		record recordType
		newRow func() any
	}
	snapshotTables = append(snapshotTables,
		table{TableAutopilotConfig, autopilotConfigRecord, func() any { return new(structs.AutopilotConfig) }})
}

func autopilotConfigTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableAutopilotConfig,
		Indexes: map[string]*memdb.IndexSchema{"id": singleRowIndex()},
	}
}

// AutopilotConfig returns the autopilot configuration and its ModifyIndex;
// both are zero before the first write.
func (r *reader) AutopilotConfig(ws memdb.WatchSet) (uint64, *structs.AutopilotConfig, error) {
	cfg, err := autopilotConfig(r.db.Txn(false), ws)
	if err != nil || cfg == nil {
		return 0, nil, err
	}
	return cfg.ModifyIndex, cfg, nil
}

func autopilotConfig(txn *memdb.Txn, ws memdb.WatchSet) (*structs.AutopilotConfig, error) {
	watchCh, raw, err := txn.FirstWatch(TableAutopilotConfig, "id")
	if err != nil {
		return nil, fmt.Errorf("autopilot config lookup: %w", err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.AutopilotConfig), nil
}

// AutopilotSetConfig replaces the autopilot configuration; with checkCAS
// only if its current ModifyIndex is cas (0: none written yet). It reports
// whether it replaced it; a lost check-and-set is not an error.
func (s *StateStore) AutopilotSetConfig(index uint64, cfg *structs.AutopilotConfig, checkCAS bool, cas uint64) (bool, error) {
	if cfg == nil {
		return false, errors.New("set autopilot config: config is nil")
	}
	var applied bool
	err := s.write(index, func(tx *writeTxn) error {
		existing, err := autopilotConfig(tx.Txn, nil)
		if err != nil {
			return fmt.Errorf("set autopilot config: %w", err)
		}
		if checkCAS {
			var current uint64
			if existing != nil {
				current = existing.ModifyIndex
			}
			if current != cas {
				return nil
			}
		}
		c := *cfg
		c.CreateIndex = tx.index
		if existing != nil {
			c.CreateIndex = existing.CreateIndex
		}
		c.ModifyIndex = tx.index
		if err := tx.Insert(TableAutopilotConfig, &c); err != nil {
			return fmt.Errorf("set autopilot config: %w", err)
		}
		tx.touch(TableAutopilotConfig)
		applied = true
		return nil
	})
	return applied, err
}
