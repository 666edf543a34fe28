package fsm

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/blockedevals"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/structs"
)

// testFSM returns an FSM whose leader structures are disabled, as on a
// follower.
func testFSM(t testing.TB) *FSM {
	t.Helper()
	broker, err := evalbroker.New(time.Minute, time.Second, time.Second, 3)
	must.NoError(t, err)
	f, err := New(hclog.NewNullLogger(), blockedevals.New(broker, hclog.NewNullLogger()), broker)
	must.NoError(t, err)
	return f
}

// apply encodes msg and applies it at index, returning the FSM's answer.
func apply(t *testing.T, f *FSM, index uint64, typ structs.MessageType, msg any) any {
	t.Helper()
	buf, err := structs.Encode(typ, msg)
	must.NoError(t, err)
	return f.Apply(&raft.Log{Index: index, Data: buf})
}

func mustApply(t *testing.T, f *FSM, index uint64, typ structs.MessageType, msg any) {
	t.Helper()
	if resp := apply(t, f, index, typ, msg); resp != nil {
		if err, ok := resp.(error); ok {
			t.Fatalf("apply %s at %d: %v", typ, index, err)
		}
	}
}

// mockJob returns a valid batch job (mock.Job).
func mockJob(id string) *structs.Job { return mock.Job(id) }

// mockNode returns a ready node with 4000 MHz and 8 GiB (mock.Node).
func mockNode(id string) *structs.Node { return mock.Node(id) }

// memSink is a raft.SnapshotSink into a buffer.
type memSink struct {
	bytes.Buffer
	canceled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.canceled = true; return nil }
func (s *memSink) Close() error  { return nil }
