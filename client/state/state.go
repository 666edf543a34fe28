// Package state persists a client's allocations, task states and driver
// handles in a bbolt file, so that a restarted client picks up its tasks
// where the previous process left them.
package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
	bolt "go.etcd.io/bbolt"
)

// Bucket layout:
//
//	node/                       id, secret
//	allocs/<alloc id>/          alloc, runner
//	allocs/<alloc id>/tasks/<task>/   state, local
var (
	bucketNode   = []byte("node")
	bucketAllocs = []byte("allocs")
	bucketTasks  = []byte("tasks")

	keyNodeID     = []byte("id")
	keyNodeSecret = []byte("secret")
	keyAlloc      = []byte("alloc")
	keyRunner     = []byte("runner")
	keyTaskState  = []byte("state")
	keyTaskLocal  = []byte("local")
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
	db *bolt.DB
}

// Open opens (creating it if needed) the state DB at path. An ephemeral
// DB (one removed with the process, as a dev agent's) is written without
// fsync: no later process will read it, so durability buys nothing. Nomad
// keeps a dev agent's client state in memory for the same reason.
func Open(path string, ephemeral bool) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open client state: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true, NoSync: ephemeral})
	if err != nil {
		return nil, fmt.Errorf("open client state %s: %w", path, err)
	}
	// Concurrent writers (every task runner) share fsyncs.
	db.MaxBatchDelay = 2 * time.Millisecond
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketNode, bucketAllocs} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open client state %s: %w", path, err)
	}
	return &DB{db: db}, nil
}

// Close closes the DB.
func (d *DB) Close() error { return d.db.Close() }

// NodeIdentity returns the persisted node ID and secret, "" when none.
func (d *DB) NodeIdentity() (id, secret string, err error) {
	err = d.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNode)
		id = string(b.Get(keyNodeID))
		secret = string(b.Get(keyNodeSecret))
		return nil
	})
	return id, secret, err
}

// PutNodeIdentity persists the node ID and secret.
func (d *DB) PutNodeIdentity(id, secret string) error {
	return d.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNode)
		if err := b.Put(keyNodeID, []byte(id)); err != nil {
			return err
		}
		return b.Put(keyNodeSecret, []byte(secret))
	})
}

func encode(v any) ([]byte, error) {
	buf, err := structs.Encode(0, v)
	if err != nil {
		return nil, err
	}
	return buf[1:], nil
}

func allocBucket(tx *bolt.Tx, allocID string) (*bolt.Bucket, error) {
	return tx.Bucket(bucketAllocs).CreateBucketIfNotExists([]byte(allocID))
}

// PutAlloc stores the alloc as the server last sent it.
func (d *DB) PutAlloc(a *structs.Allocation) error {
	buf, err := encode(a)
	if err != nil {
		return fmt.Errorf("store alloc %s: %w", a.ID, err)
	}
	return d.db.Batch(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, a.ID)
		if err != nil {
			return err
		}
		return b.Put(keyAlloc, buf)
	})
}

// PutAllocs stores many allocs in one transaction, so one fsync covers
// them all.
func (d *DB) PutAllocs(allocs []*structs.Allocation) error {
	bufs := make([][]byte, len(allocs))
	for i, a := range allocs {
		buf, err := encode(a)
		if err != nil {
			return fmt.Errorf("store alloc %s: %w", a.ID, err)
		}
		bufs[i] = buf
	}
	return d.db.Update(func(tx *bolt.Tx) error {
		for i, a := range allocs {
			b, err := allocBucket(tx, a.ID)
			if err != nil {
				return err
			}
			if err := b.Put(keyAlloc, bufs[i]); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutAllocRunnerState stores the runner's own state.
func (d *DB) PutAllocRunnerState(allocID string, s *AllocRunnerState) error {
	buf, err := encode(s)
	if err != nil {
		return fmt.Errorf("store alloc runner %s: %w", allocID, err)
	}
	return d.db.Batch(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		return b.Put(keyRunner, buf)
	})
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
	return d.db.Batch(func(tx *bolt.Tx) error {
		// A task write racing the alloc's deletion must not resurrect it.
		ab := tx.Bucket(bucketAllocs).Bucket([]byte(allocID))
		if ab == nil {
			return nil
		}
		tb, err := ab.CreateBucketIfNotExists(bucketTasks)
		if err != nil {
			return err
		}
		b, err := tb.CreateBucketIfNotExists([]byte(task))
		if err != nil {
			return err
		}
		if tsBuf != nil {
			if err := b.Put(keyTaskState, tsBuf); err != nil {
				return err
			}
		}
		if localBuf != nil {
			return b.Put(keyTaskLocal, localBuf)
		}
		return nil
	})
}

// DeleteAlloc removes an alloc and its tasks.
func (d *DB) DeleteAlloc(allocID string) error {
	return d.db.Batch(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketAllocs).DeleteBucket([]byte(allocID))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

// Allocs returns every stored alloc.
func (d *DB) Allocs() ([]*AllocRecord, error) {
	var out []*AllocRecord
	err := d.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAllocs).ForEachBucket(func(id []byte) error {
			ab := tx.Bucket(bucketAllocs).Bucket(id)
			raw := ab.Get(keyAlloc)
			if raw == nil {
				return nil
			}
			rec := &AllocRecord{TaskStates: map[string]*structs.TaskState{}, TaskLocal: map[string]*LocalTaskState{}}
			if err := structs.Decode(raw, &rec.Alloc); err != nil {
				return fmt.Errorf("decode alloc %s: %w", id, err)
			}
			if r := ab.Get(keyRunner); r != nil {
				if err := structs.Decode(r, &rec.Runner); err != nil {
					return fmt.Errorf("decode alloc runner %s: %w", id, err)
				}
			}
			tb := ab.Bucket(bucketTasks)
			if tb != nil {
				err := tb.ForEachBucket(func(name []byte) error {
					b := tb.Bucket(name)
					if v := b.Get(keyTaskState); v != nil {
						var ts structs.TaskState
						if err := structs.Decode(v, &ts); err != nil {
							return fmt.Errorf("decode task %s/%s: %w", id, name, err)
						}
						rec.TaskStates[string(name)] = &ts
					}
					if v := b.Get(keyTaskLocal); v != nil {
						var ls LocalTaskState
						if err := structs.Decode(v, &ls); err != nil {
							return fmt.Errorf("decode task %s/%s: %w", id, name, err)
						}
						rec.TaskLocal[string(name)] = &ls
					}
					return nil
				})
				if err != nil {
					return err
				}
			}
			out = append(out, rec)
			return nil
		})
	})
	return out, err
}
