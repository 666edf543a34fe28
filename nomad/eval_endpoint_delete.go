package nomad

import (
	"errors"
	"fmt"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Delete removes evaluations an operator names. Nomad allows it only while
// the eval broker is paused (scheduler configuration PauseEvalBroker), so
// that no worker holds an eval being deleted. An eval whose allocations
// may still need it (running, or failed and due a reschedule) is not safe
// to delete: it fails the request, or is skipped with SkipUnsafe.
func (e *Eval) Delete(args *structs.EvalUserDeleteRequest, reply *structs.EvalDeleteResponse) error {
	if done, err := e.srv.forward("Eval.Delete", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.EvalIDs) == 0 && !args.SkipUnsafe {
		return errors.New("evals must be deleted by either ID or filter")
	}
	// The stored configuration decides, not only the broker's state: a
	// server that leads but has not yet started its broker must refuse
	// as well.
	_, cfg, err := e.srv.State().SchedulerConfig()
	if err != nil {
		return err
	}
	if cfg == nil || !cfg.PauseEvalBroker || e.srv.evalBroker.Enabled() {
		return errors.New("eval broker is enabled; eval broker must be paused to delete evals")
	}
	snap, err := e.srv.State().Snapshot()
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(args.EvalIDs))
	for _, id := range args.EvalIDs {
		eval, err := snap.EvalByID(nil, id)
		if err != nil {
			return err
		}
		if eval == nil {
			if args.SkipUnsafe {
				continue
			}
			return structs.NewErrNotFoundf("eval not found")
		}
		ok, err := evalDeleteSafe(snap, eval)
		if err != nil {
			return err
		}
		if !ok {
			if args.SkipUnsafe {
				continue
			}
			return fmt.Errorf("eval %s is not safe to delete", eval.ID)
		}
		ids = append(ids, eval.ID)
	}
	reply.Count = len(ids)
	if len(ids) == 0 {
		return nil
	}
	_, index, err := e.srv.raftApply(structs.EvalDeleteRequestType, &structs.EvalDeleteRequest{Evals: ids, WriteRequest: args.WriteRequest})
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// evalDeleteSafe reports whether deleting eval loses nothing the
// scheduler still needs: its job is gone, stopped or dead, or none of its
// allocs is running (or unknown), or failed and waiting for a reschedule
// that copies from it.
func evalDeleteSafe(snap *state.StateSnapshot, eval *structs.Evaluation) (bool, error) {
	job, err := snap.JobByID(nil, eval.Namespace, eval.JobID)
	if err != nil {
		return false, err
	}
	if job == nil || job.Stop || job.Status == structs.JobStatusDead {
		return true, nil
	}
	allocs, err := snap.AllocsByEval(nil, eval.ID)
	if err != nil {
		return false, err
	}
	for _, a := range allocs {
		switch a.ClientStatus {
		case structs.AllocClientStatusRunning, structs.AllocClientStatusUnknown:
			return false, nil
		case structs.AllocClientStatusFailed:
		default:
			continue
		}
		var policy *structs.ReschedulePolicy
		if tg := job.LookupTaskGroup(a.TaskGroup); tg != nil {
			policy = tg.ReschedulePolicy
		}
		if policy == nil || (!policy.Unlimited && policy.Attempts == 0) {
			continue // never rescheduled
		}
		if a.NextAllocation == "" || policy.Unlimited {
			return false, nil // its replacement is still to come
		}
		if a.RescheduleTracker == nil || len(a.RescheduleTracker.Events) == 0 {
			return false, nil
		}
	}
	return true, nil
}
