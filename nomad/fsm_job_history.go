package nomad

import (
	"github.com/nomadq/nomadq/structs"
)

func (f *nomadFSM) applyJobStability(buf []byte, index uint64) any {
	req, err := decode[structs.JobStabilityRequest](buf, structs.JobStabilityRequestType)
	if err != nil {
		return err
	}
	return f.State().UpdateJobStability(index, namespaceOf(req.Namespace), req.JobID, req.JobVersion, req.Stable)
}

func (f *nomadFSM) applyScalingEvent(buf []byte, index uint64) any {
	req, err := decode[structs.ScalingEventRequest](buf, structs.ScalingEventRegisterRequestType)
	if err != nil {
		return err
	}
	return f.State().UpsertScalingEvent(index, req)
}

func (f *nomadFSM) applyReconcileJobSummaries(buf []byte, index uint64) any {
	if _, err := decode[structs.ReconcileJobSummariesRequest](buf, structs.ReconcileJobSummariesRequestType); err != nil {
		return err
	}
	return f.State().ReconcileJobSummaries(index)
}
