package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

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

// boltStore is the durable store: a bbolt file.
type boltStore struct {
	db *bolt.DB
}

func openBolt(path string) (*boltStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open client state: %w", err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second, NoFreelistSync: true})
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
	return &boltStore{db: db}, nil
}

func (s *boltStore) close() error { return s.db.Close() }

func (s *boltStore) nodeIdentity() (id, secret string, err error) {
	err = s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNode)
		id = string(b.Get(keyNodeID))
		secret = string(b.Get(keyNodeSecret))
		return nil
	})
	return id, secret, err
}

func (s *boltStore) putNodeIdentity(id, secret string) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketNode)
		if err := b.Put(keyNodeID, []byte(id)); err != nil {
			return err
		}
		return b.Put(keyNodeSecret, []byte(secret))
	})
}

func allocBucket(tx *bolt.Tx, allocID string) (*bolt.Bucket, error) {
	return tx.Bucket(bucketAllocs).CreateBucketIfNotExists([]byte(allocID))
}

func (s *boltStore) putAllocs(ids []string, bufs [][]byte) error {
	put := func(tx *bolt.Tx) error {
		for i, id := range ids {
			b, err := allocBucket(tx, id)
			if err != nil {
				return err
			}
			if err := b.Put(keyAlloc, bufs[i]); err != nil {
				return err
			}
		}
		return nil
	}
	// One alloc joins other runners' writes in a shared commit; a burst
	// is a commit of its own.
	if len(ids) == 1 {
		return s.db.Batch(put)
	}
	return s.db.Update(put)
}

func (s *boltStore) putRunner(allocID string, buf []byte) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		b, err := allocBucket(tx, allocID)
		if err != nil {
			return err
		}
		return b.Put(keyRunner, buf)
	})
}

func (s *boltStore) putTask(allocID, task string, state, local []byte) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
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
		if state != nil {
			if err := b.Put(keyTaskState, state); err != nil {
				return err
			}
		}
		if local != nil {
			return b.Put(keyTaskLocal, local)
		}
		return nil
	})
}

func (s *boltStore) deleteAlloc(allocID string) error {
	return s.db.Batch(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketAllocs).DeleteBucket([]byte(allocID))
		if errors.Is(err, bolt.ErrBucketNotFound) {
			return nil
		}
		return err
	})
}

func (s *boltStore) allocs(fn func(r rawAlloc) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		all := tx.Bucket(bucketAllocs)
		return all.ForEachBucket(func(id []byte) error {
			ab := all.Bucket(id)
			r := rawAlloc{id: string(id), alloc: ab.Get(keyAlloc), runner: ab.Get(keyRunner), tasks: map[string]rawTask{}}
			if r.alloc == nil {
				return nil
			}
			if tb := ab.Bucket(bucketTasks); tb != nil {
				err := tb.ForEachBucket(func(name []byte) error {
					b := tb.Bucket(name)
					r.tasks[string(name)] = rawTask{state: b.Get(keyTaskState), local: b.Get(keyTaskLocal)}
					return nil
				})
				if err != nil {
					return err
				}
			}
			return fn(r)
		})
	})
}
