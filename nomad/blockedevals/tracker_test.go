package blockedevals

import (
	"context"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/structs"
)

// testEval returns a pending service eval (mock.Eval).
func testEval(jobID string, createIndex uint64) *structs.Evaluation {
	return mock.Eval(jobID, createIndex)
}

// testBroker returns an enabled eval broker with Nomad's default settings
// and no nack delays.
func testBroker(t *testing.T) *evalbroker.Broker {
	t.Helper()
	b, err := evalbroker.New(evalbroker.DefaultNackTimeout, 0, 0, evalbroker.DefaultDeliveryLimit)
	must.NoError(t, err)
	b.SetEnabled(true)
	return b
}

// dequeueNow dequeues without waiting for an eval to arrive: with its
// context already canceled, DequeueContext returns at once when no eval
// is ready.
func dequeueNow(t *testing.T, b *evalbroker.Broker, schedulers ...string) (*structs.Evaluation, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	eval, token, err := b.DequeueContext(ctx, schedulers)
	if eval == nil {
		must.ErrorIs(t, err, context.Canceled)
	} else {
		must.NoError(t, err)
	}
	return eval, token
}

// recordingEnqueuer records the evals handed to it.
type recordingEnqueuer struct {
	mu    sync.Mutex
	evals []*structs.Evaluation
}

func (r *recordingEnqueuer) Enqueue(eval *structs.Evaluation) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evals = append(r.evals, eval)
}

// ids returns the sorted IDs of the evals enqueued so far.
func (r *recordingEnqueuer) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, e := range r.evals {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

// testBlockedEval returns a blocked service eval for jobID; the eval ID is
// "<jobID>-<createIndex>".
func testBlockedEval(jobID string, createIndex, snapshotIndex uint64, eligibility map[string]bool) *structs.Evaluation {
	eval := testEval(jobID, createIndex)
	eval.Status = structs.EvalStatusBlocked
	eval.TriggeredBy = structs.EvalTriggerQueuedAllocs
	eval.SnapshotIndex = snapshotIndex
	eval.ClassEligibility = eligibility
	return eval
}

func testBlockedEvals(t *testing.T) (*Tracker, *recordingEnqueuer) {
	t.Helper()
	enq := &recordingEnqueuer{}
	b := New(enq, nil)
	b.SetEnabled(true)
	return b, enq
}

func evalIDs(evals []*structs.Evaluation) []string {
	var ids []string
	for _, e := range evals {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	return ids
}

func TestBlockedEvals_OnePerJob(t *testing.T) {
	cases := []struct {
		name          string
		evals         []*structs.Evaluation
		wantBlocked   string
		wantDuplicate []string
	}{
		{
			name:          "newer eval replaces older",
			evals:         []*structs.Evaluation{testBlockedEval("job", 10, 10, nil), testBlockedEval("job", 20, 20, nil)},
			wantBlocked:   "job-20",
			wantDuplicate: []string{"job-10"},
		},
		{
			name:          "older eval arriving late is the duplicate",
			evals:         []*structs.Evaluation{testBlockedEval("job", 20, 20, nil), testBlockedEval("job", 10, 10, nil)},
			wantBlocked:   "job-20",
			wantDuplicate: []string{"job-10"},
		},
		{
			name:          "a later snapshot counts as newer",
			evals:         []*structs.Evaluation{testBlockedEval("job", 20, 20, nil), testBlockedEval("job", 10, 30, nil)},
			wantBlocked:   "job-10",
			wantDuplicate: []string{"job-20"},
		},
		{
			name:          "a tracked eval with a later snapshot stays",
			evals:         []*structs.Evaluation{testBlockedEval("job", 10, 30, nil), testBlockedEval("job", 20, 20, nil)},
			wantBlocked:   "job-10",
			wantDuplicate: []string{"job-20"},
		},
		{
			name:          "three evals keep the newest",
			evals:         []*structs.Evaluation{testBlockedEval("job", 10, 10, nil), testBlockedEval("job", 30, 30, nil), testBlockedEval("job", 20, 20, nil)},
			wantBlocked:   "job-30",
			wantDuplicate: []string{"job-10", "job-20"},
		},
		{
			name:        "same eval twice is tracked once",
			evals:       []*structs.Evaluation{testBlockedEval("job", 10, 10, nil), testBlockedEval("job", 10, 10, nil)},
			wantBlocked: "job-10",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, enq := testBlockedEvals(t)
			for _, e := range tc.evals {
				b.Block(e)
			}
			b.Block(testBlockedEval("other", 5, 5, nil))

			must.Eq(t, tc.wantDuplicate, evalIDs(b.GetDuplicates(0)))
			must.Nil(t, b.GetDuplicates(0), must.Sprint("duplicates are handed out once"))
			must.Eq(t, Stats{
				TotalBlocked: 2,
				ByJob: map[structs.NamespacedID]int{
					{Namespace: structs.DefaultNamespace, ID: "job"}:   1,
					{Namespace: structs.DefaultNamespace, ID: "other"}: 1,
				},
			}, b.Stats())

			b.Unblock("any-class", 100)
			must.Eq(t, []string{tc.wantBlocked, "other-5"}, enq.ids())
		})
	}
}

func TestBlockedEvals_BlockIgnored(t *testing.T) {
	cases := []struct {
		name    string
		enabled bool
		status  string
	}{
		{"disabled", false, structs.EvalStatusBlocked},
		{"pending eval", true, structs.EvalStatusPending},
		{"complete eval", true, structs.EvalStatusComplete},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, enq := testBlockedEvals(t)
			b.SetEnabled(tc.enabled)
			eval := testBlockedEval("job", 1, 1, nil)
			eval.Status = tc.status
			b.Block(eval)
			must.Eq(t, 0, b.Stats().TotalBlocked)
			b.Unblock("class", 10)
			must.SliceEmpty(t, enq.ids())
		})
	}
}

