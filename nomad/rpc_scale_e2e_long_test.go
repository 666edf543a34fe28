package nomad

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-uuid"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/structs"
)

// TestE2ELong_RPC10000BlockingQueries registers 10,000 nodes over RPC
// and has each hold its own blocking alloc query (Node.GetClientAllocs,
// what a real client keeps open) through one pool: the server holds all
// of them on one multiplexed connection. It logs the heap and the
// goroutines each held query costs (the figures in
// website/reliability.md). make e2e-long runs it.
func TestE2ELong_RPC10000BlockingQueries(t *testing.T) {
	if os.Getenv("NOMADQ_E2E_LONG") != "1" {
		t.Skip("long: set NOMADQ_E2E_LONG=1 (make e2e-long)")
	}
	const nodes = 10_000
	s := testServer(t, func(c *Config) {
		c.NumSchedulers = 0
		// The nodes do not heartbeat: none goes down during the run.
		c.MinHeartbeatTTL = time.Hour
	})
	waitForLeader(t, s)
	addr := s.RPCAddr().String()
	pool := msgpackrpc.NewPool(10 * time.Second)
	t.Cleanup(pool.Shutdown)

	ids := make([]string, nodes)
	for i := range ids {
		id, err := uuid.GenerateUUID()
		must.NoError(t, err)
		ids[i] = id
	}
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan string)
	errs := make(chan error, nodes)
	for range 64 {
		wg.Go(func() {
			for id := range work {
				var resp structs.NodeUpdateResponse
				if err := pool.Call(t.Context(), addr, "Node.Register", &structs.NodeRegisterRequest{Node: mockNode(id)}, &resp); err != nil {
					errs <- fmt.Errorf("register %s: %w", id, err)
				}
			}
		})
	}
	for _, id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		must.NoError(t, err)
	}
	t.Logf("%d nodes registered over RPC in %v", nodes, time.Since(start).Round(time.Millisecond))

	index, err := s.State().LatestIndex()
	must.NoError(t, err)
	heapBefore, goBefore := settledHeap(), runtime.NumGoroutine()
	holdStart := time.Now()

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var held sync.WaitGroup
	failed := make(chan error, nodes)
	for _, id := range ids {
		// As a client does: an answer (the node's allocs or the node
		// itself changed) starts the next query from its index.
		held.Go(func() {
			min := index
			for ctx.Err() == nil {
				var resp structs.NodeClientAllocsResponse
				err := pool.Call(ctx, addr, "Node.GetClientAllocs", &structs.NodeSpecificRequest{
					NodeID: id, SecretID: id + "-secret",
					QueryOptions: structs.QueryOptions{MinQueryIndex: min, MaxQueryTime: int64(5 * time.Minute)},
				}, &resp)
				if err != nil {
					if ctx.Err() == nil {
						failed <- fmt.Errorf("query of node %s: %w", id, err)
					}
					return
				}
				min = max(min, resp.Index)
			}
		})
	}
	deadline := time.Now().Add(5 * time.Minute)
	for blockedQueries() < nodes {
		select {
		case err := <-failed:
			t.Fatal(err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server holds %d of %d blocking queries after 5m", blockedQueries(), nodes)
		}
		time.Sleep(200 * time.Millisecond)
	}
	holding := time.Since(holdStart)
	heapAfter, goAfter := settledHeap(), runtime.NumGoroutine()
	s.connsLock.Lock()
	conns := len(s.conns)
	s.connsLock.Unlock()
	must.Eq(t, 1, conns)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d blocking queries held after %v on %d connection: live heap %d MiB -> %d MiB (%.1f KiB per query), goroutines %d -> %d (%.2f per query), memory from the OS %d MiB; client and server sides together",
		nodes, holding.Round(time.Millisecond), conns, heapBefore>>20, heapAfter>>20, float64(heapAfter-heapBefore)/nodes/1024,
		goBefore, goAfter, float64(goAfter-goBefore)/nodes, ms.Sys>>20)
	cancel()
	held.Wait()
}

// settledHeap returns the live heap after a collection.
func settledHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// goroutineCount reads a record's count; the first record also holds
// the profile's header line.
var goroutineCount = regexp.MustCompile(`(?m)^(\d+) @`)

// blockedQueries counts the goroutines waiting inside blockingRPC.
func blockedQueries() int {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	n := 0
	for rec := range strings.SplitSeq(buf.String(), "\n\n") {
		if !strings.Contains(rec, "nomad.(*Server).blockingRPC") {
			continue
		}
		if m := goroutineCount.FindStringSubmatch(rec); m != nil {
			c, _ := strconv.Atoi(m[1])
			n += c
		}
	}
	return n
}
