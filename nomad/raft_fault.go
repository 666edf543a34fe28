package nomad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/raft"
)

// ErrServerStopped is matched (errors.Is) by the error a server that
// stopped on its own reports through Fatal.
var ErrServerStopped = errors.New("server stopped")

// Fatal is closed when the server stopped on its own because going on
// would be unsafe (today: a committed Raft entry its FSM cannot decode);
// FatalErr then says why. The agent exits non-zero with that message.
func (s *Server) Fatal() <-chan struct{} { return s.fatalCh }

// FatalErr returns why the server stopped on its own, nil while it runs
// or when it was shut down on purpose.
func (s *Server) FatalErr() error {
	select {
	case <-s.fatalCh:
		return s.fatalErr
	default:
		return nil
	}
}

// watchFSMFault stops the server when its FSM meets a committed entry it
// cannot decode. As Nomad's FSM panics on such an entry, the server does
// not go on: skipping the entry would leave this server's state different
// from every other server's for ever, and a leader would then schedule
// from it. The FSM already refuses every later entry and every snapshot;
// this shuts Raft and the listeners down and reports the fault up. It
// runs outside s.wg, since it calls Shutdown, which waits for s.wg.
func (s *Server) watchFSMFault() {
	select {
	case <-s.shutdownCh:
		return
	case <-s.fsm.Faulted():
	}
	cerr := s.fsm.Fault()
	where := "the in-memory Raft log (dev mode)"
	if !s.config.DevMode {
		dir := filepath.Join(s.config.DataDir, "server", "raft", "wal")
		where = "the Raft log in " + dir
		if seg := walSegmentFor(dir, cerr.Index); seg != "" {
			where = "the Raft log segment " + seg
		}
	}
	s.fatalErr = fmt.Errorf("%w: %w, in %s; a server does not skip a committed entry, so it stops here: "+
		"restore its data dir from a backup, or remove it and join the cluster again to take the leader's state",
		ErrServerStopped, cerr, where)
	s.logger.Error("stopping the server", "error", s.fatalErr)
	_ = s.Shutdown()
	close(s.fatalCh)
}

// walSegmentFor returns the path of the raft-wal segment file that holds
// index (the one with the greatest base index not above it), "" when
// none is found. Segment files are named "<base index, 20 digits>-<id,
// 16 hex digits>.wal".
func walSegmentFor(dir string, index uint64) string {
	names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil {
		return ""
	}
	sort.Strings(names)
	found := ""
	for _, name := range names {
		base, _, ok := strings.Cut(filepath.Base(name), "-")
		if !ok {
			continue
		}
		b, err := strconv.ParseUint(base, 10, 64)
		if err != nil || b > index {
			continue
		}
		if _, err := os.Stat(name); err == nil {
			found = name
		}
	}
	return found
}

// reachableSnapshots is the snapshot store Raft starts from: it lists
// only the snapshots the log reaches (one whose index is at least the
// log's first index minus one). Raft restores the newest snapshot that
// opens (it checks the CRC) and replays the log after it; when the newest
// does not open it falls back to an older one, and when the log was
// compacted past that one, the entries between are gone: raft-go panics
// at the first missing one while it reads the log at start, or would
// serve a state without them. Listing only reachable snapshots turns that
// into a refusal to start (see startErr).
type reachableSnapshots struct {
	raft.SnapshotStore
	first uint64
	// skipped are the IDs of the snapshots left out.
	skipped []string
}

// List implements raft.SnapshotStore.
func (r *reachableSnapshots) List() ([]*raft.SnapshotMeta, error) {
	all, err := r.SnapshotStore.List()
	if err != nil || r.first <= 1 {
		return all, err
	}
	var out []*raft.SnapshotMeta
	r.skipped = r.skipped[:0]
	for _, m := range all {
		if m.Index+1 >= r.first {
			out = append(out, m)
		} else {
			r.skipped = append(r.skipped, m.ID)
		}
	}
	return out, nil
}

// startErr explains why Raft did not start on the data in dir.
func (r *reachableSnapshots) startErr(dir string, err error) error {
	if len(r.skipped) == 0 {
		return fmt.Errorf("server: start raft (data in %s; see the log for the file that failed): %w", dir, err)
	}
	return fmt.Errorf("server: start raft: no snapshot in %s that the Raft log in %s (from index %d) reaches opens (see the log for why), "+
		"and the older ones (%s) miss the entries between: %w; restore the data dir from a backup, or remove it and join the cluster again to take the leader's state",
		filepath.Join(dir, "snapshots"), filepath.Join(dir, "wal"), r.first, strings.Join(r.skipped, ", "), err)
}