func TestBlockedEvals_UnblockByClass(t *testing.T) {
	cases := []struct {
		name        string
		eligibility map[string]bool
		escaped     bool
		wantUnblock bool
	}{
		{"eligible for the class", map[string]bool{"c1": true, "c2": false}, false, true},
		{"ineligible for the class", map[string]bool{"c1": false, "c2": true}, false, false},
		{"class not seen by the scheduler", map[string]bool{"c2": false}, false, true},
		{"no eligibility recorded", nil, false, true},
		{"escaped, even if ineligible", map[string]bool{"c1": false}, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, enq := testBlockedEvals(t)
			eval := testBlockedEval("job", 10, 10, tc.eligibility)
			eval.EscapedComputedClass = tc.escaped
			b.Block(eval)
			wantEscaped := 0
			if tc.escaped {
				wantEscaped = 1
			}
			must.Eq(t, wantEscaped, b.Stats().TotalEscaped)

			b.Unblock("c1", 20)
			if !tc.wantUnblock {
				must.SliceEmpty(t, enq.ids())
				must.Eq(t, 1, b.Stats().TotalBlocked)
				return
			}
			must.Eq(t, []string{eval.ID}, enq.ids())
			got := enq.evals[0]
			must.Eq(t, structs.EvalStatusPending, got.Status)
			must.Eq(t, structs.EvalStatusBlocked, eval.Status, must.Sprint("the tracked eval is not modified"))
			got.Status = eval.Status
			must.Eq(t, eval, got)
			must.Eq(t, 0, b.Stats().TotalBlocked)

			b.Unblock("c1", 30)
			must.Len(t, 1, enq.ids(), must.Sprint("an unblocked eval is not tracked any more"))
		})
	}
}

func TestBlockedEvals_MissedUnblock(t *testing.T) {
	cases := []struct {
		name          string
		snapshotIndex uint64
		eligibility   map[string]bool
		escaped       bool
		wantEnqueued  bool
	}{
		{"eligible class unblocked after snapshot", 90, map[string]bool{"c1": true}, false, true},
		{"unseen class unblocked after snapshot", 90, map[string]bool{"c2": true}, false, true},
		{"ineligible class unblocked after snapshot", 90, map[string]bool{"c1": false}, false, false},
		{"unblock before snapshot", 110, map[string]bool{"c1": true}, false, false},
		{"unblock at snapshot", 100, map[string]bool{"c1": true}, false, false},
		{"escaped, any unblock after snapshot", 90, map[string]bool{"c1": false}, true, true},
		{"escaped, unblock before snapshot", 110, nil, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, enq := testBlockedEvals(t)
			b.Unblock("c1", 100)

			eval := testBlockedEval("job", 10, tc.snapshotIndex, tc.eligibility)
			eval.EscapedComputedClass = tc.escaped
			b.Block(eval)
			if tc.wantEnqueued {
				must.Eq(t, []string{eval.ID}, enq.ids())
				must.Eq(t, 0, b.Stats().TotalBlocked)
			} else {
				must.SliceEmpty(t, enq.ids())
				must.Eq(t, 1, b.Stats().TotalBlocked)
			}
		})
	}
}

