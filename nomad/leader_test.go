package nomad

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// lockedBuffer is a log sink a test can read while the server writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A one-server cluster whose leadership barrier fails cannot hand
// leadership to anyone: it must keep trying to establish it, and once it
// does, its loops run and an eval written meanwhile gets processed.
func TestLeader_EstablishmentRetriedUntilItSucceeds(t *testing.T) {
	name := fmt.Sprintf("leader-retry-%d", serverSeq.Add(1))
	var barriers atomic.Int32
	fault := func(s *Server, step string) error {
		if s.config.NodeName != name || step != "barrier" {
			return nil
		}
		if barriers.Add(1) <= 2 {
			return errors.New("injected barrier failure")
		}
		return nil
	}
	leadershipFault.Store(&fault)
	t.Cleanup(func() { leadershipFault.Store(nil) })

	var logs lockedBuffer
	s := testServer(t, func(c *Config) {
		c.NodeName = name
		c.Logger = hclog.New(&hclog.LoggerOptions{Name: name, Level: hclog.Info, Output: io.MultiWriter(testWriter{t}, &logs)})
	})
	waitForLeader(t, s)
	resp := registerJob(t, s, mockJob("written-while-not-established"))

	must.Wait(t, wait.InitialSuccess(
		wait.ErrorFunc(func() error {
			e, err := s.State().EvalByID(nil, resp.EvalID)
			if err != nil {
				return err
			}
			if e == nil || e.Status == structs.EvalStatusPending {
				return fmt.Errorf("eval not processed yet (barrier attempts %d)", barriers.Load())
			}
			return nil
		}),
		// Two retries at establishRetryInterval, with room for a slow machine.
		wait.Timeout(60*time.Second),
		wait.Gap(50*time.Millisecond),
	))
	must.True(t, s.evalBroker.Enabled())
	must.Eq(t, 3, barriers.Load())
	out := logs.String()
	must.StrContains(t, out, "failed to establish leadership: attempt=2")
	must.StrContains(t, out, "injected barrier failure")
	must.StrContains(t, out, "failed to transfer leadership; will retry establishing it")
	must.StrContains(t, out, "leadership established after failed attempts: failed_attempts=2")
}
