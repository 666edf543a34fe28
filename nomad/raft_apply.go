package nomad

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	metrics "github.com/hashicorp/go-metrics"
	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// raftApply encodes a message, commits it through Raft and returns the
// FSM's response and the entry's index. An error from the FSM is returned
// as the error.
func (s *Server) raftApply(t structs.MessageType, msg any) (any, uint64, error) {
	future, err := s.raftApplyAsync(t, msg)
	if err != nil {
		return nil, 0, err
	}
	if err := future.Error(); err != nil {
		return nil, 0, err
	}
	resp := future.Response()
	if err, ok := resp.(error); ok && err != nil {
		return nil, future.Index(), err
	}
	return resp, future.Index(), nil
}

// raftApplyAsync encodes msg and hands it to Raft without waiting for it
// to be applied; raftResult waits. The apply's latency is measured when
// it completes.
func (s *Server) raftApplyAsync(t structs.MessageType, msg any) (raft.ApplyFuture, error) {
	buf, err := structs.Encode(t, msg)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", t, err)
	}
	// An entry no server could decode would stop every server once
	// committed: refuse it before.
	if err := checkEntryDepth(t, buf); err != nil {
		return nil, err
	}
	start := time.Now()
	return &measuredApply{ApplyFuture: s.raft.Apply(buf, s.config.RaftTimeout), srv: s, start: start,
		labels: []metrics.Label{{Name: "type", Value: t.String()}}}, nil
}

// measuredApply records nomad.nomad.raft.apply the first time its result
// is waited for.
type measuredApply struct {
	raft.ApplyFuture
	srv      *Server
	start    time.Time
	labels   []metrics.Label
	measured sync.Once
}

func (m *measuredApply) Error() error {
	err := m.ApplyFuture.Error()
	m.measured.Do(func() {
		m.srv.metrics().MeasureSinceWithLabels([]string{"nomad", "raft", "apply"}, m.start, m.labels)
	})
	return err
}

// raftResult waits for an apply and returns its error, or the error the
// FSM answered with.
func raftResult(f raft.ApplyFuture) error {
	if err := f.Error(); err != nil {
		return err
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// codeNotFound codes a write whose object was gone when the FSM applied
// it (state.ErrNotFound, usually deleted since the endpoint looked) as a
// 404 for the caller, with the same message. state leaves the error
// uncoded, as leader loops that log it are no HTTP caller; other errors
// pass as they are.
func codeNotFound(err error) error {
	if _, _, coded := structs.CodeFromRPCCodedErr(err); coded || !errors.Is(err, state.ErrNotFound) {
		return err
	}
	return structs.NewErrRPCCoded(http.StatusNotFound, err.Error())
}
