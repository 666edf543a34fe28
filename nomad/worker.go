package nomad

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/hashicorp/raft"
	"github.com/nomadq/nomadq/scheduler"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// workerSchedulers are the eval types a worker takes from the broker
// unless the operator narrowed them (/v1/agent/schedulers/config).
var workerSchedulers = []string{
	structs.JobTypeService, structs.JobTypeBatch, structs.JobTypeSystem, structs.JobTypeSysBatch, structs.JobTypeCore,
}

// worker takes evals from the leader's broker, runs the matching scheduler
// on a state snapshot, and submits the plans to the plan queue. Workers run
// on the leader, next to the broker and the plan applier.
type worker struct {
	srv    *Server
	logger hclog.Logger

	// id, schedulers and started identify the worker in
	// /v1/agent/schedulers; workload says what it is doing now.
	id         string
	schedulers []string
	started    time.Time
	workload   atomic.Value // string

	// The eval being processed, its broker token, and the snapshot the
	// scheduler works on.
	eval  *structs.Evaluation
	token string
	snap  *state.StateSnapshot

	// ctx is the context of run: the scheduler's calls back into the
	// worker (SubmitPlan) end with it.
	ctx context.Context

	// statusWrites are the Raft applies of the eval's final status
	// (UpdateEval) still in flight when the scheduler returns. The
	// worker hands them to its finisher, which acks the eval once they
	// are applied, and goes on to the next eval meanwhile.
	statusWrites []raft.ApplyFuture
}

// finishing is an eval whose scheduler has returned, waiting for its
// status writes before it is acked (or nacked).
type finishing struct {
	eval   *structs.Evaluation
	token  string
	writes []raft.ApplyFuture
	err    error
}

func (s *Server) newWorker(schedulers []string) *worker {
	id := structs.GenerateUUID()
	w := &worker{srv: s, logger: s.logger.Named("worker").With("worker_id", id), id: id,
		schedulers: schedulers, started: time.Now()}
	w.setWorkload(WorkloadStarting)
	return w
}

func (w *worker) setWorkload(status string) { w.workload.Store(status) }

// Workload is what the worker is doing, in Nomad's words.
func (w *worker) Workload() string { return w.workload.Load().(string) }

func (w *worker) run(ctx context.Context) {
	w.ctx = ctx
	// The finisher takes one eval at a time: while it waits for that
	// eval's status write, the worker schedules the next one. The
	// unbuffered hand-off keeps at most one eval finishing per worker.
	finish := make(chan finishing)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for f := range finish {
			w.finish(f)
		}
	}()
	defer func() {
		close(finish)
		<-finished
		w.setWorkload(WorkloadStopped)
	}()
	for ctx.Err() == nil {
		dequeueStart := time.Now()
		w.setWorkload(WorkloadWaitingToDequeue)
		// Blocks until an eval is ready or ctx ends (leadership lost, the
		// pool reconfigured): no wake-up every half second while idle,
		// and a stop that waits for nothing.
		eval, token, err := w.srv.evalBroker.DequeueContext(ctx, w.schedulers)
		if eval != nil {
			w.srv.metrics().MeasureSince([]string{"nomad", "worker", "dequeue_eval"}, dequeueStart)
		}
		if err != nil {
			if ctx.Err() == nil {
				w.logger.Debug("dequeue failed", "error", err)
				select {
				case <-ctx.Done():
				case <-time.After(100 * time.Millisecond):
				}
			}
			continue
		}
		if eval == nil {
			continue
		}
		w.eval, w.token = eval, token
		w.setWorkload(WorkloadScheduling)
		err = w.process(ctx, eval)
		finish <- finishing{eval: eval, token: token, writes: w.statusWrites, err: err}
		w.eval, w.token, w.statusWrites = nil, "", nil
	}
}

// finish waits for an eval's status writes, then acks it, or nacks it
// when its scheduler or one of the writes failed so that the broker
// hands it out again.
func (w *worker) finish(f finishing) {
	err := f.err
	for _, future := range f.writes {
		if werr := raftResult(future); werr != nil && err == nil {
			err = fmt.Errorf("write eval status: %w", werr)
		}
	}
	if err != nil {
		w.logger.Error("eval failed; nacking", "eval_id", f.eval.ID, "job_id", f.eval.JobID, "error", err)
		if err := w.srv.evalBroker.Nack(f.eval.ID, f.token); err != nil {
			w.logger.Debug("nack", "eval_id", f.eval.ID, "error", err)
		}
		return
	}
	if err := w.srv.evalBroker.Ack(f.eval.ID, f.token); err != nil {
		w.logger.Debug("ack", "eval_id", f.eval.ID, "error", err)
	}
}

