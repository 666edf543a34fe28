package state

import (
	"fmt"
	"maps"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// UpdateNodeDrain sets or clears a node's drain strategy as an operator
// asks. Setting one makes the node ineligible and starts (or updates) its
// LastDrain; clearing one marks LastDrain canceled and, with
// markEligible, makes the node eligible again. event is appended when it
// is not nil.
func (s *StateStore) UpdateNodeDrain(index uint64, id string, drain *structs.DrainStrategy, markEligible bool,
	updatedAt int64, event *structs.NodeEvent, meta map[string]string) error {
	return s.updateNode(index, id, "update drain of node", func(n *structs.Node) error {
		applyDrain(n, drain, markEligible, updatedAt, meta, false)
		return nil
	}, event)
}

// CompleteNodeDrains ends the drains of several nodes at once, as the
// drainer does when their allocations are gone or their deadline passed:
// the strategy is cleared and LastDrain marked complete. A node that is
// no longer draining is left alone, so a completion that races with an
// operator's cancel does nothing.
func (s *StateStore) CompleteNodeDrains(index uint64, updates map[string]*structs.DrainUpdate,
	events map[string]*structs.NodeEvent, updatedAt int64) error {
	return s.write(index, func(tx *writeTxn) error {
		for id, u := range updates {
			existing, err := tx.nodeByID(id)
			if err != nil {
				return fmt.Errorf("complete drain of node: %w", err)
			}
			if existing == nil || existing.DrainStrategy == nil {
				continue
			}
			n := existing.Copy()
			applyDrain(n, u.DrainStrategy, u.MarkEligible, updatedAt, nil, true)
			appendNodeEvent(n, events[id], index)
			n.ModifyIndex = index
			if err := tx.putNode(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// applyDrain changes the drain fields of a node copy. complete says the
// drainer ended the drain (LastDrain complete) rather than an operator
// (LastDrain canceled).
func applyDrain(n *structs.Node, drain *structs.DrainStrategy, markEligible bool, updatedAt int64,
	meta map[string]string, complete bool) {
	at := time.Unix(updatedAt, 0).UTC()
	wasDraining := n.DrainStrategy != nil
	n.DrainStrategy = drain.Copy()
	n.StatusUpdatedAt = updatedAt
	switch {
	case drain != nil:
		n.SchedulingEligibility = structs.NodeSchedulingIneligible
		if n.LastDrain == nil || n.LastDrain.Status != structs.DrainStatusDraining {
			n.LastDrain = &structs.DrainMetadata{StartedAt: at, Status: structs.DrainStatusDraining}
		}
		n.LastDrain.UpdatedAt = at
		if meta != nil {
			n.LastDrain.Meta = maps.Clone(meta)
		}
	case markEligible:
		n.SchedulingEligibility = structs.NodeSchedulingEligible
	}
	if drain == nil && wasDraining && n.LastDrain != nil {
		n.LastDrain.UpdatedAt = at
		n.LastDrain.Status = structs.DrainStatusCanceled
		if complete {
			n.LastDrain.Status = structs.DrainStatusComplete
		}
	}
}
