package nomad

import (
	"fmt"
	"net/http"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// jobMaxSourceSize is the most bytes of source, variables and variable
// flags a registration's submission may hold to be kept: Nomad's default
// job_max_source_size.
const jobMaxSourceSize = 1_000_000

// dropOversizedSubmission drops a submission larger than jobMaxSourceSize
// from args and says so; the job itself is still registered, as in Nomad.
func dropOversizedSubmission(args *structs.JobRegisterRequest) error {
	sub := args.Submission
	if sub == nil {
		return nil
	}
	size := len(sub.Source) + len(sub.Variables)
	for k, v := range sub.VariableFlags {
		size += len(k) + len(v)
	}
	if size <= jobMaxSourceSize {
		return nil
	}
	args.Submission = nil
	return fmt.Errorf("job source size of %d bytes exceeds maximum of %d bytes and will be discarded", size, jobMaxSourceSize)
}

// Revert registers a stored version of a job again, as a new version with
// a job-register eval; the stored source of that version comes along.
func (j *Job) Revert(args *structs.JobRevertRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Revert", args.WriteRequest, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return structs.NewBadRequestf("missing job ID for revert")
	}
	ns := namespaceOf(args.Namespace)
	st := j.srv.State()
	cur, err := j.lookup(ns, args.JobID)
	if err != nil {
		return err
	}
	// Reverting to the version that runs, or against a stale prior
	// version, is the caller's mistake, not the server's.
	if args.JobVersion == cur.Version {
		return structs.NewBadRequestf("job %q is already at version %d", args.JobID, cur.Version)
	}
	old, err := st.JobByIDAndVersion(nil, ns, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if old == nil {
		return structs.NewErrNotFoundf("job %q in namespace %q at version %d not found", args.JobID, ns, args.JobVersion)
	}
	reg := &structs.JobRegisterRequest{WriteRequest: args.WriteRequest}
	if args.EnforcePriorVersion != nil {
		if cur.Version != *args.EnforcePriorVersion {
			return structs.NewBadRequestf("Current job has version %d; enforcing version %d", cur.Version, *args.EnforcePriorVersion)
		}
		reg.EnforceIndex, reg.JobModifyIndex = true, cur.JobModifyIndex
	}
	if reg.Submission, err = st.JobSubmission(nil, ns, args.JobID, args.JobVersion); err != nil {
		return err
	}
	job := old.Copy()
	// A revert is a new registration: the new version has not proven
	// itself yet, and job_max_count or job_max_priority may have been
	// lowered since.
	job.Stable = false
	if err := j.checkPriority(job); err != nil {
		return err
	}
	if err := j.checkMaxCount(job); err != nil {
		return err
	}
	reg.Job = job
	return j.commit(job, reg, reply)
}

// Stable marks a stored version of a job stable or not.
func (j *Job) Stable(args *structs.JobStabilityRequest, reply *structs.JobStabilityResponse) error {
	if done, err := j.srv.forward("Job.Stable", args.WriteRequest, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return structs.NewBadRequestf("missing job ID for marking job as stable")
	}
	ns := namespaceOf(args.Namespace)
	v, err := j.srv.State().JobByIDAndVersion(nil, ns, args.JobID, args.JobVersion)
	if err != nil {
		return err
	}
	if v == nil {
		return structs.NewErrNotFoundf("job %q in namespace %q at version %d not found", args.JobID, ns, args.JobVersion)
	}
	req := *args
	req.Namespace = ns
	_, index, err := j.srv.raftApply(structs.JobStabilityRequestType, &req)
	if err != nil {
		return codeNotFound(err)
	}
	reply.Index = index
	return nil
}

// validateScale checks a scale request before the job is looked up; its
// errors are 400s, as Nomad's.
func validateScale(args *structs.JobScaleRequest, ns string) error {
	if t := args.Target[structs.ScalingTargetNamespace]; t != "" && t != ns {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "namespace in payload did not match header: %q is not %q", t, ns)
	}
	if t := args.Target[structs.ScalingTargetJob]; t != "" && t != args.JobID {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "job ID in payload did not match URL")
	}
	if args.JobID == "" {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "missing job ID for scaling action")
	}
	if args.Target[structs.ScalingTargetGroup] == "" {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "missing task group name for scaling action")
	}
	if args.Count != nil {
		if *args.Count < 0 {
			return structs.NewErrRPCCoded(http.StatusBadRequest, "scaling action count can't be negative")
		}
		if args.Error {
			return structs.NewErrRPCCoded(http.StatusBadRequest, "scaling action should not contain count if error is true")
		}
		if int64(int(*args.Count)) != *args.Count || *args.Count > 1<<31-1 {
			return structs.NewErrRPCCodedf(http.StatusBadRequest, "new scaling count is too large for TaskGroup.Count (int): %d", *args.Count)
		}
	}
	return nil
}

