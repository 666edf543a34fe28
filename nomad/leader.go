package nomad

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// establishRetryInterval is how long a leader that could not establish
// its leadership, nor hand it to another server, waits before trying
// again; Nomad's leader loop waits as long.
const establishRetryInterval = 5 * time.Second

// monitorLeadership turns Raft's leadership notifications into the start
// and stop of the leader-only duties. A leader whose establishment fails
// hands leadership to another server; when it cannot (always so on a
// one-server cluster) it tries establishing again every
// establishRetryInterval until it succeeds or leadership is lost, so a
// leader is never left without its loops.
func (s *Server) monitorLeadership() {
	var retry *time.Timer
	var retryCh <-chan time.Time
	stopRetry := func() {
		if retry != nil {
			retry.Stop()
			retry, retryCh = nil, nil
		}
	}
	attempts := 0
	establish := func() {
		stopRetry()
		err := s.establishLeadership()
		if err == nil {
			if attempts > 0 {
				s.logger.Info("leadership established after failed attempts", "failed_attempts", attempts)
			}
			attempts = 0
			return
		}
		attempts++
		s.logger.Error("failed to establish leadership", "attempt", attempts, "error", err)
		terr := s.raft.LeadershipTransfer().Error()
		if terr == nil {
			attempts = 0
			return // the lost leadership arrives on leaderCh
		}
		s.logger.Error("failed to transfer leadership; will retry establishing it",
			"retry_in", establishRetryInterval, "error", terr)
		retry = time.NewTimer(establishRetryInterval)
		retryCh = retry.C
	}
	for {
		select {
		case isLeader := <-s.leaderCh:
			if isLeader {
				establish()
			} else {
				stopRetry()
				attempts = 0
				s.revokeLeadership()
			}
		case <-retryCh:
			retry, retryCh = nil, nil
			if s.IsLeader() {
				establish()
			}
		case <-s.shutdownCh:
			stopRetry()
			return
		}
	}
}

// leadershipFault, set only by tests, may fail a step of establishing
// leadership ("barrier") on a server by returning an error.
var leadershipFault atomic.Pointer[func(s *Server, step string) error]

func (s *Server) injectedLeadershipFault(step string) error {
	if f := leadershipFault.Load(); f != nil {
		return (*f)(s, step)
	}
	return nil
}