func (w *worker) process(ctx context.Context, eval *structs.Evaluation) error {
	// The eval may have been written at an index this server has not
	// applied yet (a follower's write forwarded just now).
	snap, err := w.snapshotAtLeast(ctx, eval.ModifyIndex)
	if err != nil {
		return err
	}
	w.snap = snap
	defer func() { w.snap = nil }()
	var sched scheduler.Scheduler
	if eval.Type == structs.JobTypeCore {
		core := newCoreScheduler(w.srv, snap)
		defer func() {
			if core.releaseMemory {
				// The snapshot taken before the collection is the last
				// thing holding what it deleted.
				w.snap, core.snap = nil, nil
				if w.srv.config.DevMode {
					// So is a dev server's in-memory Raft log: the
					// collection's own entries and those of the jobs
					// it deleted. Compact it now, while the state to
					// snapshot is at its smallest.
					if err := w.srv.raft.Snapshot().Error(); err != nil && !errors.Is(err, raft.ErrNothingNewToSnapshot) {
						w.logger.Debug("snapshot after forced gc", "error", err)
					}
				}
				debug.FreeOSMemory()
			}
		}()
		sched = core
	} else {
		sched, err = scheduler.NewScheduler(eval.Type, scheduler.Config{Logger: w.logger, Now: time.Now, Rand: scheduler.EvalRand(eval.ID)}, &snapshotState{snap: snap}, w)
		if err != nil {
			return err
		}
	}
	defer w.srv.metrics().MeasureSince([]string{"nomad", "worker", "invoke_scheduler", eval.Type}, time.Now())
	return sched.Process(eval)
}

// snapshotAtLeast waits (watching the index table) until the state has
// applied index, then returns a snapshot.
func (w *worker) snapshotAtLeast(ctx context.Context, index uint64) (*state.StateSnapshot, error) {
	ctx, cancel := context.WithTimeout(ctx, w.srv.config.RaftTimeout)
	defer cancel()
	for {
		st := w.srv.State()
		ws := memdb.NewWatchSet()
		latest, err := st.LatestIndexWatch(ws)
		if err != nil {
			return nil, err
		}
		if latest >= index {
			return st.Snapshot()
		}
		if err := ws.WatchCtx(ctx); err != nil {
			return nil, fmt.Errorf("state did not reach index %d (at %d): %w", index, latest, err)
		}
	}
}

// SubmitPlan sends a plan to the leader's plan queue and waits for the
// applier's answer. On a partial commit it returns a state refreshed to
// the commit so the scheduler can retry.
func (w *worker) SubmitPlan(plan *structs.Plan) (*structs.PlanResult, scheduler.State, error) {
	plan.EvalToken = w.token
	w.setWorkload(WorkloadSubmitting)
	defer w.setWorkload(WorkloadScheduling)
	// Time spent waiting for the applier is not the worker being stuck:
	// keep the broker from redelivering the eval meanwhile.
	if err := w.srv.evalBroker.PauseNackTimeout(plan.EvalID, w.token); err == nil {
		defer func() { _ = w.srv.evalBroker.ResumeNackTimeout(plan.EvalID, w.token) }()
	}
	if w.snap != nil {
		w.srv.keyring.Presign(w.snap, plan)
	}
	future, err := w.srv.planQueue.Enqueue(plan)
	if err != nil {
		return nil, nil, err
	}
	ctx := w.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	result, err := future.Wait(ctx)
	if err != nil {
		return nil, nil, err
	}
	if commit := future.Commit(); commit != nil {
		// Answered before its entry was applied: the eval is acked
		// only once it is, like a status write.
		w.statusWrites = append(w.statusWrites, commit)
	}
	if result.RefreshIndex == 0 {
		return result, nil, nil
	}
	snap, err := w.snapshotAtLeast(ctx, result.RefreshIndex)
	if err != nil {
		return result, nil, err
	}
	w.snap = snap
	return result, &snapshotState{snap: snap}, nil
}

// UpdateEval writes the scheduler's verdict on the eval it processes. It
// returns once the write is on its way through Raft: the worker acks the
// eval only after the write is applied, but schedules its next eval
// meanwhile.
func (w *worker) UpdateEval(eval *structs.Evaluation) error {
	if err := w.checkToken(); err != nil {
		return err
	}
	if w.eval == nil || eval.ID != w.eval.ID {
		return w.writeEvals(eval)
	}
	eval.ModifyTime = time.Now().UnixNano()
	future, err := w.srv.raftApplyAsync(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}, EvalToken: w.token})
	if err != nil {
		return err
	}
	w.statusWrites = append(w.statusWrites, future)
	return nil
}

// CreateEval writes a follow-up eval (blocked, delayed reschedule, ...).
func (w *worker) CreateEval(eval *structs.Evaluation) error {
	if err := w.checkToken(); err != nil {
		return err
	}
	now := time.Now().UnixNano()
	if eval.CreateTime == 0 {
		eval.CreateTime = now
	}
	eval.ModifyTime = now
	return w.writeEvals(eval)
}

// ReblockEval puts a blocked eval that still cannot place back into the
// blocked set.
func (w *worker) ReblockEval(eval *structs.Evaluation) error {
	if err := w.checkToken(); err != nil {
		return err
	}
	if err := w.writeEvals(eval); err != nil {
		return err
	}
	return w.srv.blockedEvals.Reblock(eval, w.token)
}

func (w *worker) writeEvals(evals ...*structs.Evaluation) error {
	for _, e := range evals {
		e.ModifyTime = time.Now().UnixNano()
	}
	_, _, err := w.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: evals, EvalToken: w.token})
	return err
}

// checkToken fails when the broker no longer considers this worker the
// owner of its eval (it timed out and was handed to another worker).
func (w *worker) checkToken() error {
	if w.eval == nil {
		return nil
	}
	token, ok := w.srv.evalBroker.Outstanding(w.eval.ID)
	if !ok || token != w.token {
		return errors.New("evaluation token does not match: the eval was redelivered")
	}
	return nil
}
