package nomad

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
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
