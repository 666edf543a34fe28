package evalbroker

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/structs"
)

// testEval returns a pending service eval (mock.Eval).
func testEval(jobID string, createIndex uint64) *structs.Evaluation {
	return mock.Eval(jobID, createIndex)
}

// advance moves the fake clock of the synctest bubble by d and lets every
// timer due by then run to completion.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// testBroker returns an enabled broker with Nomad's default settings
// except for the given nack delays.
func testBroker(t *testing.T, initialDelay, subsequentDelay time.Duration) *Broker {
	t.Helper()
	b, err := New(DefaultNackTimeout, initialDelay, subsequentDelay, DefaultDeliveryLimit)
	must.NoError(t, err)
	b.SetEnabled(true)
	return b
}

// dequeueNow dequeues without waiting for an eval to arrive.
func dequeueNow(t *testing.T, b *Broker, schedulers ...string) (*structs.Evaluation, string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.dequeueLocked(schedulers)
}

// outstandingEval enqueues and dequeues a service eval for job "job".
func outstandingEval(t *testing.T, b *Broker) (*structs.Evaluation, string) {
	t.Helper()
	b.Enqueue(testEval("job", 1))
	eval, token := dequeueNow(t, b, structs.JobTypeService)
	must.NotNil(t, eval)
	return eval, token
}