func TestBlockedEvals_MissedUnblockReplacesOlder(t *testing.T) {
	b, enq := testBlockedEvals(t)
	old := testBlockedEval("job", 10, 10, map[string]bool{"c1": false})
	b.Block(old)
	b.Unblock("c1", 100)
	newer := testBlockedEval("job", 50, 50, map[string]bool{"c1": true})
	b.Block(newer)

	must.Eq(t, []string{newer.ID}, enq.ids())
	must.Eq(t, []string{old.ID}, evalIDs(b.GetDuplicates(0)))
	must.Eq(t, 0, b.Stats().TotalBlocked)
}

func TestBlockedEvals_SystemEvalsByNode(t *testing.T) {
	b, enq := testBlockedEvals(t)
	onNode := func(jobID, nodeID string, createIndex, snapshotIndex uint64) *structs.Evaluation {
		e := testBlockedEval(jobID, createIndex, snapshotIndex, nil)
		e.Type = structs.JobTypeSystem
		e.NodeID = nodeID
		return e
	}
	b.Block(onNode("sys", "n1", 10, 10))
	b.Block(onNode("sys", "n2", 11, 11))
	b.Block(onNode("sys", "n1", 12, 12))
	must.Eq(t, []string{"sys-10"}, evalIDs(b.GetDuplicates(0)))
	must.Eq(t, 2, b.Stats().ByJob[structs.NamespacedID{Namespace: structs.DefaultNamespace, ID: "sys"}])

	b.Unblock("class", 20)
	must.SliceEmpty(t, enq.ids(), must.Sprint("system evals wait for their node"))

	b.UnblockNode("n1", 30)
	must.Eq(t, []string{"sys-12"}, enq.ids())
	must.Eq(t, 1, b.Stats().TotalBlocked)

	b.Block(onNode("sys2", "n1", 25, 25))
	must.Eq(t, []string{"sys-12", "sys2-25"}, enq.ids(), must.Sprint("missed the node unblock at 30"))
	b.Block(onNode("sys3", "n1", 35, 35))
	must.Eq(t, 2, b.Stats().TotalBlocked)
}

func TestBlockedEvals_UnblockFailed(t *testing.T) {
	b, enq := testBlockedEvals(t)
	maxPlans := testBlockedEval("a", 10, 10, map[string]bool{"c1": false})
	maxPlans.TriggeredBy = structs.EvalTriggerMaxPlans
	b.Block(maxPlans)
	b.Block(testBlockedEval("b", 11, 11, map[string]bool{"c1": false}))

	b.UnblockFailed()
	must.Eq(t, []string{maxPlans.ID}, enq.ids())
	must.Eq(t, 1, b.Stats().TotalBlocked)
}

func TestBlockedEvals_Untrack(t *testing.T) {
	b, enq := testBlockedEvals(t)
	b.Block(testBlockedEval("job", 10, 10, nil))
	escaped := testBlockedEval("escaped", 11, 11, nil)
	escaped.EscapedComputedClass = true
	b.Block(escaped)
	b.Block(testBlockedEval("other", 12, 12, nil))

	b.Untrack(structs.DefaultNamespace, "job")
	b.Untrack(structs.DefaultNamespace, "escaped")
	b.Untrack("other-namespace", "other")
	must.Eq(t, 1, b.Stats().TotalBlocked)
	must.Nil(t, b.GetDuplicates(0), must.Sprint("untracked evals are not duplicates"))

	b.Unblock("class", 20)
	must.Eq(t, []string{"other-12"}, enq.ids())

	b.Block(testBlockedEval("job", 25, 25, nil))
	must.Eq(t, 1, b.Stats().TotalBlocked, must.Sprint("the job can block again"))
	must.Nil(t, b.GetDuplicates(0))
}

func TestBlockedEvals_GetDuplicatesWaits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, _ := testBlockedEvals(t)
		start := time.Now()
		must.Nil(t, b.GetDuplicates(10*time.Second))
		must.Eq(t, 10*time.Second, time.Since(start))

		got := make(chan []*structs.Evaluation, 1)
		go func() { got <- b.GetDuplicates(time.Minute) }()
		time.Sleep(3 * time.Second)
		b.Block(testBlockedEval("job", 10, 10, nil))
		b.Block(testBlockedEval("job", 20, 20, nil))
		synctest.Wait()
		must.Eq(t, []string{"job-10"}, evalIDs(<-got))
	})
}

