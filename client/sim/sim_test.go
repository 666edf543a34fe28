package sim

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// fakeServers answers the simulator's RPCs from memory: nodes register,
// one alloc (when set) is handed to the first node that watches, and
// status updates are recorded.
type fakeServers struct {
	mu       sync.Mutex
	nodes    map[string]*structs.Node
	alloc    *structs.Allocation
	handed   bool
	updates  []*structs.Allocation
	updated  chan struct{}
	watchers int
	// next, when set, replaces alloc at index 11 for a node that has
	// seen index 10: an in-place update of the alloc it runs.
	next *structs.Allocation
	// wake tells a blocked alloc query that next was set.
	wake chan struct{}
}

func newFakeServers() *fakeServers {
	return &fakeServers{nodes: map[string]*structs.Node{}, updated: make(chan struct{}, 100), wake: make(chan struct{}, 1)}
}

func (f *fakeServers) Call(ctx context.Context, method string, args, reply any) error {
	switch method {
	case "Node.Register":
		req := args.(*structs.NodeRegisterRequest)
		f.mu.Lock()
		f.nodes[req.Node.ID] = req.Node
		f.mu.Unlock()
		reply.(*structs.NodeUpdateResponse).HeartbeatTTL = time.Minute
	case "Node.UpdateStatus":
		reply.(*structs.NodeUpdateResponse).HeartbeatTTL = time.Minute
	case "Node.GetClientAllocsBatch":
		req := args.(*structs.NodesClientAllocsRequest)
		f.mu.Lock()
		f.watchers++
		a := f.alloc
		give := a != nil && !f.handed && req.MinQueryIndex == 0
		if give {
			f.handed = true
			a.NodeID = req.Nodes[0].NodeID
		}
		f.mu.Unlock()
		resp := reply.(*structs.NodesClientAllocsResponse)
		if give {
			resp.Allocs = map[string]map[string]uint64{a.NodeID: {a.ID: 10}}
			resp.Index = 10
			return nil
		}
		f.mu.Lock()
		next := f.next
		update := next != nil && req.MinQueryIndex == 10
		if update {
			next.NodeID = a.NodeID
			f.alloc, f.next = next, nil
		}
		f.mu.Unlock()
		if update {
			resp.Allocs = map[string]map[string]uint64{next.NodeID: {next.ID: 11}}
			resp.Index = 11
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-f.wake:
			// An update was staged (next): answer the query again.
			return f.Call(ctx, method, args, reply)
		}
	case "Alloc.GetAllocs":
		f.mu.Lock()
		defer f.mu.Unlock()
		reply.(*structs.AllocsGetResponse).Allocs = []*structs.Allocation{f.alloc.Copy()}
	case "Node.UpdateAlloc":
		req := args.(*structs.AllocUpdateRequest)
		f.mu.Lock()
		f.updates = append(f.updates, req.Alloc...)
		f.mu.Unlock()
		f.updated <- struct{}{}
	}
	return nil
}

// runOne starts a simulator of count nodes against f, which hands the
// first node to watch one alloc of job's group "g".
func runOne(t *testing.T, f *fakeServers, job *structs.Job, count int) *Sim {
	t.Helper()
	f.alloc = &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: "default", JobID: job.ID, TaskGroup: "g", Job: job,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusPending,
		AllocModifyIndex: 10, CreateTime: time.Now().UnixNano(),
	}
	s, err := New(Config{Count: count, RPC: f, SyncInterval: 10 * time.Millisecond})
	must.NoError(t, err)
	t.Cleanup(s.Shutdown)
	return s
}

func (f *fakeServers) registered() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.nodes)
}

// TestSim_MemoryPerNode registers 5,000 simulated nodes and reports what
// each costs the process (the figure in website/simulator.md), holding
// the goroutine count to the fixed pools: nothing runs per node.
func TestSim_MemoryPerNode(t *testing.T) {
	const count = 5000
	f := newFakeServers()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	goroutinesBefore := runtime.NumGoroutine()

	s, err := New(Config{Count: count, RPC: f, Datacenter: "dc1"})
	must.NoError(t, err)
	t.Cleanup(s.Shutdown)
	select {
	case <-s.Ready():
	case <-time.After(60 * time.Second):
		t.Fatalf("%d of %d nodes registered after 60s", s.Registered(), count)
	}
	must.Eq(t, count, f.registered())
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perNode := (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / count
	goroutines := runtime.NumGoroutine() - goroutinesBefore
	t.Logf("simulated nodes: %d; heap per node: %.0f bytes; goroutines: %d (workers 32, watch batches %d)", count, perNode, goroutines, (count+127)/128)
	must.Less(t, 200, goroutines, must.Sprint("goroutines must not grow with the node count"))
	must.Less(t, 16*1024, perNode, must.Sprint("a simulated node should cost a few KiB at most"))
}

// TestSim_RunsMockTask: a node runs the alloc handed to it with
// mock_driver semantics and reports it, here a failure (exit_code 3,
// no restarts) with the Terminated and Not Restarting events.
func TestSim_RunsMockTask(t *testing.T) {
	f := newFakeServers()
	job := &structs.Job{
		ID: "j", Namespace: "default", Type: structs.JobTypeBatch,
		TaskGroups: []*structs.TaskGroup{{
			Name:          "g",
			RestartPolicy: &structs.RestartPolicy{Attempts: 0, Mode: structs.RestartPolicyModeFail},
			Tasks: []*structs.Task{{
				Name: "t", Driver: "mock_driver",
				Config: map[string]any{"run_for": "5ms", "exit_code": 3},
			}},
		}},
	}
	runOne(t, f, job, 3)

	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		var last *structs.Allocation
		if n := len(f.updates); n > 0 {
			last = f.updates[n-1]
		}
		f.mu.Unlock()
		if last != nil && last.ClientStatus == structs.AllocClientStatusFailed {
			ts := last.TaskStates["t"]
			must.Eq(t, structs.TaskStateDead, ts.State)
			must.True(t, ts.Failed)
			var types []string
			for _, e := range ts.Events {
				types = append(types, e.Type)
			}
			must.Eq(t, []string{structs.TaskReceived, structs.TaskStarted, structs.TaskTerminated, structs.TaskNotRestarting}, types)
			must.Eq(t, 3, ts.Events[2].ExitCode)
			must.Eq(t, f.alloc.NodeID, last.NodeID)
			return
		}
		select {
		case <-f.updated:
		case <-deadline:
			t.Fatalf("no failed update after 10s; last: %+v", last)
		}
	}
}