func TestNewEvalBroker_InvalidSettings(t *testing.T) {
	cases := []struct {
		name                         string
		nackTimeout, initial, subseq time.Duration
		limit                        int
		wantErr                      string
	}{
		{"zero nack timeout", 0, time.Second, time.Second, 3, "nack timeout must be positive, got 0s"},
		{"negative delay", time.Minute, -time.Second, time.Second, 3, "nack delays must not be negative, got -1s and 1s"},
		{"zero delivery limit", time.Minute, time.Second, time.Second, 0, "delivery limit must be at least 1, got 0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := New(tc.nackTimeout, tc.initial, tc.subseq, tc.limit)
			must.Nil(t, b)
			must.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestEvalBroker_DequeueOrder(t *testing.T) {
	type ev struct {
		id          string
		typ         string
		priority    int
		createIndex uint64
	}
	cases := []struct {
		name       string
		evals      []ev
		schedulers []string
		want       []string
	}{
		{
			name: "priority then create index",
			evals: []ev{
				{"low-old", "service", 10, 1},
				{"high-new", "service", 90, 4},
				{"mid-new", "service", 50, 3},
				{"mid-old", "service", 50, 2},
			},
			schedulers: []string{"service"},
			want:       []string{"high-new", "mid-old", "mid-new", "low-old"},
		},
		{
			name: "across scheduler types",
			evals: []ev{
				{"batch-50", "batch", 50, 1},
				{"service-50", "service", 50, 2},
				{"batch-70", "batch", 70, 5},
				{"system-99", "system", 99, 3},
			},
			schedulers: []string{"service", "batch"},
			want:       []string{"batch-70", "batch-50", "service-50"},
		},
		{
			name: "core evals first by priority",
			evals: []ev{
				{"service", "service", 100, 1},
				{"gc", "_core", structs.CoreJobPriority, 2},
			},
			schedulers: []string{"service", "_core"},
			want:       []string{"gc", "service"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testBroker(t, 0, 0)
			for _, e := range tc.evals {
				eval := testEval(e.id, e.createIndex)
				eval.ID, eval.Type, eval.Priority = e.id, e.typ, e.priority
				b.Enqueue(eval)
			}
			var got []string
			for {
				eval, token, err := b.Dequeue(tc.schedulers, time.Nanosecond)
				must.NoError(t, err)
				if eval == nil {
					break
				}
				got = append(got, eval.ID)
				must.NoError(t, b.Ack(eval.ID, token))
			}
			must.Eq(t, tc.want, got)
		})
	}
}

func TestEvalBroker_EnqueueIgnored(t *testing.T) {
	cases := []struct {
		name    string
		enabled bool
		mutate  func(*structs.Evaluation)
	}{
		{"broker disabled", false, func(*structs.Evaluation) {}},
		{"eval blocked", true, func(e *structs.Evaluation) { e.Status = structs.EvalStatusBlocked }},
		{"eval complete", true, func(e *structs.Evaluation) { e.Status = structs.EvalStatusComplete }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testBroker(t, 0, 0)
			b.SetEnabled(tc.enabled)
			eval := testEval("job", 1)
			tc.mutate(eval)
			b.Enqueue(eval)
			must.Eq(t, 0, b.Stats().TotalReady)
		})
	}

	t.Run("duplicate ID while tracked", func(t *testing.T) {
		b := testBroker(t, 0, 0)
		eval := testEval("job", 1)
		b.Enqueue(eval)
		b.Enqueue(eval)
		must.Eq(t, 1, b.Stats().TotalReady)

		_, token := dequeueNow(t, b, structs.JobTypeService)
		b.Enqueue(eval)
		s := b.Stats()
		must.Eq(t, 0, s.TotalReady)
		must.Eq(t, 1, s.TotalUnacked)

		must.NoError(t, b.Ack(eval.ID, token))
		b.Enqueue(eval)
		must.Eq(t, 1, b.Stats().TotalReady, must.Sprint("an acked eval is no longer tracked"))
	})
}

func TestEvalBroker_OnePerJob(t *testing.T) {
	cases := []struct {
		name          string
		waiting       []*structs.Evaluation
		wantNext      string
		wantCancelled []string
	}{
		{
			name:          "newest waiting eval runs next",
			waiting:       []*structs.Evaluation{testEval("job", 2), testEval("job", 3), testEval("job", 4)},
			wantNext:      "job-4",
			wantCancelled: []string{"job-2", "job-3"},
		},
		{
			name: "higher priority beats newer",
			waiting: func() []*structs.Evaluation {
				urgent := testEval("job", 2)
				urgent.Priority = 90
				return []*structs.Evaluation{urgent, testEval("job", 3)}
			}(),
			wantNext:      "job-2",
			wantCancelled: []string{"job-3"},
		},
		{
			name:     "single waiting eval is not cancelled",
			waiting:  []*structs.Evaluation{testEval("job", 2)},
			wantNext: "job-2",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := testBroker(t, 0, 0)
			first := testEval("job", 1)
			b.Enqueue(first)
			for _, e := range tc.waiting {
				b.Enqueue(e)
			}
			other := testEval("other", 5)
			b.Enqueue(other)

			s := b.Stats()
			must.Eq(t, 2, s.TotalReady, must.Sprint("one eval of each job is ready"))
			must.Eq(t, len(tc.waiting), s.TotalBlocked)

			eval, token := dequeueNow(t, b, structs.JobTypeService)
			must.Eq(t, first.ID, eval.ID)
			eval2, token2 := dequeueNow(t, b, structs.JobTypeService)
			must.Eq(t, other.ID, eval2.ID)
			must.NoError(t, b.Ack(other.ID, token2))
			got, _ := dequeueNow(t, b, structs.JobTypeService)
			must.Nil(t, got, must.Sprint("the job's next eval waits while the first is unacked"))

			must.NoError(t, b.Ack(first.ID, token))
			s = b.Stats()
			must.Eq(t, 1, s.TotalReady)
			must.Eq(t, 0, s.TotalBlocked)
			must.Eq(t, len(tc.wantCancelled), s.TotalCancelable)

			next, _ := dequeueNow(t, b, structs.JobTypeService)
			must.Eq(t, tc.wantNext, next.ID)

			var cancelled []string
			for _, e := range b.Cancelable(0) {
				cancelled = append(cancelled, e.ID)
			}
			must.SliceContainsAll(t, tc.wantCancelled, cancelled)
			must.Eq(t, 0, b.Stats().TotalCancelable)
		})
	}
}

func TestEvalBroker_CancelableBatches(t *testing.T) {
	b := testBroker(t, 0, 0)
	for i := uint64(1); i <= 6; i++ {
		b.Enqueue(testEval("job", i))
	}
	eval, token := dequeueNow(t, b, structs.JobTypeService)
	must.NoError(t, b.Ack(eval.ID, token))
	must.Eq(t, 4, b.Stats().TotalCancelable)

	must.Len(t, 3, b.Cancelable(3))
	must.Len(t, 1, b.Cancelable(3))
	must.Len(t, 0, b.Cancelable(3))
}

func TestEvalBroker_NackRedelivery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const initial, subsequent = 5 * time.Second, 20 * time.Second
		b := testBroker(t, initial, subsequent)
		eval := testEval("job", 1)
		b.Enqueue(eval)

		// Delivery n is nacked; the next one is due after these delays.
		for n, delay := range []time.Duration{initial, subsequent} {
			got, token := dequeueNow(t, b, structs.JobTypeService)
			must.Eq(t, eval.ID, got.ID, must.Sprintf("delivery %d", n+1))
			must.NoError(t, b.Nack(eval.ID, token))
			must.Eq(t, 1, b.Stats().TotalWaiting)

			advance(delay - time.Nanosecond)
			must.Eq(t, 0, b.Stats().TotalReady, must.Sprintf("redelivered before %s", delay))

			advance(time.Nanosecond)
			s := b.Stats()
			must.Eq(t, 1, s.TotalReady, must.Sprintf("not redelivered after %s", delay))
			must.Eq(t, 0, s.TotalWaiting)
		}

		// The third delivery is the last one.
		_, token := dequeueNow(t, b, structs.JobTypeService)
		must.NoError(t, b.Nack(eval.ID, token))
		s := b.Stats()
		must.Eq(t, 0, s.TotalWaiting)
		must.Eq(t, 1, s.ByScheduler[FailedQueue].Ready)

		got, _, err := b.Dequeue([]string{structs.JobTypeService}, time.Second)
		must.NoError(t, err)
		must.Nil(t, got, must.Sprint("a failed eval is not handed to schedulers"))

		failed, token, err := b.Dequeue([]string{FailedQueue}, time.Second)
		must.NoError(t, err)
		must.Eq(t, eval.ID, failed.ID)
		must.NoError(t, b.Ack(failed.ID, token))
		must.Eq(t, Stats{ByScheduler: map[string]*SchedulerStats{}}, b.Stats())
	})
}

