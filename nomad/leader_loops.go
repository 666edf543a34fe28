package nomad

import (
	"context"
	"fmt"
	"time"

	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/structs"
)

// leaderLoops are the goroutines a leader runs; each ends when ctx does.
func (s *Server) leaderLoops() []func(context.Context) {
	loops := []func(context.Context){
		s.planApply,
		s.scheduleCoreJobs,
		s.reapFailedEvals,
		s.reapDupBlockedEvals,
		s.reapCancelableEvals,
		s.runBatchQueue,
		s.runPeriodicDispatcher,
		s.publishRootKeys,
		s.rekeyVariables,
		s.workerPool.run,
		s.autopilotLoop,
		s.runNodeDrainer,
	}
	return loops
}

// scheduleCoreJobs creates the periodic garbage-collection evals.
func (s *Server) scheduleCoreJobs(ctx context.Context) {
	evalGC := time.NewTicker(s.config.EvalGCInterval)
	jobGC := time.NewTicker(s.config.JobGCInterval)
	nodeGC := time.NewTicker(s.config.NodeGCInterval)
	defer evalGC.Stop()
	defer jobGC.Stop()
	defer nodeGC.Stop()
	for {
		var job string
		select {
		case <-ctx.Done():
			return
		case <-evalGC.C:
			job = structs.CoreJobEvalGC
		case <-jobGC.C:
			job = structs.CoreJobJobGC
		case <-nodeGC.C:
			job = structs.CoreJobNodeGC
		}
		if err := s.createCoreEval(job); err != nil {
			s.logger.Error("failed to create core eval", "job", job, "error", err)
		}
	}
}

// createCoreEval writes a pending `_core` eval for the named GC job.
func (s *Server) createCoreEval(job string) error {
	_, err := s.createCoreEvalIndex(job)
	return err
}

// createCoreEvalIndex is createCoreEval that also returns the write's index.
func (s *Server) createCoreEvalIndex(job string) (uint64, error) {
	now := time.Now().UnixNano()
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   "-",
		Priority:    structs.CoreJobPriority,
		Type:        structs.JobTypeCore,
		TriggeredBy: structs.EvalTriggerScheduled,
		JobID:       job,
		Status:      structs.EvalStatusPending,
		CreateTime:  now,
		ModifyTime:  now,
	}
	_, index, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
	return index, err
}

// reapFailedEvals marks evals that hit the delivery limit failed, with a
// failed-follow-up eval that retries the job later.
func (s *Server) reapFailedEvals(ctx context.Context) {
	for ctx.Err() == nil {
		eval, token, err := s.evalBroker.Dequeue([]string{evalbroker.FailedQueue}, 500*time.Millisecond)
		if err != nil {
			// The broker is disabled while leadership is being revoked.
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if eval == nil {
			continue
		}
		failed, followup := failedDelivery(eval, s.config.EvalDeliveryLimit, time.Now())
		req := &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{failed, followup}, EvalToken: token}
		if _, _, err := s.raftApply(structs.EvalUpdateRequestType, req); err != nil {
			s.logger.Error("failed to mark eval failed", "eval_id", eval.ID, "error", err)
			_ = s.evalBroker.Nack(eval.ID, token)
			continue
		}
		_ = s.evalBroker.Ack(eval.ID, token)
	}
}

// failedDelivery returns the eval marked failed after limit deliveries,
// naming the limit the broker was configured with, and its follow-up
// eval that retries the job a minute later.
func failedDelivery(eval *structs.Evaluation, limit int, now time.Time) (failed, followup *structs.Evaluation) {
	failed = eval.Copy()
	failed.Status = structs.EvalStatusFailed
	failed.StatusDescription = fmt.Sprintf("evaluation reached delivery limit (%d)", limit)
	failed.ModifyTime = now.UnixNano()
	followup = &structs.Evaluation{
		ID:           structs.GenerateUUID(),
		Namespace:    eval.Namespace,
		Priority:     eval.Priority,
		Type:         eval.Type,
		TriggeredBy:  structs.EvalTriggerFailedFollowUp,
		JobID:        eval.JobID,
		PreviousEval: eval.ID,
		Status:       structs.EvalStatusPending,
		Wait:         time.Minute,
		CreateTime:   now.UnixNano(),
		ModifyTime:   now.UnixNano(),
	}
	failed.NextEval = followup.ID
	return failed, followup
}

// reapDupBlockedEvals cancels blocked evals replaced by a newer one of the
// same job.
func (s *Server) reapDupBlockedEvals(ctx context.Context) {
	for ctx.Err() == nil {
		dups := s.blockedEvals.GetDuplicates(500 * time.Millisecond)
		if len(dups) == 0 {
			continue
		}
		s.cancelEvals(dups, "existing blocked evaluation exists for job")
	}
}

// reapCancelableEvals cancels evals the broker found superseded by a newer
// eval of the same job.
func (s *Server) reapCancelableEvals(ctx context.Context) {
	t := time.NewTicker(5 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			evals := s.evalBroker.Cancelable(1000)
			if len(evals) == 0 {
				break
			}
			s.cancelEvals(evals, "canceled after more recent eval was processed")
		}
	}
}

func (s *Server) cancelEvals(evals []*structs.Evaluation, why string) {
	now := time.Now().UnixNano()
	updates := make([]*structs.Evaluation, 0, len(evals))
	for _, e := range evals {
		c := e.Copy()
		c.Status = structs.EvalStatusCancelled
		c.StatusDescription = why
		c.ModifyTime = now
		updates = append(updates, c)
	}
	if _, _, err := s.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: updates}); err != nil {
		s.logger.Error("failed to cancel evals", "count", len(updates), "error", err)
	}
}