func TestBlockedEvals_Disable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, enq := testBlockedEvals(t)
		b.Block(testBlockedEval("job", 10, 10, nil))
		b.Block(testBlockedEval("job", 20, 20, nil))
		b.Block(testBlockedEval("other", 5, 5, nil))
		b.Unblock("c1", 1) // records the unblock index and releases everything
		b.Block(testBlockedEval("waiting", 30, 30, nil))

		got := make(chan []*structs.Evaluation, 1)
		go func() {
			b.GetDuplicates(0) // takes job-10
			got <- b.GetDuplicates(time.Hour)
		}()
		synctest.Wait()
		enqueued := len(enq.ids())

		b.SetEnabled(false)
		must.False(t, b.Enabled())
		must.Nil(t, <-got, must.Sprint("a disable releases GetDuplicates"))
		must.Eq(t, Stats{ByJob: map[structs.NamespacedID]int{}}, b.Stats())

		b.Unblock("c1", 100)
		must.Len(t, enqueued, enq.ids(), must.Sprint("nothing is unblocked after a disable"))

		b.SetEnabled(true)
		b.Block(testBlockedEval("late", 40, 0, nil))
		must.Eq(t, 1, b.Stats().TotalBlocked, must.Sprint("unblock indexes are forgotten"))
	})
}

// TestBlockedEvals_ReblockWithBroker follows an eval a worker still holds
// when it is reblocked and then unblocked: the broker must deliver it again
// once the worker acks.
func TestBlockedEvals_ReblockWithBroker(t *testing.T) {
	cases := []struct {
		name string
		// fsmBlocks is true when the FSM blocks the written eval before
		// the worker's Reblock arrives, as it does when it applies the
		// update.
		fsmBlocks bool
	}{
		{"reblock only", false},
		{"fsm blocks first", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			broker := testBroker(t)
			b := New(broker, nil)
			b.SetEnabled(true)

			eval := testEval("job", 10)
			broker.Enqueue(eval)
			got, token := dequeueNow(t, broker, structs.JobTypeService)

			reblocked := got.Copy()
			reblocked.Status = structs.EvalStatusBlocked
			reblocked.SnapshotIndex = 15
			reblocked.ClassEligibility = map[string]bool{"c1": true}
			if tc.fsmBlocks {
				b.Block(reblocked)
			}
			must.NoError(t, b.Reblock(reblocked, token))
			must.Eq(t, 1, b.Stats().TotalBlocked)
			b.Unblock("c1", 20)
			must.Eq(t, 0, broker.Stats().TotalReady, must.Sprint("the worker still holds the eval"))

			must.NoError(t, broker.Ack(eval.ID, token))
			again, _ := dequeueNow(t, broker, structs.JobTypeService)
			must.NotNil(t, again)
			must.Eq(t, eval.ID, again.ID)
			must.Eq(t, structs.EvalStatusPending, again.Status)
			must.Eq(t, uint64(15), again.SnapshotIndex)
		})
	}
}

func TestBlockedEvals_ReblockErrors(t *testing.T) {
	pending := testEval("job", 1)
	cases := []struct {
		name    string
		enabled bool
		eval    *structs.Evaluation
		token   string
		wantErr string
	}{
		{"nil eval", true, nil, "token", "reblock: evaluation is nil"},
		{"not blocked", true, pending, "token", `reblock evaluation "job-1": status is "pending", want "blocked"`},
		{"no token", true, testBlockedEval("job", 1, 1, nil), "", `reblock evaluation "job-1": missing delivery token`},
		{"disabled", false, testBlockedEval("job", 1, 1, nil), "token", `reblock evaluation "job-1": blocked evals disabled`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, _ := testBlockedEvals(t)
			b.SetEnabled(tc.enabled)
			must.EqError(t, b.Reblock(tc.eval, tc.token), tc.wantErr)
			must.Eq(t, 0, b.Stats().TotalBlocked)
		})
	}
}

func TestBlockedEvals_UnblockIntoBroker(t *testing.T) {
	broker := testBroker(t)
	b := New(broker, nil)
	b.SetEnabled(true)

	b.Block(testBlockedEval("job", 10, 10, map[string]bool{"c1": true}))
	b.Unblock("c1", 20)
	got, _ := dequeueNow(t, broker, structs.JobTypeService)
	must.NotNil(t, got)
	must.Eq(t, "job-10", got.ID)
	must.Eq(t, structs.EvalStatusPending, got.Status)
}