func TestEvalBroker_FailedEvalHoldsJob(t *testing.T) {
	b, err := New(time.Minute, 0, 0, 1)
	must.NoError(t, err)
	b.SetEnabled(true)
	eval, token := outstandingEval(t, b)
	must.NoError(t, b.Nack(eval.ID, token))

	later := testEval("job", 2)
	b.Enqueue(later)
	got, _ := dequeueNow(t, b, structs.JobTypeService)
	must.Nil(t, got, must.Sprint("the job waits until the leader handles the failed eval"))

	failed, token := dequeueNow(t, b, FailedQueue)
	must.NoError(t, b.Ack(failed.ID, token))
	got, _ = dequeueNow(t, b, structs.JobTypeService)
	must.Eq(t, later.ID, got.ID)
}

func TestEvalBroker_NackTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		eval, token := outstandingEval(t, b)

		advance(DefaultNackTimeout - time.Nanosecond)
		got, ok := b.Outstanding(eval.ID)
		must.True(t, ok)
		must.Eq(t, token, got)

		advance(time.Nanosecond)
		_, ok = b.Outstanding(eval.ID)
		must.False(t, ok)
		must.Eq(t, 1, b.Stats().TotalReady, must.Sprint("nacked with no delay"))
		must.ErrorIs(t, b.Ack(eval.ID, token), ErrNotOutstanding)
	})
}

func TestEvalBroker_OutstandingReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		eval, token := outstandingEval(t, b)

		time.Sleep(DefaultNackTimeout / 2)
		must.NoError(t, b.OutstandingReset(eval.ID, token))

		advance(DefaultNackTimeout - time.Nanosecond)
		_, ok := b.Outstanding(eval.ID)
		must.True(t, ok, must.Sprint("the reset restarts the full timeout"))

		advance(time.Nanosecond)
		_, ok = b.Outstanding(eval.ID)
		must.False(t, ok)
		must.ErrorIs(t, b.OutstandingReset(eval.ID, token), ErrNotOutstanding)
	})
}

