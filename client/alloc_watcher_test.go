package client

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// groupStripRPC hands the client every alloc it fetches with a job that
// has lost the alloc's task group, as a job damaged between the server
// and the client would.
type groupStripRPC struct{ inner RPC }

func (g groupStripRPC) Call(ctx context.Context, method string, args, reply any) error {
	if err := g.inner.Call(ctx, method, args, reply); err != nil {
		return err
	}
	if resp, ok := reply.(*structs.AllocsGetResponse); ok {
		for _, a := range resp.Allocs {
			a.Job = a.Job.Copy()
			for _, tg := range a.Job.TaskGroups {
				tg.Name += "-gone"
			}
		}
	}
	return nil
}

func TestClient_AllocWithoutItsGroupIsFailed(t *testing.T) {
	srv := testServer(t)
	testClient(t, srv, "", func(cfg *Config) { cfg.RPC = groupStripRPC{inner: InProcessRPC(srv)} })
	register(t, srv, batchJob("nogroup", mockTask("t", map[string]any{"run_for": "10ms"})))

	a := serverAlloc(t, srv, "nogroup", 30*time.Second, status(structs.AllocClientStatusFailed))
	must.StrContains(t, a.ClientDescription, "Unable to add allocation due to error: ")
	must.StrContains(t, a.ClientDescription, `has no group "work"`)
}

func TestClient_AllocPersistFailureIsRetried(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", nil)
	var calls atomic.Int32
	c.db.SetAllocWriteFault(func() error {
		if calls.Add(1) <= 2 {
			return errors.New("write state.db: no space left on device")
		}
		return nil
	})
	register(t, srv, batchJob("retried", mockTask("t", map[string]any{"run_for": "10ms"})))

	a := serverAlloc(t, srv, "retried", 30*time.Second, status(structs.AllocClientStatusComplete))
	must.StrNotContains(t, a.ClientDescription, "Unable to add allocation")
	must.Eq(t, 3, calls.Load())
}

func TestClient_AllocPersistFailingForGoodIsFailed(t *testing.T) {
	srv := testServer(t)
	c := testClient(t, srv, "", nil)
	c.db.SetAllocWriteFault(func() error { return errors.New("write state.db: no space left on device") })
	register(t, srv, batchJob("unpersisted", mockTask("t", map[string]any{"run_for": "10ms"})))

	a := serverAlloc(t, srv, "unpersisted", 30*time.Second, status(structs.AllocClientStatusFailed))
	must.StrContains(t, a.ClientDescription, "persist alloc in client state after 5 attempts: write state.db: no space left on device")
	must.True(t, strings.HasPrefix(a.ClientDescription, "Unable to add allocation due to error: "))
	must.MapLen(t, 1, a.TaskStates)
	must.True(t, a.TaskStates["t"].Failed)
	must.Eq(t, structs.TaskStateDead, a.TaskStates["t"].State)
}
