package planqueue

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// advance moves the fake clock of the synctest bubble by d and lets every
// timer due by then run to completion.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func testPlanQueue(t *testing.T) *Queue {
	t.Helper()
	q := New()
	q.SetEnabled(true)
	return q
}

func TestPlanQueue_Order(t *testing.T) {
	type plan struct {
		evalID   string
		priority int
	}
	cases := []struct {
		name  string
		plans []plan
		want  []string
	}{
		{
			name:  "higher priority first",
			plans: []plan{{"low", 10}, {"high", 90}, {"mid", 50}},
			want:  []string{"high", "mid", "low"},
		},
		{
			name:  "first in first out within a priority",
			plans: []plan{{"a", 50}, {"b", 50}, {"c", 50}, {"d", 50}},
			want:  []string{"a", "b", "c", "d"},
		},
		{
			name:  "mixed",
			plans: []plan{{"a", 50}, {"b", 70}, {"c", 50}, {"d", 70}, {"e", 10}},
			want:  []string{"b", "d", "a", "c", "e"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := testPlanQueue(t)
			for _, p := range tc.plans {
				_, err := q.Enqueue(&structs.Plan{EvalID: p.evalID, Priority: p.priority})
				must.NoError(t, err)
			}
			must.Eq(t, Stats{Depth: len(tc.plans)}, q.Stats())
			var got []string
			for range tc.plans {
				p, err := q.Dequeue(time.Nanosecond)
				must.NoError(t, err)
				got = append(got, p.Plan.EvalID)
			}
			must.Eq(t, tc.want, got)
			must.Eq(t, Stats{}, q.Stats())
		})
	}
}

func TestPlanQueue_Respond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := testPlanQueue(t)
		future, err := q.Enqueue(&structs.Plan{EvalID: "eval", Priority: 50})
		must.NoError(t, err)

		type answer struct {
			result *structs.PlanResult
			err    error
		}
		answered := make(chan answer, 1)
		go func() {
			result, err := future.Wait(context.Background())
			answered <- answer{result, err}
		}()
		synctest.Wait()
		select {
		case a := <-answered:
			t.Fatalf("future answered before the applier responded: %v", a)
		default:
		}

		pending, err := q.Dequeue(0)
		must.NoError(t, err)
		must.Eq(t, "eval", pending.Plan.EvalID)
		must.Eq(t, time.Now(), pending.EnqueueTime)
		result := &structs.PlanResult{AllocIndex: 42}
		pending.Respond(result, nil)
		pending.Respond(nil, errors.New("a second answer is ignored"))

		a := <-answered
		must.NoError(t, a.err)
		must.Eq(t, result, a.result)

		failing, err := q.Enqueue(&structs.Plan{EvalID: "failing"})
		must.NoError(t, err)
		pending, err = q.Dequeue(0)
		must.NoError(t, err)
		pending.Respond(nil, errors.New("node n1 is down"))
		_, err = failing.Wait(context.Background())
		must.EqError(t, err, "node n1 is down")
	})
}

func TestPlanQueue_Dequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := testPlanQueue(t)
		start := time.Now()
		p, err := q.Dequeue(5 * time.Second)
		must.NoError(t, err)
		must.Nil(t, p)
		must.Eq(t, 5*time.Second, time.Since(start))

		got := make(chan *Pending, 1)
		go func() {
			p, err := q.Dequeue(0)
			must.NoError(t, err)
			got <- p
		}()
		advance(time.Minute)
		must.Eq(t, 0, len(got), must.Sprint("Dequeue(0) waits for a plan"))
		_, err = q.Enqueue(&structs.Plan{EvalID: "eval"})
		must.NoError(t, err)
		must.Eq(t, "eval", (<-got).Plan.EvalID)
	})
}

func TestPlanQueue_Disable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := testPlanQueue(t)
		var futures []Future
		for _, id := range []string{"a", "b"} {
			f, err := q.Enqueue(&structs.Plan{EvalID: id})
			must.NoError(t, err)
			futures = append(futures, f)
		}
		taken, err := q.Dequeue(0)
		must.NoError(t, err)

		q.SetEnabled(false)
		must.False(t, q.Enabled())
		_, err = futures[1].Wait(context.Background())
		must.ErrorIs(t, err, ErrDisabled)
		must.Eq(t, Stats{}, q.Stats())

		// A plan the applier already took is answered by the applier.
		taken.Respond(&structs.PlanResult{AllocIndex: 7}, nil)
		result, err := futures[0].Wait(context.Background())
		must.NoError(t, err)
		must.Eq(t, uint64(7), result.AllocIndex)

		_, err = q.Enqueue(&structs.Plan{EvalID: "c"})
		must.ErrorIs(t, err, ErrDisabled)
		_, err = q.Dequeue(0)
		must.ErrorIs(t, err, ErrDisabled)
	})
}

func TestPlanQueue_DisableReleasesDequeue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := testPlanQueue(t)
		done := make(chan error, 1)
		go func() {
			_, err := q.Dequeue(0)
			done <- err
		}()
		synctest.Wait()
		q.SetEnabled(false)
		q.SetEnabled(true)
		must.ErrorIs(t, <-done, ErrDisabled, must.Sprint("even when enabled again before it ran"))
	})
}

func TestPlanQueue_EnqueueNil(t *testing.T) {
	q := testPlanQueue(t)
	_, err := q.Enqueue(nil)
	must.EqError(t, err, "enqueue plan: plan is nil")
}