func TestEvalBroker_PauseNackTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		eval, token := outstandingEval(t, b)

		must.NoError(t, b.PauseNackTimeout(eval.ID, token))
		advance(3 * DefaultNackTimeout)
		_, ok := b.Outstanding(eval.ID)
		must.True(t, ok, must.Sprint("a paused eval is not nacked"))
		must.NoError(t, b.OutstandingReset(eval.ID, token))

		must.NoError(t, b.ResumeNackTimeout(eval.ID, token))
		advance(DefaultNackTimeout)
		_, ok = b.Outstanding(eval.ID)
		must.False(t, ok)
	})
}

func TestEvalBroker_AckAfterNackTimeoutFired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, time.Minute, time.Minute)
		eval, token := outstandingEval(t, b)

		// Hold the lock across the expiry so the timer fires while Ack
		// may still race its nack for the lock. Whichever wins, the ack
		// is refused: the timer fired first.
		b.mu.Lock()
		time.Sleep(DefaultNackTimeout)
		b.mu.Unlock()
		err := b.Ack(eval.ID, token)
		if !errors.Is(err, ErrNackTimeoutReached) {
			must.ErrorIs(t, err, ErrNotOutstanding)
		}
		synctest.Wait()
		_, ok := b.Outstanding(eval.ID)
		must.False(t, ok)
		must.Eq(t, 1, b.Stats().TotalWaiting, must.Sprint("the eval is redelivered, not acked"))
	})
}

func TestEvalBroker_Delays(t *testing.T) {
	cases := []struct {
		name string
		// mutate sets the delay relative to now.
		mutate   func(e *structs.Evaluation, now time.Time)
		wantWait time.Duration
	}{
		{"wait", func(e *structs.Evaluation, _ time.Time) { e.Wait = 30 * time.Second }, 30 * time.Second},
		{"wait until", func(e *structs.Evaluation, now time.Time) { e.WaitUntil = now.Add(45 * time.Second) }, 45 * time.Second},
		{"wait anchored to create time", func(e *structs.Evaluation, now time.Time) {
			e.CreateTime = now.Add(-20 * time.Second).UnixNano()
			e.Wait = 30 * time.Second
		}, 10 * time.Second},
		{"later of wait and wait until", func(e *structs.Evaluation, now time.Time) {
			e.Wait = 10 * time.Second
			e.WaitUntil = now.Add(15 * time.Second)
		}, 15 * time.Second},
		{"wait until passed", func(e *structs.Evaluation, now time.Time) { e.WaitUntil = now.Add(-time.Second) }, 0},
		{"wait elapsed since creation", func(e *structs.Evaluation, now time.Time) {
			e.CreateTime = now.Add(-time.Hour).UnixNano()
			e.Wait = time.Minute
		}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				b := testBroker(t, 0, 0)
				eval := testEval("job", 1)
				tc.mutate(eval, time.Now())
				b.Enqueue(eval)
				if tc.wantWait == 0 {
					must.Eq(t, 1, b.Stats().TotalReady)
					return
				}
				must.Eq(t, 1, b.Stats().TotalWaiting)

				b.Enqueue(eval)
				must.Eq(t, 1, b.Stats().TotalWaiting, must.Sprint("a delayed eval is tracked"))

				advance(tc.wantWait - time.Nanosecond)
				must.Eq(t, 0, b.Stats().TotalReady)

				advance(time.Nanosecond)
				s := b.Stats()
				must.Eq(t, 1, s.TotalReady)
				must.Eq(t, 0, s.TotalWaiting)
			})
		})
	}
}

func TestEvalBroker_DelaysReleaseInDueOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		for i, wait := range []time.Duration{30 * time.Second, 10 * time.Second, 20 * time.Second} {
			eval := testEval(fmt.Sprintf("job%d", i), uint64(i+1))
			eval.Wait = wait
			b.Enqueue(eval)
		}
		start := time.Now()
		var got []time.Duration
		for range 3 {
			eval, token, err := b.Dequeue([]string{structs.JobTypeService}, 0)
			must.NoError(t, err)
			got = append(got, time.Since(start))
			must.NoError(t, b.Ack(eval.ID, token))
		}
		must.Eq(t, []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second}, got)
	})
}

