package state

import (
	"errors"
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// maxNodeEvents is how many events a node keeps; older ones are dropped.
const maxNodeEvents = 10

// NodeByID returns the node, or nil.
func (r *reader) NodeByID(ws memdb.WatchSet, id string) (*structs.Node, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableNodes, "id", id)
	if err != nil {
		return nil, fmt.Errorf("node lookup %q: %w", id, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Node), nil
}

// NodeBySecretID returns the node with the given secret, or nil.
func (r *reader) NodeBySecretID(ws memdb.WatchSet, secretID string) (*structs.Node, error) {
	watchCh, raw, err := r.db.Txn(false).FirstWatch(TableNodes, "secret_id", secretID)
	if err != nil {
		return nil, fmt.Errorf("node lookup by secret: %w", err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Node), nil
}

// Nodes returns every node, ordered by ID.
func (r *reader) Nodes(ws memdb.WatchSet) ([]*structs.Node, error) {
	iter, err := r.db.Txn(false).Get(TableNodes, "id")
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return collect[*structs.Node](ws, iter, nil), nil
}

// NodesByIDPrefix returns the nodes whose ID starts with prefix.
func (r *reader) NodesByIDPrefix(ws memdb.WatchSet, prefix string) ([]*structs.Node, error) {
	iter, err := r.db.Txn(false).Get(TableNodes, "id_prefix", prefix)
	if err != nil {
		return nil, fmt.Errorf("list nodes with prefix %q: %w", prefix, err)
	}
	return collect[*structs.Node](ws, iter, nil), nil
}

// NodesByNodePool returns the nodes of a node pool, ordered by ID.
func (r *reader) NodesByNodePool(ws memdb.WatchSet, pool string) ([]*structs.Node, error) {
	iter, err := r.db.Txn(false).Get(TableNodes, "node_pool", pool)
	if err != nil {
		return nil, fmt.Errorf("list nodes of pool %q: %w", pool, err)
	}
	return collect[*structs.Node](ws, iter, nil), nil
}

// UpsertNode registers a node or re-registers a known one. A known node
// keeps its CreateIndex, its scheduling eligibility and drain (which the
// server owns) and its events; a new node is eligible unless it says otherwise.
// An empty NodePool becomes "default"; a pool that does not exist yet is
// created, as Nomad does.
func (s *StateStore) UpsertNode(index uint64, node *structs.Node) error {
	return s.write(index, func(tx *writeTxn) error {
		if node == nil {
			return errors.New("upsert node: node is nil")
		}
		if node.ID == "" {
			return errors.New("upsert node: missing node ID")
		}
		if node.SecretID == "" {
			return fmt.Errorf("upsert node %q: missing secret ID", node.ID)
		}
		if node.NodePool == "" {
			node.NodePool = structs.DefaultNodePool
		}
		existing, err := tx.nodeByID(node.ID)
		if err != nil {
			return fmt.Errorf("upsert node: %w", err)
		}
		if existing != nil {
			node.CreateIndex = existing.CreateIndex
			if existing.SchedulingEligibility != "" {
				node.SchedulingEligibility = existing.SchedulingEligibility
			}
			node.Events = existing.Events
			// The drain belongs to the server as eligibility does; a
			// client re-registering knows nothing of it.
			node.DrainStrategy = existing.DrainStrategy
			node.LastDrain = existing.LastDrain
			if existing.SecretID != node.SecretID {
				// Queries that authenticated with the old secret
				// wake and find it changed.
				tx.touchNodeAllocs(node.ID)
			}
		} else {
			node.CreateIndex = index
			if node.SchedulingEligibility == "" {
				node.SchedulingEligibility = structs.NodeSchedulingEligible
			}
		}
		node.ModifyIndex = index
		if err := tx.ensureNodePool(node.NodePool); err != nil {
			return fmt.Errorf("upsert node %q: %w", node.ID, err)
		}
		return tx.putNode(node)
	})
}

// DeleteNode removes nodes. It fails, writing nothing, if any of them does
// not exist.
func (s *StateStore) DeleteNode(index uint64, ids []string) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, id := range ids {
			node, err := tx.nodeByID(id)
			if err != nil {
				return fmt.Errorf("delete node: %w", err)
			}
			if node == nil {
				return fmt.Errorf("delete node %q: %w", id, ErrNotFound)
			}
			if err := tx.Delete(TableNodes, node); err != nil {
				return fmt.Errorf("delete node %q: %w", id, err)
			}
			tx.touch(TableNodes)
			// Its watchers see the node gone; no one watches it after.
			tx.touchNodeAllocs(id)
		}
		return nil
	})
}