// Scale sets the count of a task group, registering the changed job with a
// job-scaling eval, and records a scaling event. Without a count it only
// records the event (an autoscaler reporting, or reporting an error).
func (j *Job) Scale(args *structs.JobScaleRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Scale", args.WriteRequest, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	if err := validateScale(args, ns); err != nil {
		return err
	}
	stored, err := j.srv.State().JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if stored == nil {
		return structs.NewErrRPCCodedf(http.StatusNotFound, "job %q not found", args.JobID)
	}
	groupName := args.Target[structs.ScalingTargetGroup]
	group := stored.LookupTaskGroup(groupName)
	if group == nil {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "task group %q specified for scaling does not exist in job", groupName)
	}
	if args.Count != nil && stored.Type == structs.JobTypeSystem && *args.Count > 1 {
		return structs.NewErrRPCCoded(http.StatusBadRequest, `jobs of type "system" can only be scaled between 0 and 1`)
	}
	if args.Count != nil {
		if err := group.CheckScaleCount(*args.Count); err != nil {
			return structs.NewErrRPCCoded(http.StatusBadRequest, err.Error())
		}
		// Only a larger count is checked: scaling down a job that is
		// above a since lowered job_max_count must stay possible.
		if *args.Count > int64(group.Count) {
			scaled := stored.Copy()
			scaled.LookupTaskGroup(groupName).Count = int(*args.Count)
			if err := j.checkMaxCount(scaled); err != nil {
				return err
			}
		}
	}
	if args.JobModifyIndex != 0 && args.JobModifyIndex != stored.JobModifyIndex {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "Enforcing job modify index %d: job exists with conflicting job modify index: %d", args.JobModifyIndex, stored.JobModifyIndex)
	}

	now := time.Now().UnixNano()
	event := &structs.ScalingEventRequest{
		Namespace: ns,
		JobID:     stored.ID,
		TaskGroup: groupName,
		ScalingEvent: &structs.ScalingEvent{
			Time:          now,
			PreviousCount: int64(group.Count),
			Count:         args.Count,
			Message:       args.Message,
			Error:         args.Error,
			Meta:          args.Meta,
		},
	}
	reply.JobModifyIndex = stored.JobModifyIndex
	if args.Count != nil {
		job := stored.Copy()
		job.LookupTaskGroup(groupName).Count = int(*args.Count)
		job.SubmitTime = now
		reg := &structs.JobRegisterRequest{Job: job, WriteRequest: args.WriteRequest}
		reg.Namespace = ns
		if !job.IsPeriodic() && !job.IsParameterized() {
			reg.Eval = &structs.Evaluation{
				ID:          structs.GenerateUUID(),
				Namespace:   ns,
				Priority:    job.Priority,
				Type:        job.Type,
				TriggeredBy: structs.EvalTriggerScaling,
				JobID:       job.ID,
				Status:      structs.EvalStatusPending,
				CreateTime:  now,
				ModifyTime:  now,
			}
		}
		_, index, err := j.srv.raftApply(structs.JobRegisterRequestType, reg)
		if err != nil {
			return err
		}
		// An unchanged count keeps the job's version and JobModifyIndex.
		reply.JobModifyIndex = index
		if after, err := j.srv.State().JobByID(nil, ns, job.ID); err == nil && after != nil {
			reply.JobModifyIndex = after.JobModifyIndex
		}
		if reg.Eval != nil {
			reply.EvalID, reply.EvalCreateIndex = reg.Eval.ID, index
			event.ScalingEvent.EvalID = &reg.Eval.ID
		}
	}
	_, index, err := j.srv.raftApply(structs.ScalingEventRegisterRequestType, event)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// ScaleStatus reports the desired and placed counts of a job's groups
// with their scaling events; JobScaleStatus is nil when there is no job.
func (j *Job) ScaleStatus(args *structs.JobScaleStatusRequest, reply *structs.JobScaleStatusResponse) error {
	if done, err := j.srv.forward("Job.ScaleStatus", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		job, err := st.JobByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.JobScaleStatus = nil
		if job == nil {
			return maxIndex(st, state.TableJobs)
		}
		events, eventsIndex, err := st.ScalingEventsByJob(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		allocs, err := st.AllocsByJob(ws, ns, args.JobID, false)
		if err != nil {
			return 0, err
		}
		status := &structs.JobScaleStatus{
			JobID:          job.ID,
			Namespace:      job.Namespace,
			JobCreateIndex: job.CreateIndex,
			JobModifyIndex: job.ModifyIndex,
			JobStopped:     job.Stop,
			TaskGroups:     make(map[string]*structs.TaskGroupScaleStatus, len(job.TaskGroups)),
		}
		for _, tg := range job.TaskGroups {
			status.TaskGroups[tg.Name] = &structs.TaskGroupScaleStatus{Desired: tg.Count, Events: events[tg.Name]}
		}
		index := max(job.ModifyIndex, eventsIndex)
		for _, a := range allocs {
			tg := status.TaskGroups[a.TaskGroup]
			if tg == nil || a.TerminalStatus() {
				continue
			}
			tg.Placed++
			if a.ClientStatus == structs.AllocClientStatusRunning {
				tg.Running++
			}
			index = max(index, a.ModifyIndex)
		}
		reply.JobScaleStatus = status
		return index, nil
	})
}

// GetJobSubmission returns the source a job version was registered from;
// Submission is nil when none was sent or it is no longer kept.
func (j *Job) GetJobSubmission(args *structs.JobSubmissionRequest, reply *structs.JobSubmissionResponse) error {
	if done, err := j.srv.forward("Job.GetJobSubmission", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		sub, err := st.JobSubmission(ws, ns, args.JobID, args.Version)
		if err != nil {
			return 0, err
		}
		reply.Submission = sub
		if sub != nil {
			return sub.JobModifyIndex, nil
		}
		return maxIndex(st, state.TableJobSubmission)
	})
}