func TestEvalBroker_DequeueTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		start := time.Now()
		eval, token, err := b.Dequeue([]string{structs.JobTypeService}, 5*time.Second)
		must.NoError(t, err)
		must.Nil(t, eval)
		must.Eq(t, "", token)
		must.Eq(t, 5*time.Second, time.Since(start))

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		eval, _, err = b.DequeueContext(ctx, []string{structs.JobTypeService})
		must.Nil(t, eval)
		must.ErrorIs(t, err, context.DeadlineExceeded)
	})
}

func TestEvalBroker_DequeueWaitsForEnqueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		type result struct {
			eval *structs.Evaluation
			err  error
		}
		results := make(map[string]chan result)
		for _, sched := range []string{structs.JobTypeService, structs.JobTypeBatch} {
			ch := make(chan result, 1)
			results[sched] = ch
			go func() {
				eval, _, err := b.Dequeue([]string{sched}, 0)
				ch <- result{eval, err}
			}()
		}
		synctest.Wait()

		batch := testEval("batch-job", 1)
		batch.Type = structs.JobTypeBatch
		b.Enqueue(batch)
		synctest.Wait()
		select {
		case r := <-results[structs.JobTypeService]:
			t.Fatalf("service dequeuer woke for a batch eval: %v", r)
		default:
		}
		r := <-results[structs.JobTypeBatch]
		must.NoError(t, r.err)
		must.Eq(t, batch.ID, r.eval.ID)

		service := testEval("service-job", 2)
		b.Enqueue(service)
		r = <-results[structs.JobTypeService]
		must.NoError(t, r.err)
		must.Eq(t, service.ID, r.eval.ID)
	})
}

func TestEvalBroker_DequeueWaitersServedInOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		got := make([]chan string, 3)
		for i := range got {
			got[i] = make(chan string, 1)
			go func() {
				eval, _, err := b.Dequeue([]string{structs.JobTypeService}, 0)
				must.NoError(t, err)
				got[i] <- eval.ID
			}()
			synctest.Wait()
		}
		for i := range got {
			b.Enqueue(testEval(fmt.Sprintf("job%d", i), uint64(i+1)))
			synctest.Wait()
			must.Eq(t, fmt.Sprintf("job%d-%d", i, i+1), <-got[i], must.Sprintf("waiter %d", i))
		}
	})
}

func TestEvalBroker_DequeueCanceledWaiterPassesWakeOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		ctx, cancel := context.WithCancel(context.Background())
		first := make(chan error, 1)
		go func() {
			_, _, err := b.DequeueContext(ctx, []string{structs.JobTypeService})
			first <- err
		}()
		synctest.Wait()
		second := make(chan string, 1)
		go func() {
			eval, _, err := b.Dequeue([]string{structs.JobTypeService}, 0)
			must.NoError(t, err)
			second <- eval.ID
		}()
		synctest.Wait()

		// The first waiter is canceled and then signaled before it can
		// take the lock again.
		eval := testEval("job", 1)
		b.mu.Lock()
		cancel()
		b.processEnqueueLocked(eval, "")
		b.mu.Unlock()

		must.ErrorIs(t, <-first, context.Canceled)
		must.Eq(t, eval.ID, <-second)
	})
}

func TestEvalBroker_Disable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, time.Minute, time.Minute)

		unacked := testEval("unacked", 1)
		b.Enqueue(unacked)
		_, token := dequeueNow(t, b, structs.JobTypeService)
		b.Enqueue(testEval("unacked", 2)) // waits behind its job
		b.Enqueue(testEval("ready", 3))
		delayed := testEval("delayed", 4)
		delayed.Wait = time.Hour
		b.Enqueue(delayed)

		waiting := make(chan error, 1)
		go func() {
			_, _, err := b.Dequeue([]string{structs.JobTypeBatch}, 0)
			waiting <- err
		}()
		synctest.Wait()

		b.SetEnabled(false)
		must.False(t, b.Enabled())
		must.ErrorIs(t, <-waiting, ErrBrokerDisabled)
		must.Eq(t, Stats{ByScheduler: map[string]*SchedulerStats{}}, b.Stats())
		must.ErrorIs(t, b.Ack(unacked.ID, token), ErrNotOutstanding)
		_, _, err := b.Dequeue([]string{structs.JobTypeService}, 0)
		must.ErrorIs(t, err, ErrBrokerDisabled)

		// Timers of the old term do nothing to the next one.
		b.SetEnabled(true)
		advance(2 * time.Hour)
		must.Eq(t, Stats{ByScheduler: map[string]*SchedulerStats{}}, b.Stats())
		b.Enqueue(unacked)
		must.Eq(t, 1, b.Stats().TotalReady, must.Sprint("enabled again with nothing tracked"))
	})
}

