package fsm

import "github.com/nomadq/nomadq/structs"

// applyPeriodicLaunch stores a periodic child, its eval and the parent's
// launch record, then routes the eval. Periodic children are periodic-job
// evals, which the batch queue does not hold.
func (f *FSM) applyPeriodicLaunch(buf []byte, index uint64) any {
	req, err := decode[structs.PeriodicLaunchRequest](buf, structs.PeriodicLaunchRequestType)
	if err != nil {
		return err
	}
	return f.alone(func(w *entryWriter) error {
		if err := w.UpsertPeriodicLaunch(index, req.Job, req.Eval, req.Launch); err != nil {
			return err
		}
		if req.Eval != nil {
			f.routeEvals(w, []*structs.Evaluation{req.Eval})
		}
		return nil
	})
}
