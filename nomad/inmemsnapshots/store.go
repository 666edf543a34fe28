package inmemsnapshots

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// snapshotChunk is the size of the pieces an in-memory snapshot is kept
// in.
const snapshotChunk = 256 << 10

// Store is a dev server's Raft snapshot store: it keeps the latest
// complete snapshot in memory; its zero value is ready to use. Unlike
// raft's InmemSnapshotStore, which grows one bytes.Buffer (copying the
// snapshot over and over as it doubles, about 2% of a busy dev agent's
// CPU), it keeps the snapshot in fixed-size chunks, and a snapshot
// replaces the previous one only once it is closed, not when it is
// begun.
//
// A dev server takes a snapshot only to drop the in-memory log entries it
// covers: it has no follower to send one to and never restarts from one.
// So the FSM does not encode its state into the sink; it hands over the
// function that would (Defer), holding an immutable state snapshot, and
// the store runs it the first time the snapshot is read (`operator
// snapshot save`). Encoding the whole state took about a second of CPU
// with 20,000 jobs in state, once every 5 to 10 seconds under load.
type Store struct {
	mu     sync.RWMutex
	latest *snapshot
}

type snapshot struct {
	mu     sync.Mutex // guards meta.Size, chunks and write while encoding
	meta   raft.SnapshotMeta
	chunks [][]byte
	// write, when set, is the deferred content: it writes the snapshot
	// and is run (then dropped) on the first Open.
	write func(io.Writer) (int64, error)
}

// DeferringSink is a snapshot sink that can take the snapshot's content
// as a function to run later instead of as bytes now; the FSM looks for
// it on the sink it persists to.
type DeferringSink interface {
	raft.SnapshotSink
	Defer(write func(io.Writer) (int64, error)) error
}

// The FSM defers encoding only if the store's sink still satisfies this.
var _ DeferringSink = (*sink)(nil)

// sink collects one snapshot as it is written.
type sink struct {
	store *Store
	snap  *snapshot
	done  bool
}

// Create begins a snapshot; it becomes the latest when its sink is
// closed.
func (s *Store) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version != 1 {
		return nil, fmt.Errorf("unsupported snapshot version %d", version)
	}
	return &sink{store: s, snap: &snapshot{meta: raft.SnapshotMeta{
		Version:            version,
		ID:                 fmt.Sprintf("%d-%d-%d", term, index, time.Now().UnixMilli()),
		Index:              index,
		Term:               term,
		Configuration:      configuration,
		ConfigurationIndex: configurationIndex,
	}}}, nil
}

// List returns the latest snapshot's metadata, if there is one.
func (s *Store) List() ([]*raft.SnapshotMeta, error) {
	s.mu.RLock()
	snap := s.latest
	s.mu.RUnlock()
	if snap == nil {
		return []*raft.SnapshotMeta{}, nil
	}
	// A deferred snapshot's size is 0 until it is first read.
	snap.mu.Lock()
	meta := snap.meta
	snap.mu.Unlock()
	return []*raft.SnapshotMeta{&meta}, nil
}

// Open returns the latest snapshot, encoding deferred content on the
// first read.
func (s *Store) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	s.mu.RLock()
	snap := s.latest
	s.mu.RUnlock()
	if snap == nil || snap.meta.ID != id {
		return nil, nil, fmt.Errorf("snapshot %s not found", id)
	}
	snap.mu.Lock()
	defer snap.mu.Unlock()
	if snap.write != nil {
		// The first read encodes the deferred content; later reads get
		// the same bytes, and the state it held can be freed.
		w := &chunkWriter{snap: snap}
		if _, err := snap.write(w); err != nil {
			snap.chunks, snap.meta.Size = nil, 0
			return nil, nil, fmt.Errorf("encode snapshot %s: %w", id, err)
		}
		snap.write = nil
	}
	readers := make([]io.Reader, len(snap.chunks))
	for i, c := range snap.chunks {
		readers[i] = bytes.NewReader(c)
	}
	meta := snap.meta
	return &meta, io.NopCloser(io.MultiReader(readers...)), nil
}

// chunkWriter appends to a snapshot's chunks.
type chunkWriter struct{ snap *snapshot }

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.snap.append(p)
	return len(p), nil
}

// append adds p to the snapshot in snapshotChunk pieces.
func (snap *snapshot) append(p []byte) {
	snap.meta.Size += int64(len(p))
	for len(p) > 0 {
		last := len(snap.chunks) - 1
		if last < 0 || len(snap.chunks[last]) == cap(snap.chunks[last]) {
			snap.chunks = append(snap.chunks, make([]byte, 0, snapshotChunk))
			last++
		}
		c := snap.chunks[last]
		m := min(len(p), cap(c)-len(c))
		snap.chunks[last] = append(c, p[:m]...)
		p = p[m:]
	}
}

func (k *sink) Write(p []byte) (int, error) {
	if k.done {
		return 0, fmt.Errorf("snapshot %s is closed", k.snap.meta.ID)
	}
	if k.snap.write != nil {
		return 0, fmt.Errorf("snapshot %s: its content was deferred", k.snap.meta.ID)
	}
	k.snap.append(p)
	return len(p), nil
}

// Defer sets the snapshot's content to what write writes, run when the
// snapshot is first opened. write must only read state that no later
// change alters (an immutable state snapshot).
func (k *sink) Defer(write func(io.Writer) (int64, error)) error {
	if k.done {
		return fmt.Errorf("snapshot %s is closed", k.snap.meta.ID)
	}
	if k.snap.meta.Size > 0 {
		return fmt.Errorf("snapshot %s: content already written", k.snap.meta.ID)
	}
	k.snap.write = write
	return nil
}

// Close makes the snapshot the store's latest.
func (k *sink) Close() error {
	if k.done {
		return nil
	}
	k.done = true
	k.store.mu.Lock()
	k.store.latest = k.snap
	k.store.mu.Unlock()
	return nil
}

func (k *sink) ID() string { return k.snap.meta.ID }

// Cancel drops the snapshot; the store keeps the one it had.
func (k *sink) Cancel() error {
	k.done = true
	k.snap.chunks, k.snap.write = nil, nil
	return nil
}
