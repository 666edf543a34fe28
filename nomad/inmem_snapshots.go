package nomad

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

// inmemSnapshots is a dev server's Raft snapshot store: it keeps the
// latest complete snapshot in memory. Unlike raft's InmemSnapshotStore,
// which grows one bytes.Buffer (copying the snapshot over and over as it
// doubles, about 2% of a busy dev agent's CPU), it keeps the snapshot in
// fixed-size chunks, and a snapshot replaces the previous one only once
// it is closed, not when it is begun.
type inmemSnapshots struct {
	mu     sync.RWMutex
	latest *inmemSnapshot
	// closed, when set, is told the size of each snapshot that becomes
	// the latest.
	closed func(size int64)
}

// onClosed sets the function told the size of each snapshot that becomes
// the latest; it runs on the goroutine that closes the snapshot.
func (s *inmemSnapshots) onClosed(f func(size int64)) {
	s.mu.Lock()
	s.closed = f
	s.mu.Unlock()
}

type inmemSnapshot struct {
	meta   raft.SnapshotMeta
	chunks [][]byte
}

// inmemSnapshotSink collects one snapshot as it is written.
type inmemSnapshotSink struct {
	store *inmemSnapshots
	snap  *inmemSnapshot
	done  bool
}

func (s *inmemSnapshots) Create(version raft.SnapshotVersion, index, term uint64, configuration raft.Configuration,
	configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version != 1 {
		return nil, fmt.Errorf("unsupported snapshot version %d", version)
	}
	return &inmemSnapshotSink{store: s, snap: &inmemSnapshot{meta: raft.SnapshotMeta{
		Version:            version,
		ID:                 fmt.Sprintf("%d-%d-%d", term, index, time.Now().UnixMilli()),
		Index:              index,
		Term:               term,
		Configuration:      configuration,
		ConfigurationIndex: configurationIndex,
	}}}, nil
}

func (s *inmemSnapshots) List() ([]*raft.SnapshotMeta, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.latest == nil {
		return []*raft.SnapshotMeta{}, nil
	}
	meta := s.latest.meta
	return []*raft.SnapshotMeta{&meta}, nil
}

func (s *inmemSnapshots) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.latest == nil || s.latest.meta.ID != id {
		return nil, nil, fmt.Errorf("snapshot %s not found", id)
	}
	readers := make([]io.Reader, len(s.latest.chunks))
	for i, c := range s.latest.chunks {
		readers[i] = bytes.NewReader(c)
	}
	meta := s.latest.meta
	return &meta, io.NopCloser(io.MultiReader(readers...)), nil
}

func (k *inmemSnapshotSink) Write(p []byte) (int, error) {
	if k.done {
		return 0, fmt.Errorf("snapshot %s is closed", k.snap.meta.ID)
	}
	n := len(p)
	for len(p) > 0 {
		last := len(k.snap.chunks) - 1
		if last < 0 || len(k.snap.chunks[last]) == cap(k.snap.chunks[last]) {
			k.snap.chunks = append(k.snap.chunks, make([]byte, 0, snapshotChunk))
			last++
		}
		c := k.snap.chunks[last]
		m := min(len(p), cap(c)-len(c))
		k.snap.chunks[last] = append(c, p[:m]...)
		p = p[m:]
	}
	k.snap.meta.Size += int64(n)
	return n, nil
}

// Close makes the snapshot the store's latest.
func (k *inmemSnapshotSink) Close() error {
	if k.done {
		return nil
	}
	k.done = true
	k.store.mu.Lock()
	k.store.latest = k.snap
	closed := k.store.closed
	k.store.mu.Unlock()
	if closed != nil {
		closed(k.snap.meta.Size)
	}
	return nil
}

func (k *inmemSnapshotSink) ID() string { return k.snap.meta.ID }

// Cancel drops the snapshot; the store keeps the one it had.
func (k *inmemSnapshotSink) Cancel() error {
	k.done = true
	k.snap.chunks = nil
	return nil
}
