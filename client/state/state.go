// Package state persists a client's allocations, task states and driver
// handles in a bbolt file, so that a restarted client picks up its tasks
// where the previous process left them. A dev agent's state, which dies
// with the process, is kept in memory.
package state

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// LocalTaskState is what a task runner keeps for itself, beyond the
// TaskState it reports.
type LocalTaskState struct {
	// Handle is the driver handle of the current run; nil when no run
	// is under way.
	Handle *drivers.TaskHandle
	// Runs counts the task's starts, to give each run a unique ID.
	Runs int
}

// AllocRunnerState is what an alloc runner keeps for itself.
type AllocRunnerState struct {
	// Kill, when set, is a kill of the whole alloc that the runner
	// decided on (for example at max_run_duration) with the status the
	// alloc must end with.
	Kill *KillRecord
}

// KillRecord is a persisted whole-alloc kill.
type KillRecord struct {
	Reason            string
	DisplayMessage    string
	ClientStatus      string
	ClientDescription string
	SkipPoststop      bool
	At                time.Time
}

// AllocRecord is one alloc as stored.
type AllocRecord struct {
	Alloc      *structs.Allocation
	Runner     *AllocRunnerState
	TaskStates map[string]*structs.TaskState
	TaskLocal  map[string]*LocalTaskState
}

// DB is the client's state database.
type DB struct {
	store store
	// fault is a test's hook that fails alloc writes (SetAllocWriteFault).
	fault atomic.Pointer[writeFault]
}

// store keeps the encoded records; DB encodes and decodes around it.
type store interface {
	nodeIdentity() (id, secret string, err error)
	putNodeIdentity(id, secret string) error
	// putAllocs stores encoded allocs (ids[i] -> bufs[i]) in one write.
	putAllocs(ids []string, bufs [][]byte) error
	putRunner(allocID string, buf []byte) error
	// putTask stores a task's encoded state and local state (nil leaves
	// one unchanged); a task of an alloc not stored is dropped, so that a
	// task write racing the alloc's deletion does not resurrect it.
	putTask(allocID, task string, state, local []byte) error
	deleteAlloc(allocID string) error
	// allocs calls fn for each stored alloc that has an alloc record.
	allocs(fn func(r rawAlloc) error) error
	close() error
}

// rawAlloc is one alloc's stored records, still encoded.
type rawAlloc struct {
	id            string
	alloc, runner []byte
	tasks         map[string]rawTask
}

type rawTask struct{ state, local []byte }

// Open opens (creating it if needed) the state DB at path, a bbolt file.
// An ephemeral DB (one that goes away with the process, as a dev agent's
// in its temporary directory) is kept in memory instead, as Nomad keeps a
// dev agent's client state: no later process will read it, so a file and
// its writes buy nothing.
func Open(path string, ephemeral bool) (*DB, error) {
	if ephemeral {
		return &DB{store: newMemStore()}, nil
	}
	b, err := openBolt(path)
	if err != nil {
		return nil, err
	}
	return &DB{store: b}, nil
}

// Close closes the DB.
func (d *DB) Close() error { return d.store.close() }

// NodeIdentity returns the persisted node ID and secret, "" when none.
func (d *DB) NodeIdentity() (id, secret string, err error) {
	return d.store.nodeIdentity()
}

// PutNodeIdentity persists the node ID and secret.
func (d *DB) PutNodeIdentity(id, secret string) error {
	return d.store.putNodeIdentity(id, secret)
}

func encode(v any) ([]byte, error) {
	buf, err := structs.Encode(0, v)
	if err != nil {
		return nil, err
	}
	return buf[1:], nil
}

// PutAlloc stores the alloc as the server last sent it.
func (d *DB) PutAlloc(a *structs.Allocation) error {
	return d.PutAllocs([]*structs.Allocation{a})
}

// PutAllocs stores many allocs in one transaction, so one fsync covers
// them all.
func (d *DB) PutAllocs(allocs []*structs.Allocation) error {
	if err := d.injectedFault(); err != nil {
		return err
	}
	ids := make([]string, len(allocs))
	bufs := make([][]byte, len(allocs))
	for i, a := range allocs {
		buf, err := encode(a)
		if err != nil {
			return fmt.Errorf("store alloc %s: %w", a.ID, err)
		}
		ids[i], bufs[i] = a.ID, buf
	}
	return d.store.putAllocs(ids, bufs)
}

// PutAllocRunnerState stores the runner's own state.
func (d *DB) PutAllocRunnerState(allocID string, s *AllocRunnerState) error {
	buf, err := encode(s)
	if err != nil {
		return fmt.Errorf("store alloc runner %s: %w", allocID, err)
	}
	return d.store.putRunner(allocID, buf)
}

// PutTask stores a task's reported state and its runner's local state;
// either may be nil to leave it unchanged.
func (d *DB) PutTask(allocID, task string, ts *structs.TaskState, local *LocalTaskState) error {
	var tsBuf, localBuf []byte
	var err error
	if ts != nil {
		if tsBuf, err = encode(ts); err != nil {
			return fmt.Errorf("store task %s/%s: %w", allocID, task, err)
		}
	}
	if local != nil {
		if localBuf, err = encode(local); err != nil {
			return fmt.Errorf("store task %s/%s: %w", allocID, task, err)
		}
	}
	return d.store.putTask(allocID, task, tsBuf, localBuf)
}

// DeleteAlloc removes an alloc and its tasks.
func (d *DB) DeleteAlloc(allocID string) error {
	return d.store.deleteAlloc(allocID)
}

// Allocs returns every stored alloc.
func (d *DB) Allocs() ([]*AllocRecord, error) {
	var out []*AllocRecord
	err := d.store.allocs(func(r rawAlloc) error {
		rec := &AllocRecord{TaskStates: map[string]*structs.TaskState{}, TaskLocal: map[string]*LocalTaskState{}}
		if err := structs.Decode(r.alloc, &rec.Alloc); err != nil {
			return fmt.Errorf("decode alloc %s: %w", r.id, err)
		}
		if r.runner != nil {
			if err := structs.Decode(r.runner, &rec.Runner); err != nil {
				return fmt.Errorf("decode alloc runner %s: %w", r.id, err)
			}
		}
		for name, t := range r.tasks {
			if t.state != nil {
				var ts structs.TaskState
				if err := structs.Decode(t.state, &ts); err != nil {
					return fmt.Errorf("decode task %s/%s: %w", r.id, name, err)
				}
				rec.TaskStates[name] = &ts
			}
			if t.local != nil {
				var ls LocalTaskState
				if err := structs.Decode(t.local, &ls); err != nil {
					return fmt.Errorf("decode task %s/%s: %w", r.id, name, err)
				}
				rec.TaskLocal[name] = &ls
			}
		}
		out = append(out, rec)
		return nil
	})
	return out, err
}
