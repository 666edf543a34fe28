package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// fakeRPC records Node.UpdateAlloc calls and can fail them.
type fakeRPC struct {
	mu    sync.Mutex
	fail  bool
	calls []sentBatch
}

type sentBatch struct {
	at     time.Time
	allocs map[string]string // id -> client status
}

func (f *fakeRPC) Call(_ context.Context, method string, args, _ any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return errors.New("connection refused")
	}
	b := sentBatch{at: time.Now(), allocs: map[string]string{}}
	for _, a := range args.(*structs.AllocUpdateRequest).Alloc {
		b.allocs[a.ID] = a.ClientStatus
	}
	f.calls = append(f.calls, b)
	return nil
}

func (f *fakeRPC) sent() []sentBatch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]sentBatch(nil), f.calls...)
}

func syncUnderTest(rpc RPC) (*allocSync, context.CancelFunc) {
	c := &Client{cfg: Config{SyncInterval: 200 * time.Millisecond, RetryInterval: time.Second}, rpc: rpc,
		logger: hclog.NewNullLogger(), node: &structs.Node{ID: "n1"}}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	s := newAllocSync(c)
	go s.run()
	return s, c.cancel
}

func TestAllocSync_BatchesAndSendsTerminalAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rpc := &fakeRPC{}
		s, stop := syncUnderTest(rpc)
		defer stop()
		start := time.Now()
		s.update(&structs.Allocation{ID: "a", ClientStatus: structs.AllocClientStatusRunning})
		time.Sleep(50 * time.Millisecond)
		s.update(&structs.Allocation{ID: "b", ClientStatus: structs.AllocClientStatusRunning})
		synctest.Wait()
		must.SliceEmpty(t, rpc.sent())
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		sent := rpc.sent()
		must.Len(t, 1, sent)
		must.Eq(t, 200*time.Millisecond, sent[0].at.Sub(start)) // batched from the first update
		must.Eq(t, map[string]string{"a": "running", "b": "running"}, sent[0].allocs)

		s.update(&structs.Allocation{ID: "a", ClientStatus: structs.AllocClientStatusComplete})
		synctest.Wait()
		sent = rpc.sent()
		must.Len(t, 2, sent)
		must.Eq(t, sent[1].at, time.Now()) // no delay for a terminal status
		must.Eq(t, map[string]string{"a": "complete"}, sent[1].allocs)
	})
}

func TestAllocSync_KeepsUpdatesWhileServersUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rpc := &fakeRPC{fail: true}
		s, stop := syncUnderTest(rpc)
		defer stop()
		s.update(&structs.Allocation{ID: "a", ClientStatus: structs.AllocClientStatusRunning})
		s.update(&structs.Allocation{ID: "b", ClientStatus: structs.AllocClientStatusRunning})
		time.Sleep(10 * time.Second)
		s.update(&structs.Allocation{ID: "a", ClientStatus: structs.AllocClientStatusComplete})
		time.Sleep(20 * time.Second)
		synctest.Wait()
		must.SliceEmpty(t, rpc.sent())

		rpc.mu.Lock()
		rpc.fail = false
		rpc.mu.Unlock()
		time.Sleep(time.Second)
		synctest.Wait()
		sent := rpc.sent()
		must.Len(t, 1, sent)
		must.Eq(t, map[string]string{"a": "complete", "b": "running"}, sent[0].allocs)
	})
}
