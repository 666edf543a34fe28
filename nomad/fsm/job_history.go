package fsm

import (
	"github.com/nomadq/nomadq/structs"
)

func (f *FSM) applyJobStability(buf []byte, index uint64) any {
	req, err := decode[structs.JobStabilityRequest](buf, structs.JobStabilityRequestType)
	if err != nil {
		return err
	}
	ns := req.Namespace
	if ns == "" {
		ns = structs.DefaultNamespace
	}
	return f.State().UpdateJobStability(index, ns, req.JobID, req.JobVersion, req.Stable)
}

func (f *FSM) applyScalingEvent(buf []byte, index uint64) any {
	req, err := decode[structs.ScalingEventRequest](buf, structs.ScalingEventRegisterRequestType)
	if err != nil {
		return err
	}
	return f.State().UpsertScalingEvent(index, req)
}

func (f *FSM) applyReconcileJobSummaries(buf []byte, index uint64) any {
	if _, err := decode[structs.ReconcileJobSummariesRequest](buf, structs.ReconcileJobSummariesRequestType); err != nil {
		return err
	}
	return f.State().ReconcileJobSummaries(index)
}