// A finished alloc's last view goes to the servers once; then the node
// keeps only the alloc's ID, not its tasks' states and events (which
// piled up in a sim agent's heap, shared with its servers), and a late
// change (a stray step, a stop) sends nothing more.
func TestSim_FinishedAllocKeepsNoTasks(t *testing.T) {
	f := newFakeServers()
	job := &structs.Job{
		ID: "j", Namespace: "default", Type: structs.JobTypeBatch,
		TaskGroups: []*structs.TaskGroup{{
			Name:  "g",
			Tasks: []*structs.Task{{Name: "t", Driver: "mock_driver", Config: map[string]any{"run_for": "5ms"}}},
		}},
	}
	s := runOne(t, f, job, 1)

	updates := func() []*structs.Allocation {
		f.mu.Lock()
		defer f.mu.Unlock()
		return append([]*structs.Allocation(nil), f.updates...)
	}
	deadline := time.After(10 * time.Second)
	for {
		u := updates()
		if n := len(u); n > 0 && u[n-1].ClientStatus == structs.AllocClientStatusComplete {
			must.Eq(t, structs.TaskStateDead, u[n-1].TaskStates["t"].State)
			break
		}
		select {
		case <-f.updated:
		case <-deadline:
			t.Fatalf("no complete update after 10s: %d updates", len(updates()))
		}
	}
	sent := len(updates())

	// Look at the alloc, and change it late, on the simulator's
	// scheduler, which owns the nodes' allocs.
	type seen struct {
		known, reported bool
		tasks           int
		queued          int
	}
	got := make(chan seen, 1)
	s.sched.at(time.Now(), func() {
		n := s.nodes[0]
		a := n.allocs[f.alloc.ID]
		if a == nil {
			got <- seen{}
			return
		}
		s.changed(a)
		s.kill(a, "", "", "")
		s.sync.mu.Lock()
		queued := len(s.sync.pending[n])
		s.sync.mu.Unlock()
		got <- seen{known: true, reported: a.reported, tasks: len(a.tasks), queued: queued}
	})
	select {
	case g := <-got:
		must.True(t, g.known, must.Sprint("the finished alloc is still known by its ID"))
		must.True(t, g.reported)
		must.Eq(t, 0, g.tasks, must.Sprint("a finished, reported alloc keeps no tasks"))
		must.Eq(t, 0, g.queued, must.Sprint("a late change queues no new view"))
	case <-time.After(10 * time.Second):
		t.Fatal("the simulator's scheduler did not run the check")
	}
	must.Eq(t, sent, len(updates()))
}

// An in-place update that lowers a running alloc's max_run_duration
// moves its deadline on a simulated node as on a real client (the same
// allocrunner.DecideMaxRun): armed at an hour, lowered to 200ms, the
// alloc is ended by max_run_duration.
func TestSim_InPlaceUpdateMovesMaxRunDuration(t *testing.T) {
	f := newFakeServers()
	hour, short := time.Hour, 200*time.Millisecond
	job := &structs.Job{
		ID: "j", Namespace: "default", Type: structs.JobTypeBatch,
		TaskGroups: []*structs.TaskGroup{{
			Name: "g", MaxRunDuration: &hour,
			Tasks: []*structs.Task{{Name: "t", Driver: "mock_driver", Config: map[string]any{"run_for": "1h"}}},
		}},
	}
	runOne(t, f, job, 1)
	lowered := job.Copy()
	lowered.TaskGroups[0].MaxRunDuration = &short
	f.mu.Lock()
	next := f.alloc.Copy()
	f.mu.Unlock()
	next.Job, next.AllocModifyIndex = lowered, 11
	f.mu.Lock()
	f.next = next
	f.mu.Unlock()
	f.wake <- struct{}{}

	deadline := time.After(20 * time.Second)
	for {
		f.mu.Lock()
		var last *structs.Allocation
		if n := len(f.updates); n > 0 {
			last = f.updates[n-1]
		}
		f.mu.Unlock()
		if last != nil && last.ClientTerminalStatus() {
			must.Eq(t, structs.AllocClientStatusComplete, last.ClientStatus)
			must.Eq(t, structs.AllocTimeoutReasonMaxRunDuration, last.ClientDescription)
			return
		}
		select {
		case <-f.updated:
		case <-deadline:
			t.Fatalf("the lowered max_run_duration did not end the alloc in 20s; last: %+v", last)
		}
	}
}
