package fsm

import "github.com/nomadq/nomadq/structs"

// applyBatchQueueRelease removes placed entries, records releases and
// hands the released evals to the broker (a no-op on followers). A
// repeated release is not applied twice.
func (f *FSM) applyBatchQueueRelease(buf []byte, index uint64) any {
	req, err := decode[structs.BatchQueueReleaseRequest](buf, structs.BatchQueueReleaseRequestType)
	if err != nil {
		return err
	}
	evals, err := f.State().BatchQueueApply(index, req)
	if err != nil {
		return err
	}
	f.enqueue(evals)
	return nil
}

// applyBatchQueueControl records an operator's hold, release or top of
// a queued job.
func (f *FSM) applyBatchQueueControl(buf []byte, index uint64) any {
	req, err := decode[structs.BatchQueueControlRequest](buf, structs.BatchQueueControlRequestType)
	if err != nil {
		return err
	}
	return f.State().BatchQueueControl(index, req)
}

// applyBatchQueueUsageReset records an operator's reset of a namespace's
// decayed usage.
func (f *FSM) applyBatchQueueUsageReset(buf []byte, index uint64) any {
	req, err := decode[structs.BatchQueueUsageResetRequest](buf, structs.BatchQueueUsageResetRequestType)
	if err != nil {
		return err
	}
	return f.State().BatchQueueUsageReset(index, req)
}
