package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/structs"
)

// TestRPC_CallsShareOneConnection holds many blocking queries from one
// pool at once: the server sees one connection, every query wakes on the
// write it waited for, and the connection is still the only one after.
func TestRPC_CallsShareOneConnection(t *testing.T) {
	s := testServer(t, func(c *Config) { c.NumSchedulers = 0 })
	waitForLeader(t, s)
	first := registerJob(t, s, mockJob("watched"))

	pool := msgpackrpc.NewPool(5 * time.Second)
	t.Cleanup(pool.Shutdown)
	const calls = 50
	type result struct {
		resp structs.SingleJobResponse
		err  error
	}
	done := make(chan result, calls)
	for range calls {
		go func() {
			var r result
			r.err = pool.Call(t.Context(), s.RPCAddr().String(), "Job.Get", &structs.JobSpecificRequest{
				JobID:        "watched",
				QueryOptions: structs.QueryOptions{MinQueryIndex: first.Index, MaxQueryTime: int64(time.Minute)},
			}, &r.resp)
			done <- r
		}()
	}
	changed := mockJob("watched")
	changed.Priority = 80
	second := registerJob(t, s, changed)
	for range calls {
		r := <-done
		must.NoError(t, r.err)
		must.Eq(t, second.Index, r.resp.Index)
	}
	s.connsLock.Lock()
	conns := len(s.conns)
	s.connsLock.Unlock()
	must.Eq(t, 1, conns, must.Sprint(fmt.Sprintf("%d calls took %d connections", calls, conns)))
}
