package batchqueue

import (
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Route is the queue's routing rule, which the state store applies to
// every newly written eval (see state.SetBatchQueueRouter). An eval
// enters the queue when the queue is on, the eval is a pending,
// register-triggered batch eval, and its job exists, is not stopped and
// has neither a released entry nor a live alloc: a job that is already
// placing or running (a max_run_duration extension, say) is not held
// back. An eval of a job that is still queued replaces the held one and
// keeps the job's place. Everything else goes to the broker or blocked
// evals as usual.
//
// The checks run cheapest first, so an eval that is not a batch register
// eval costs no read.
func Route(eval *structs.Evaluation, facts state.BatchQueueFacts) (state.BatchQueueRouting, error) {
	if eval.Status != structs.EvalStatusPending || eval.Type != structs.JobTypeBatch ||
		eval.TriggeredBy != structs.EvalTriggerJobRegister {
		return state.BatchQueuePass, nil
	}
	if on, err := facts.Enabled(); err != nil || !on {
		return state.BatchQueuePass, err
	}
	if job, err := facts.Job(); err != nil || job == nil || job.Stop {
		return state.BatchQueuePass, err
	}
	entry, err := facts.Entry()
	if err != nil {
		return state.BatchQueuePass, err
	}
	if entry != nil {
		if entry.Released() || entry.EvalID == eval.ID {
			return state.BatchQueuePass, nil
		}
		return state.BatchQueueReplace, nil
	}
	if live, err := facts.LiveAlloc(); err != nil || live {
		return state.BatchQueuePass, err
	}
	return state.BatchQueueEnqueue, nil
}