func TestEvalBroker_TokenErrors(t *testing.T) {
	b := testBroker(t, 0, 0)
	eval, token := outstandingEval(t, b)

	ops := map[string]func(id, token string) error{
		"ack":    b.Ack,
		"nack":   b.Nack,
		"reset":  b.OutstandingReset,
		"pause":  b.PauseNackTimeout,
		"resume": b.ResumeNackTimeout,
	}
	for name, op := range ops {
		t.Run(name, func(t *testing.T) {
			err := op(eval.ID, "wrong-token")
			must.ErrorIs(t, err, ErrTokenMismatch)
			must.EqError(t, err, fmt.Sprintf("%s evaluation %q: evaluation token does not match", name, eval.ID))

			err = op("unknown", token)
			must.ErrorIs(t, err, ErrNotOutstanding)
			must.StrContains(t, err.Error(), `"unknown"`)
		})
	}
	got, ok := b.Outstanding(eval.ID)
	must.True(t, ok, must.Sprint("failed calls leave the eval outstanding"))
	must.Eq(t, token, got)
}

func TestEvalBroker_TokensAreUnique(t *testing.T) {
	b := testBroker(t, 0, 0)
	seen := make(map[string]bool)
	for i := range uint64(100) {
		eval := testEval(fmt.Sprintf("job%d", i), i+1)
		b.Enqueue(eval)
		_, token := dequeueNow(t, b, structs.JobTypeService)
		must.RegexMatch(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`), token)
		must.False(t, seen[token], must.Sprintf("token %s handed out twice", token))
		seen[token] = true
	}
}

func TestEvalBroker_EnqueueAll(t *testing.T) {
	t.Run("update under the outstanding token waits for the ack", func(t *testing.T) {
		b := testBroker(t, 0, 0)
		eval, token := outstandingEval(t, b)

		update := eval.Copy()
		update.ModifyIndex = 7
		b.EnqueueAll(map[*structs.Evaluation]string{update: token})
		must.Eq(t, 0, b.Stats().TotalReady)

		must.NoError(t, b.Ack(eval.ID, token))
		got, _ := dequeueNow(t, b, structs.JobTypeService)
		must.Eq(t, uint64(7), got.ModifyIndex)
	})

	t.Run("update is dropped when the delivery is nacked", func(t *testing.T) {
		b := testBroker(t, 0, 0)
		eval, token := outstandingEval(t, b)
		update := eval.Copy()
		update.ModifyIndex = 7
		b.EnqueueAll(map[*structs.Evaluation]string{update: token})

		must.NoError(t, b.Nack(eval.ID, token))
		got, token := dequeueNow(t, b, structs.JobTypeService)
		must.Eq(t, uint64(1), got.ModifyIndex)
		must.NoError(t, b.Ack(got.ID, token))
		must.Eq(t, 0, b.Stats().TotalReady)
	})

	t.Run("restored evals with and without tokens", func(t *testing.T) {
		b := testBroker(t, 0, 0)
		b.EnqueueAll(map[*structs.Evaluation]string{
			testEval("a", 1): "",
			testEval("b", 2): "token-from-an-old-leader",
		})
		must.Eq(t, 2, b.Stats().TotalReady)
	})
}

func TestEvalBroker_Stats(t *testing.T) {
	b := testBroker(t, time.Minute, time.Minute)
	for i, typ := range []string{"service", "service", "batch", "batch", "system"} {
		eval := testEval(fmt.Sprintf("job%d", i), uint64(i+1))
		eval.Type = typ
		b.Enqueue(eval)
	}
	b.Enqueue(testEval("job0", 10))
	nacked := testEval("nacked", 11)
	nacked.Type = "system"
	nacked.Priority = 99
	b.Enqueue(nacked)
	_, token := dequeueNow(t, b, "system")
	must.NoError(t, b.Nack(nacked.ID, token))
	dequeueNow(t, b, "batch")

	must.Eq(t, Stats{
		TotalReady:   4,
		TotalUnacked: 1,
		TotalBlocked: 1,
		TotalWaiting: 1,
		ByScheduler: map[string]*SchedulerStats{
			"service": {Ready: 2},
			"batch":   {Ready: 1, Unacked: 1},
			"system":  {Ready: 1},
		},
	}, b.Stats())
}

func TestEvalBroker_ConcurrentWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := testBroker(t, 0, 0)
		const jobs, evalsPerJob, workers = 50, 4, 8

		var mu sync.Mutex
		processed := make(map[string]int)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for {
					eval, token, err := b.Dequeue([]string{structs.JobTypeService, structs.JobTypeBatch}, 0)
					if errors.Is(err, ErrBrokerDisabled) {
						return
					}
					must.NoError(t, err)
					mu.Lock()
					processed[eval.ID]++
					mu.Unlock()
					must.NoError(t, b.Ack(eval.ID, token))
				}
			})
		}
		var index uint64
		for j := range jobs {
			for range evalsPerJob {
				index++
				eval := testEval(fmt.Sprintf("job%d", j), index)
				if j%2 == 0 {
					eval.Type = structs.JobTypeBatch
				}
				b.Enqueue(eval)
			}
		}
		synctest.Wait()
		s := b.Stats()
		must.Eq(t, 0, s.TotalReady+s.TotalUnacked+s.TotalBlocked, must.Sprintf("broker did not drain: %+v", s))
		cancelled := b.Cancelable(0)
		b.SetEnabled(false)
		wg.Wait()

		must.Eq(t, jobs*evalsPerJob, len(processed)+len(cancelled), must.Sprint("every eval is processed or cancelled"))
		for id, n := range processed {
			must.Eq(t, 1, n, must.Sprintf("eval %s processed %d times", id, n))
		}
		for _, e := range cancelled {
			must.MapNotContainsKey(t, processed, e.ID)
		}
	})
}

// benchBroker returns an enabled broker and b.N evals of distinct jobs,
// and starts the benchmark's clock.
func benchBroker(b *testing.B) (*Broker, []*structs.Evaluation) {
	broker, err := New(DefaultNackTimeout, 0, 0, DefaultDeliveryLimit)
	must.NoError(b, err)
	broker.SetEnabled(true)
	evals := make([]*structs.Evaluation, b.N)
	for i := range evals {
		evals[i] = testEval(fmt.Sprintf("job%d", i), uint64(i+1))
	}
	b.ReportAllocs()
	b.ResetTimer()
	return broker, evals
}

// BenchmarkEvalBrokerEnqueueDequeueAck measures one eval going through
// the broker: enqueue, dequeue with a token and a nack timer, ack.
func BenchmarkEvalBrokerEnqueueDequeueAck(b *testing.B) {
	schedulers := []string{structs.JobTypeService, structs.JobTypeBatch}
	b.Run("serial", func(b *testing.B) {
		broker, evals := benchBroker(b)
		for i := range b.N {
			broker.Enqueue(evals[i])
			eval, token, err := broker.Dequeue(schedulers, time.Second)
			if err != nil || eval == nil {
				b.Fatalf("dequeue: %v %v", eval, err)
			}
			if err := broker.Ack(eval.ID, token); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
	})
	b.Run("8 workers", func(b *testing.B) {
		broker, evals := benchBroker(b)
		var wg sync.WaitGroup
		per := b.N / 8
		for w := range 8 {
			n := per
			if w == 7 {
				n = b.N - 7*per
			}
			wg.Go(func() {
				for range n {
					eval, token, err := broker.Dequeue(schedulers, 0)
					if err != nil {
						b.Error(err)
						return
					}
					if err := broker.Ack(eval.ID, token); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		for _, e := range evals {
			broker.Enqueue(e)
		}
		wg.Wait()
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "evals/s")
	})
}