// establishLeadership rebuilds every leader-only structure from state and
// starts the leader's loops. It first waits for a Raft barrier so the
// state it restores from includes everything the old leader committed.
// The Raft writes happen without leaderLock, which only guards the
// switch of the in-memory structures: Raft I/O can take up to the Raft
// timeout, and a scheduler configuration change waits on that lock.
// On an error nothing is left enabled and the caller may try again.
func (s *Server) establishLeadership() error {
	s.leaderLock.Lock()
	if s.leaderCancel != nil {
		s.leaderLock.Unlock()
		return nil
	}
	s.restoreRaftTimeouts()
	s.leaderLock.Unlock()

	start := time.Now()
	if err := s.injectedLeadershipFault("barrier"); err != nil {
		return fmt.Errorf("leadership barrier: %w", err)
	}
	if err := s.raft.Barrier(s.config.RaftTimeout).Error(); err != nil {
		return fmt.Errorf("leadership barrier: %w", err)
	}
	if err := s.initSchedulerConfig(); err != nil {
		s.logger.Error("failed to store the default scheduler configuration", "error", err)
	}
	if err := s.initKeyring(); err != nil {
		s.logger.Error("failed to create the root keyring", "error", err)
	}

	s.leaderLock.Lock()
	select {
	case <-s.shutdownCh:
		// Shutdown closes shutdownCh before its revokeLeadership takes
		// leaderLock: loops started now might never be stopped.
		s.disableLeaderStructuresLocked()
		s.leaderLock.Unlock()
		return nil
	default:
	}
	if err := s.enableLeaderStructuresLocked(); err != nil {
		s.disableLeaderStructuresLocked()
		s.leaderLock.Unlock()
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.leaderCancel = cancel
	s.leaderDone = done
	loops := s.leaderLoops()
	go func() {
		defer close(done)
		waitAll(ctx, loops)
	}()
	s.leaderLock.Unlock()

	s.reconcileMembers()
	s.logger.Info("cluster leadership acquired", "took", time.Since(start))
	return nil
}

// enableLeaderStructuresLocked restores the leader-only in-memory
// structures from state; leaderLock is held.
func (s *Server) enableLeaderStructuresLocked() error {
	if err := s.restoreVariableLocks(); err != nil {
		s.logger.Error("failed to restore variable lock leases", "error", err)
	}
	s.planQueue.SetEnabled(true)
	// The broker starts paused when the scheduler configuration says so.
	if err := s.syncEvalBrokerPauseLocked(); err != nil {
		return fmt.Errorf("restore evaluations: %w", err)
	}
	if err := s.heartbeats.initialize(); err != nil {
		return fmt.Errorf("initialize heartbeat timers: %w", err)
	}
	return nil
}

// disableLeaderStructuresLocked drops the leader-only in-memory
// structures; leaderLock is held and no leader loop runs.
func (s *Server) disableLeaderStructuresLocked() {
	s.evalBroker.SetEnabled(false)
	s.blockedEvals.SetEnabled(false)
	s.planQueue.SetEnabled(false)
	s.heartbeats.Clear()
	s.varLocks.SetEnabled(false)
}

// revokeLeadership stops every leader loop and drops the leader-only
// structures; it returns once the loops have ended.
func (s *Server) revokeLeadership() {
	s.leaderLock.Lock()
	defer s.leaderLock.Unlock()
	if s.leaderCancel == nil {
		// Leadership was never established, but RPCs served meanwhile
		// may have armed heartbeat timers.
		s.disableLeaderStructuresLocked()
		return
	}
	s.leaderCancel()
	// Answer queued plans before waiting for the loops: the applier may
	// already have returned, and a worker waiting on a plan it queued
	// after that would otherwise keep the worker pool, and so this wait,
	// from ever ending.
	s.planQueue.SetEnabled(false)
	<-s.leaderDone
	s.leaderCancel, s.leaderDone = nil, nil
	s.disableLeaderStructuresLocked()
	s.logger.Info("cluster leadership lost")
}

// waitAll runs each loop in its own goroutine and returns when all ended.
func waitAll(ctx context.Context, loops []func(context.Context)) {
	done := make(chan struct{}, len(loops))
	for _, loop := range loops {
		go func() {
			defer func() { done <- struct{}{} }()
			loop(ctx)
		}()
	}
	for range loops {
		<-done
	}
}

// restoreEvals puts every pending eval back in the broker and every
// blocked one back in the blocked set.
func (s *Server) restoreEvals() error {
	evals, err := s.State().Evals(nil)
	if err != nil {
		return fmt.Errorf("list evals: %w", err)
	}
	for _, e := range evals {
		switch e.Status {
		case structs.EvalStatusPending:
			if e.Type == structs.JobTypeBatch && s.State().BatchQueueHoldsEval(e) {
				continue // the batch queue releases it
			}
			s.evalBroker.Enqueue(e)
		case structs.EvalStatusBlocked:
			s.blockedEvals.Block(e)
		}
	}
	return nil
}

// initSchedulerConfig writes the configured default scheduler
// configuration when the cluster has none yet, and warns when the agent's
// configured default differs from the stored one.
func (s *Server) initSchedulerConfig() error {
	_, stored, err := s.State().SchedulerConfig()
	if err != nil {
		return err
	}
	want := s.config.DefaultSchedulerConfig
	if want == nil {
		want = structs.DefaultSchedulerConfiguration()
	}
	if stored != nil {
		if stored.BatchQueue != want.BatchQueue {
			s.logger.Warn("the agent's default_scheduler_config differs from the cluster's stored scheduler configuration; "+
				"the stored one is in force: change it with `nomad operator scheduler set-config`",
				"stored_batch_queue", fmt.Sprintf("%+v", stored.BatchQueue), "configured_batch_queue", fmt.Sprintf("%+v", want.BatchQueue))
		}
		return nil
	}
	_, _, err = s.raftApply(structs.SchedulerConfigRequestType, seedSchedulerConfig(want))
	return err
}

// seedSchedulerConfig is the write of the default configuration: a
// check-and-set against "none written yet", so that an operator's
// set-config landing between the read above and this write is not
// overwritten.
func seedSchedulerConfig(want *structs.SchedulerConfiguration) *structs.SchedulerSetConfigRequest {
	req := &structs.SchedulerSetConfigRequest{Config: *want, CAS: true}
	req.Config.ModifyIndex = 0
	return req
}
