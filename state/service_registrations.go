package state

import (
	"errors"
	"fmt"
	"slices"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// TableServiceRegistrations holds the running instances of nomad-provider
// services, keyed by namespace and registration ID.
const TableServiceRegistrations = "service_registrations"

// serviceRegistrationRecord is the snapshot record of a registration,
// Nomad's snapshot type for the table.
const serviceRegistrationRecord recordType = 21

func init() {
	snapshotTables = append(snapshotTables, struct {
		table  string
		record recordType
		newRow func() any
	}{TableServiceRegistrations, serviceRegistrationRecord, func() any { return new(structs.ServiceRegistration) }})
}

func serviceRegistrationTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableServiceRegistrations,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ID"},
				}},
			},
			// service_name answers /v1/service/:name; its prefix
			// ("service_name_prefix", ns, "") lists a namespace.
			"service_name": {
				Name: "service_name",
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ServiceName"},
				}},
			},
			// alloc_id finds what to remove when an alloc ends.
			"alloc_id": {
				Name:    "alloc_id",
				Indexer: &memdb.StringFieldIndex{Field: "AllocID"},
			},
			// node_id finds what to remove when a node goes down.
			"node_id": {
				Name:    "node_id",
				Indexer: &memdb.StringFieldIndex{Field: "NodeID"},
			},
			"job_id": {
				Name: "job_id",
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "JobID"},
				}},
			},
		},
	}
}

// ServiceRegistrations returns every registration, ordered by namespace
// and ID.
func (r *reader) ServiceRegistrations(ws memdb.WatchSet) ([]*structs.ServiceRegistration, error) {
	iter, err := r.db.Txn(false).Get(TableServiceRegistrations, "id")
	if err != nil {
		return nil, fmt.Errorf("list service registrations: %w", err)
	}
	return collect[*structs.ServiceRegistration](ws, iter, nil), nil
}

// ServiceRegistrationsByNamespace returns the registrations of one
// namespace ("*": every namespace), ordered by service name.
func (r *reader) ServiceRegistrationsByNamespace(ws memdb.WatchSet, namespace string) ([]*structs.ServiceRegistration, error) {
	if namespace == "*" {
		return r.ServiceRegistrations(ws)
	}
	iter, err := r.db.Txn(false).Get(TableServiceRegistrations, "service_name_prefix", namespace, "")
	if err != nil {
		return nil, fmt.Errorf("list service registrations of namespace %q: %w", namespace, err)
	}
	return collect[*structs.ServiceRegistration](ws, iter, nil), nil
}

// ServiceRegistrationsByName returns the instances of one service.
func (r *reader) ServiceRegistrationsByName(ws memdb.WatchSet, namespace, name string) ([]*structs.ServiceRegistration, error) {
	iter, err := r.db.Txn(false).Get(TableServiceRegistrations, "service_name", namespace, name)
	if err != nil {
		return nil, fmt.Errorf("read service %q in namespace %q: %w", name, namespace, err)
	}
	return collect[*structs.ServiceRegistration](ws, iter, nil), nil
}

// ServiceRegistrationByID returns one registration, or nil.
func (r *reader) ServiceRegistrationByID(ws memdb.WatchSet, namespace, id string) (*structs.ServiceRegistration, error) {
	return serviceRegistrationByID(r.db.Txn(false), ws, namespace, id)
}

func serviceRegistrationByID(txn *memdb.Txn, ws memdb.WatchSet, namespace, id string) (*structs.ServiceRegistration, error) {
	watchCh, raw, err := txn.FirstWatch(TableServiceRegistrations, "id", namespace, id)
	if err != nil {
		return nil, fmt.Errorf("service registration lookup %q in namespace %q: %w", id, namespace, err)
	}
	ws.Add(watchCh)
	if raw == nil {
		return nil, nil
	}
	return raw.(*structs.ServiceRegistration), nil
}

// ServiceRegistrationsByAllocID returns an alloc's registrations.
func (r *reader) ServiceRegistrationsByAllocID(ws memdb.WatchSet, allocID string) ([]*structs.ServiceRegistration, error) {
	iter, err := r.db.Txn(false).Get(TableServiceRegistrations, "alloc_id", allocID)
	if err != nil {
		return nil, fmt.Errorf("list service registrations of alloc %q: %w", allocID, err)
	}
	return collect[*structs.ServiceRegistration](ws, iter, nil), nil
}

// ServiceRegistrationsByNodeID returns the registrations of a node's
// allocs.
func (r *reader) ServiceRegistrationsByNodeID(ws memdb.WatchSet, nodeID string) ([]*structs.ServiceRegistration, error) {
	iter, err := r.db.Txn(false).Get(TableServiceRegistrations, "node_id", nodeID)
	if err != nil {
		return nil, fmt.Errorf("list service registrations of node %q: %w", nodeID, err)
	}
	return collect[*structs.ServiceRegistration](ws, iter, nil), nil
}

