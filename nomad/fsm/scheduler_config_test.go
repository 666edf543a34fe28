package fsm

import (
	"fmt"
	"testing"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/structs"
)

// Switching the batch queue off is one Raft entry and must be one state
// change: a reader woken by the configuration's watch never sees the
// queue off while its rows are still there, and the evals that waited go
// to the broker.
func TestFSM_SchedulerConfigSwitchOffIsAtomic(t *testing.T) {
	cases := []struct {
		name string
		cas  bool
	}{{"set", false}, {"check-and-set", true}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := testFSM(t)
			f.broker.SetEnabled(true)
			t.Cleanup(func() { f.broker.SetEnabled(false) })
			on := structs.DefaultSchedulerConfiguration()
			on.BatchQueue.Enabled = true
			mustApply(t, f, 1, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: *on})
			// Enough rows that draining them takes a while: a reader
			// that could see a half-applied entry gets the chance.
			const n = 2000
			for i := range n {
				job := mockJob(fmt.Sprintf("job-%04d", i))
				mustApply(t, f, uint64(2+i), structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: job, Eval: mock.JobEval(job)})
			}
			st := f.State()
			stats, err := st.BatchQueueStats(nil)
			must.NoError(t, err)
			must.Eq(t, n, stats.Queued)
			must.Eq(t, 0, f.broker.Stats().TotalReady)

			type view struct {
				enabled bool
				rows    int
			}
			views := make(chan view, 16)
			watching := make(chan struct{})
			go func() {
				defer close(views)
				for first := true; ; first = false {
					ws := memdb.NewWatchSet()
					snap, err := st.Snapshot()
					if err != nil {
						t.Error(err)
						return
					}
					_, cfg, err := snap.SchedulerConfigWatch(ws)
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := snap.BatchQueueTableIndex(ws); err != nil {
						t.Error(err)
						return
					}
					rows := 0
					if err := snap.BatchQueueEach(func(*structs.BatchQueueEntry) { rows++ }); err != nil {
						t.Error(err)
						return
					}
					v := view{enabled: cfg.BatchQueue.Enabled, rows: rows}
					views <- v
					if !v.enabled {
						return
					}
					if first {
						close(watching)
					}
					ws.Watch(nil)
				}
			}()
			<-watching

			off := *on
			off.BatchQueue.Enabled = false
			if tc.cas {
				_, cfg, err := st.SchedulerConfig()
				must.NoError(t, err)
				off.ModifyIndex = cfg.ModifyIndex
			}
			resp := apply(t, f, n+10, structs.SchedulerConfigRequestType, &structs.SchedulerSetConfigRequest{Config: off, CAS: tc.cas})
			if tc.cas {
				must.Eq[any](t, true, resp)
			} else {
				must.Nil(t, resp)
			}
			var last view
			for v := range views {
				must.False(t, !v.enabled && v.rows > 0, must.Sprintf("a reader saw the queue off with %d rows left", v.rows))
				last = v
			}
			must.Eq(t, view{enabled: false, rows: 0}, last)
			must.Eq(t, n, f.broker.Stats().TotalReady)
		})
	}
}
