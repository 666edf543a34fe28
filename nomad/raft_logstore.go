package nomad

import (
	"fmt"
	"sync"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
)

// walStore is the server's Raft log and stable store on disk: a raft-wal
// WAL that is opened again after a failed write.
//
// Why: after one failed write raft-wal's in-memory view of its tail no
// longer matches the file (a batch's offsets are recorded but its commit
// frame is not on disk; or the tail was sealed and the next segment could
// not be created, after which every append fails with "segment is
// sealed"). Nothing in raft-wal repairs that view while it is open, so a
// server whose disk filled up once kept failing every write, and a lone
// server answered "No cluster leader" until it was restarted, though space
// had been freed.
//
// Opening the WAL again does what a restart does: it rebuilds the view
// from what is durably on disk (the last batch whose commit frame is
// complete, a missing tail file created again). That is safe because Raft
// never counts a failed StoreLogs as stored: a leader answers the writes
// of the batch with the error and steps down (it stands again at the next
// election and writes from its last stored index), a follower answers the
// leader with a failure and the leader sends the entries again. Entries of
// the failed batch that did reach the disk are not acknowledged to anyone;
// Raft writes their indexes again, so the reopened WAL drops them first
// (a suffix truncation, as Raft itself does on a conflict). The old WAL
// serves reads until the new one is open, so a reopen that fails (the
// disk is still full) leaves the committed entries readable and is tried
// again at the next write.
type walStore struct {
	dir    string
	open   func() (*wal.WAL, error)
	logger hclog.Logger

	// mu guards w: every call holds it shared (raft-wal orders its own
	// reads and writes, and reads go on during a write's fsync); a
	// reopen holds it alone.
	mu sync.RWMutex
	w  *wal.WAL

	// failed is the last write error, kept until a reopen succeeds; the
	// next write reopens the WAL first.
	failMu sync.Mutex
	failed error
}

var (
	_ raft.LogStore          = (*walStore)(nil)
	_ raft.StableStore       = (*walStore)(nil)
	_ raft.MonotonicLogStore = (*walStore)(nil)
)

// openWALStore opens the WAL in dir with open, which is called again to
// reopen it. A torn tail the WAL drops on open is logged at WARN.
func openWALStore(dir string, logger hclog.Logger, open func() (*wal.WAL, error)) (*walStore, error) {
	tail := readWALTail(dir)
	w, err := open()
	if err != nil {
		return nil, err
	}
	if last, err := w.LastIndex(); err == nil {
		warnTornTail(logger, tail, last)
	}
	return &walStore{dir: dir, open: open, logger: logger, w: w}, nil
}

// FirstIndex implements raft.LogStore.
func (s *walStore) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.FirstIndex()
}

// LastIndex implements raft.LogStore.
func (s *walStore) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.LastIndex()
}

// GetLog implements raft.LogStore.
func (s *walStore) GetLog(index uint64, log *raft.Log) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.GetLog(index, log)
}

// StoreLog implements raft.LogStore.
func (s *walStore) StoreLog(log *raft.Log) error {
	return s.StoreLogs([]*raft.Log{log})
}

// StoreLogs implements raft.LogStore. After a failed write the WAL is
// opened again before this one. Raft calls it from one goroutine at a
// time.
func (s *walStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	if s.writeFault() != nil {
		if err := s.reopen(logs[0].Index); err != nil {
			return err
		}
	}
	s.mu.RLock()
	err := s.w.StoreLogs(logs)
	s.mu.RUnlock()
	if err != nil {
		s.failMu.Lock()
		s.failed = err
		s.failMu.Unlock()
		s.logger.Error("raft log write failed; the log is opened again before the next write",
			"dir", s.dir, "error", err)
		return fmt.Errorf("write raft log in %s: %w", s.dir, err)
	}
	return nil
}

// reopen opens the WAL again for a write that starts at next. It holds
// mu alone throughout, so that no call (a compaction's DeleteRange from
// Raft's snapshot goroutine) changes the files while the new WAL reads
// them; when the open fails the old WAL goes on serving reads.
func (s *walStore) reopen(next uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	failed := s.writeFault()
	w, err := s.open()
	if err != nil {
		return fmt.Errorf("write raft log in %s: reopen after %v: %w", s.dir, failed, err)
	}
	// Entries of the failed batch that reached the disk: Raft writes
	// their indexes again, so they are not part of its log.
	last, err := w.LastIndex()
	if err == nil && last >= next {
		err = w.DeleteRange(next, last)
	}
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("write raft log in %s: reopen after %v: %w", s.dir, failed, err)
	}
	s.logger.Info("raft log opened again after a failed write", "dir", s.dir, "failed_write", failed)
	old := s.w
	s.w = w
	s.failMu.Lock()
	s.failed = nil
	s.failMu.Unlock()
	_ = old.Close()
	return nil
}

// writeFault returns the error of the last failed write while the WAL
// has not been opened again since, nil otherwise.
func (s *walStore) writeFault() error {
	s.failMu.Lock()
	defer s.failMu.Unlock()
	return s.failed
}

// noLeaderErr is ErrNoLeader, saying why when this server's own Raft log
// write failed (a full disk): a lone server steps down at such a failure
// and cannot lead until its log takes writes again.
func (s *Server) noLeaderErr() error {
	if w, ok := s.raftStore.(*walStore); ok {
		if err := w.writeFault(); err != nil {
			return fmt.Errorf("%w (this server's last Raft log write failed: %v)", ErrNoLeader, err)
		}
	}
	return ErrNoLeader
}

// DeleteRange implements raft.LogStore.
func (s *walStore) DeleteRange(lo, hi uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.DeleteRange(lo, hi)
}

// IsMonotonic implements raft.MonotonicLogStore: the WAL takes no gaps.
func (s *walStore) IsMonotonic() bool { return true }

// Set implements raft.StableStore.
func (s *walStore) Set(key, val []byte) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.Set(key, val)
}

// Get implements raft.StableStore.
func (s *walStore) Get(key []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.Get(key)
}

// SetUint64 implements raft.StableStore.
func (s *walStore) SetUint64(key []byte, val uint64) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.SetUint64(key, val)
}

// GetUint64 implements raft.StableStore.
func (s *walStore) GetUint64(key []byte) (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.w.GetUint64(key)
}

// Close closes the WAL.
func (s *walStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Close()
}