// ServiceRegistrationsByJobID returns the registrations of a job's allocs.
func (r *reader) ServiceRegistrationsByJobID(ws memdb.WatchSet, namespace, jobID string) ([]*structs.ServiceRegistration, error) {
	iter, err := r.db.Txn(false).Get(TableServiceRegistrations, "job_id", namespace, jobID)
	if err != nil {
		return nil, fmt.Errorf("list service registrations of job %q in namespace %q: %w", jobID, namespace, err)
	}
	return collect[*structs.ServiceRegistration](ws, iter, nil), nil
}

// UpsertServiceRegistrations stores registrations, keeping the CreateIndex
// of one that exists. A registration equal to the stored one is not
// rewritten, so that a client re-registering after a restart does not
// wake the watchers of the service. A registration of an alloc that has
// ended is not stored: the client's call raced the alloc's end, which
// already removed its services.
func (s *StateStore) UpsertServiceRegistrations(index uint64, regs []*structs.ServiceRegistration) error {
	return s.write(index, func(tx *writeTxn) error {
		for _, reg := range regs {
			if err := tx.upsertServiceRegistration(reg); err != nil {
				return err
			}
		}
		return nil
	})
}

var errNilServiceRegistration = errors.New("upsert service registration: registration is nil")

func (tx *writeTxn) upsertServiceRegistration(reg *structs.ServiceRegistration) error {
	if reg == nil {
		return errNilServiceRegistration
	}
	if reg.ID == "" || reg.Namespace == "" || reg.ServiceName == "" {
		return fmt.Errorf("upsert service registration %q: missing ID, namespace or service name", reg.ID)
	}
	if reg.AllocID != "" {
		alloc, err := tx.allocByID(reg.AllocID)
		if err != nil {
			return fmt.Errorf("upsert service registration %q: %w", reg.ID, err)
		}
		if alloc != nil && alloc.TerminalStatus() {
			return nil
		}
	}
	existing, err := serviceRegistrationByID(tx.Txn, nil, reg.Namespace, reg.ID)
	if err != nil {
		return err
	}
	c := reg.Copy()
	c.CreateIndex, c.ModifyIndex = tx.index, tx.index
	if existing != nil {
		if sameRegistration(existing, c) {
			return nil
		}
		c.CreateIndex = existing.CreateIndex
	}
	if err := tx.Insert(TableServiceRegistrations, c); err != nil {
		return fmt.Errorf("upsert service registration %q: %w", reg.ID, err)
	}
	tx.touch(TableServiceRegistrations)
	return nil
}

// sameRegistration compares two registrations apart from their indexes.
func sameRegistration(a, b *structs.ServiceRegistration) bool {
	return a.ID == b.ID && a.ServiceName == b.ServiceName && a.Namespace == b.Namespace &&
		a.NodeID == b.NodeID && a.Datacenter == b.Datacenter && a.JobID == b.JobID &&
		a.AllocID == b.AllocID && slices.Equal(a.Tags, b.Tags) && a.Address == b.Address && a.Port == b.Port
}

// DeleteServiceRegistrationByID removes one registration; an unknown one
// is ErrNotFound and writes nothing.
func (s *StateStore) DeleteServiceRegistrationByID(index uint64, namespace, id string) error {
	return s.write(index, func(tx *writeTxn) error {
		existing, err := serviceRegistrationByID(tx.Txn, nil, namespace, id)
		if err != nil {
			return err
		}
		if existing == nil {
			return fmt.Errorf("delete service registration %q in namespace %q: %w", id, namespace, ErrNotFound)
		}
		if err := tx.Delete(TableServiceRegistrations, existing); err != nil {
			return fmt.Errorf("delete service registration %q: %w", id, err)
		}
		tx.touch(TableServiceRegistrations)
		return nil
	})
}

// DeleteServiceRegistrationsByNodeID removes every registration of a node;
// a node without any is not an error.
func (s *StateStore) DeleteServiceRegistrationsByNodeID(index uint64, nodeID string) error {
	return s.write(index, func(tx *writeTxn) error {
		return tx.deleteServiceRegistrations("node_id", nodeID)
	})
}

// deleteAllocServiceRegistrations removes the registrations of an alloc
// that has ended or been told to stop, in the write that ends it, as
// Nomad's state store does: a stopped, failed or lost alloc's services
// must not be handed out while its client (maybe gone) catches up.
func (tx *writeTxn) deleteAllocServiceRegistrations(alloc *structs.Allocation) error {
	if !alloc.TerminalStatus() {
		return nil
	}
	return tx.deleteServiceRegistrations("alloc_id", alloc.ID)
}

func (tx *writeTxn) deleteServiceRegistrations(index, value string) error {
	n, err := tx.DeleteAll(TableServiceRegistrations, index, value)
	if err != nil {
		return fmt.Errorf("delete service registrations by %s %q: %w", index, value, err)
	}
	if n > 0 {
		tx.touch(TableServiceRegistrations)
	}
	return nil
}
