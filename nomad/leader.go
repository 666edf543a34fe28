package nomad

import (
	"context"
	"fmt"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// monitorLeadership turns Raft's leadership notifications into the start
// and stop of the leader-only duties.
func (s *Server) monitorLeadership() {
	for {
		select {
		case isLeader := <-s.leaderCh:
			if isLeader {
				s.establishLeadership()
			} else {
				s.revokeLeadership()
			}
		case <-s.shutdownCh:
			return
		}
	}
}

// establishLeadership rebuilds every leader-only structure from state and
// starts the leader's loops. It first waits for a Raft barrier so the
// state it restores from includes everything the old leader committed.
func (s *Server) establishLeadership() {
	s.leaderLock.Lock()
	defer s.leaderLock.Unlock()
	if s.leaderCancel != nil {
		return
	}
	s.restoreRaftTimeouts()
	start := time.Now()
	if err := s.raft.Barrier(s.config.RaftTimeout).Error(); err != nil {
		s.logger.Error("leadership barrier failed; stepping down", "error", err)
		_ = s.raft.LeadershipTransfer()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.leaderCancel = cancel
	s.leaderDone = done

	if err := s.initSchedulerConfig(); err != nil {
		s.logger.Error("failed to store the default scheduler configuration", "error", err)
	}
	if err := s.initKeyring(); err != nil {
		s.logger.Error("failed to create the root keyring", "error", err)
	}
	if err := s.restoreVariableLocks(); err != nil {
		s.logger.Error("failed to restore variable lock leases", "error", err)
	}

	s.planQueue.SetEnabled(true)
	// The broker starts paused when the scheduler configuration says so.
	if err := s.syncEvalBrokerPauseLocked(); err != nil {
		s.logger.Error("failed to restore evaluations", "error", err)
	}
	if err := s.heartbeats.initialize(); err != nil {
		s.logger.Error("failed to initialize heartbeat timers", "error", err)
	}

	loops := s.leaderLoops()
	go func() {
		defer close(done)
		waitAll(ctx, loops)
	}()
	s.reconcileMembers()
	s.logger.Info("cluster leadership acquired", "took", time.Since(start))
}

// revokeLeadership stops every leader loop and drops the leader-only
// structures; it returns once the loops have ended.
func (s *Server) revokeLeadership() {
	s.leaderLock.Lock()
	defer s.leaderLock.Unlock()
	if s.leaderCancel == nil {
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
	s.evalBroker.SetEnabled(false)
	s.blockedEvals.SetEnabled(false)
	s.planQueue.SetEnabled(false)
	s.heartbeats.Clear()
	s.varLocks.SetEnabled(false)
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
