package nomad

import "github.com/nomadq/nomadq/structs"

// applyPeriodicLaunch stores a periodic child, its eval and the parent's
// launch record, then routes the eval. Periodic children are periodic-job
// evals, which the batch queue does not hold.
func (f *nomadFSM) applyPeriodicLaunch(buf []byte, index uint64) any {
	req, err := decode[structs.PeriodicLaunchRequest](buf, structs.PeriodicLaunchRequestType)
	if err != nil {
		return err
	}
	if err := f.State().UpsertPeriodicLaunch(index, req.Job, req.Eval, req.Launch); err != nil {
		return err
	}
	if req.Eval != nil {
		f.routeEvals([]*structs.Evaluation{req.Eval})
	}
	return nil
}