// UpdateNodeStatus sets a node's status and the time it changed, and
// appends event when it is not nil.
func (s *StateStore) UpdateNodeStatus(index uint64, id, status string, updatedAt int64, event *structs.NodeEvent) error {
	return s.updateNode(index, id, "update status of node", func(n *structs.Node) error {
		switch status {
		case structs.NodeStatusInit, structs.NodeStatusReady, structs.NodeStatusDown, structs.NodeStatusDisconnected:
		default:
			return structs.NewBadRequestf("status %q is not allowed: must be one of %q, %q, %q, %q", status,
				structs.NodeStatusInit, structs.NodeStatusReady, structs.NodeStatusDown, structs.NodeStatusDisconnected)
		}
		n.Status = status
		n.StatusUpdatedAt = updatedAt
		return nil
	}, event)
}

// UpdateNodeEligibility sets a node's scheduling eligibility and appends
// event when it is not nil.
func (s *StateStore) UpdateNodeEligibility(index uint64, id, eligibility string, updatedAt int64, event *structs.NodeEvent) error {
	return s.updateNode(index, id, "update eligibility of node", func(n *structs.Node) error {
		switch eligibility {
		case structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible:
		default:
			return structs.NewBadRequestf("eligibility %q is not allowed: must be %q or %q", eligibility,
				structs.NodeSchedulingEligible, structs.NodeSchedulingIneligible)
		}
		n.SchedulingEligibility = eligibility
		n.StatusUpdatedAt = updatedAt
		return nil
	}, event)
}

// updateNode applies change to a copy of the stored node.
func (s *StateStore) updateNode(index uint64, id, what string, change func(*structs.Node) error, event *structs.NodeEvent) error {
	return s.write(index, func(tx *writeTxn) error {
		existing, err := tx.nodeByID(id)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if existing == nil {
			return fmt.Errorf("%s %q: %w", what, id, ErrNotFound)
		}
		n := existing.Copy()
		if err := change(n); err != nil {
			// change refuses a value with a coded 400; the context goes
			// after the code, where the HTTP layer still reads it.
			return structs.WrapRPCCodedf(err, "%s %q", what, id)
		}
		appendNodeEvent(n, event, index)
		n.ModifyIndex = index
		return tx.putNode(n)
	})
}

// appendNodeEvent adds a copy of event, when not nil, to the node,
// keeping the newest maxNodeEvents.
func appendNodeEvent(n *structs.Node, event *structs.NodeEvent, index uint64) {
	if event == nil {
		return
	}
	e := *event
	e.CreateIndex = index
	n.Events = append(n.Events, &e)
	if len(n.Events) > maxNodeEvents {
		n.Events = n.Events[len(n.Events)-maxNodeEvents:]
	}
}

func (tx *writeTxn) nodeByID(id string) (*structs.Node, error) {
	raw, err := tx.First(TableNodes, "id", id)
	if err != nil {
		return nil, fmt.Errorf("node lookup %q: %w", id, err)
	}
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.Node), nil
}

func (tx *writeTxn) putNode(n *structs.Node) error {
	if err := tx.Insert(TableNodes, n); err != nil {
		return fmt.Errorf("upsert node %q: %w", n.ID, err)
	}
	tx.touch(TableNodes)
	return nil
}
