package state

import (
	"fmt"
	"sort"

	"github.com/nomadq/nomadq/structs"
)

// UpdateAllocsDesiredTransitions merges transitions onto the allocations
// and writes evals, all or nothing: an unknown alloc fails the whole
// write.
func (s *StateStore) UpdateAllocsDesiredTransitions(index uint64, transitions map[string]*structs.DesiredTransition, evals []*structs.Evaluation) error {
	return s.write(index, updateAllocsDesiredTransitions(transitions, evals))
}

func updateAllocsDesiredTransitions(transitions map[string]*structs.DesiredTransition, evals []*structs.Evaluation) func(tx *writeTxn) error {
	ids := make([]string, 0, len(transitions))
	for id := range transitions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return func(tx *writeTxn) error {
		for _, id := range ids {
			t := transitions[id]
			if t == nil {
				continue
			}
			existing, err := tx.allocByID(id)
			if err != nil {
				return fmt.Errorf("update desired transition: %w", err)
			}
			if existing == nil {
				return fmt.Errorf("update desired transition of alloc %q: %w", id, ErrNotFound)
			}
			c := existing.Copy()
			c.DesiredTransition.Merge(t)
			c.ModifyIndex = tx.index
			if err := tx.putAlloc(c, existing); err != nil {
				return err
			}
		}
		for _, e := range evals {
			if err := tx.upsertEval(e); err != nil {
				return err
			}
		}
		return nil
	}
}
