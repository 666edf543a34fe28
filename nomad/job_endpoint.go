package nomad

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Job is the RPC endpoint for jobs.
type Job struct {
	srv *Server
}

// Register validates and stores a job, with its job-register evaluation in
// the same Raft entry. An unchanged re-registration only creates the eval.
func (j *Job) Register(args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
	if done, err := j.srv.forward("Job.Register", args.WriteRequest, args, reply); done {
		return err
	}
	job, err := j.admit(args.Job, args.Namespace)
	if err != nil {
		return err
	}
	if args.EvalPriority != 0 && (args.EvalPriority < structs.JobMinPriority || args.EvalPriority > structs.JobMaxPriority) {
		return fmt.Errorf("eval priority must be between %d and %d, got %d", structs.JobMinPriority, structs.JobMaxPriority, args.EvalPriority)
	}

	st := j.srv.State()
	existing, err := st.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	if args.EnforceIndex {
		if err := checkEnforceIndex(existing, args.JobModifyIndex); err != nil {
			return err
		}
	}

	now := time.Now()
	job.SubmitTime = now.UnixNano()
	var eval *structs.Evaluation
	if !job.IsPeriodic() && !job.IsParameterized() {
		prio := job.Priority
		if args.EvalPriority != 0 {
			prio = args.EvalPriority
		}
		eval = &structs.Evaluation{
			ID:          structs.GenerateUUID(),
			Namespace:   job.Namespace,
			Priority:    prio,
			Type:        job.Type,
			TriggeredBy: structs.EvalTriggerJobRegister,
			JobID:       job.ID,
			Status:      structs.EvalStatusPending,
			CreateTime:  now.UnixNano(),
			ModifyTime:  now.UnixNano(),
		}
	}

	if existing != nil && !existing.Stop && !existing.SpecChanged(job) {
		// Nothing to store: schedule the job again with a new eval only.
		reply.JobModifyIndex = existing.JobModifyIndex
		if eval == nil {
			reply.Index = existing.ModifyIndex
			return nil
		}
		eval.JobModifyIndex = existing.JobModifyIndex
		_, index, err := j.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{eval}})
		if err != nil {
			return err
		}
		reply.EvalID, reply.EvalCreateIndex, reply.Index = eval.ID, index, index
		return nil
	}

	_, index, err := j.srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job:          job,
		Eval:         eval,
		WriteRequest: args.WriteRequest,
	})
	if err != nil {
		return err
	}
	reply.JobModifyIndex = index
	reply.Index = index
	if eval != nil {
		reply.EvalID = eval.ID
		reply.EvalCreateIndex = index
	}
	return nil
}

// admit is what Register and Plan do to a submitted job before using it:
// copy it, fill in the namespace, Nomad's defaults and this server's
// region, and validate it.
func (j *Job) admit(submitted *structs.Job, namespace string) (*structs.Job, error) {
	if submitted == nil {
		return nil, errors.New("Job must be specified")
	}
	job := submitted.Copy()
	if job.ID == "" {
		return nil, errors.New("Job ID hasn't been provided")
	}
	if namespace != "" && job.Namespace == "" {
		job.Namespace = namespace
	}
	job.Canonicalize()
	if job.Region == "" || job.Region == structs.DefaultRegion {
		job.Region = j.srv.config.Region
	}
	if err := job.Validate(); err != nil {
		return nil, err
	}
	return job, nil
}

// checkEnforceIndex answers a check-index register with Nomad's wording.
func checkEnforceIndex(existing *structs.Job, want uint64) error {
	const prefix = "Enforcing job modify index"
	switch {
	case want == 0 && existing != nil:
		return fmt.Errorf("%s 0: job already exists", prefix)
	case want != 0 && existing == nil:
		return fmt.Errorf("%s %d: job does not exist", prefix, want)
	case existing != nil && existing.JobModifyIndex != want:
		return fmt.Errorf("%s %d: job exists with conflicting job modify index: %d", prefix, want, existing.JobModifyIndex)
	}
	return nil
}

// Deregister stops a job (or purges it), with a job-deregister eval.
func (j *Job) Deregister(args *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
	if done, err := j.srv.forward("Job.Deregister", args.WriteRequest, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return errors.New("missing job ID for deregistering")
	}
	ns := namespaceOf(args.Namespace)
	job, err := j.lookup(ns, args.JobID)
	if err != nil {
		return err
	}
	req := &structs.JobDeregisterRequest{JobID: args.JobID, Purge: args.Purge, WriteRequest: args.WriteRequest}
	req.Namespace = ns
	if !job.IsPeriodic() && !job.IsParameterized() {
		now := time.Now().UnixNano()
		req.Eval = &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      ns,
			Priority:       job.Priority,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerJobDeregister,
			JobID:          job.ID,
			JobModifyIndex: job.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		}
	}
	_, index, err := j.srv.raftApply(structs.JobDeregisterRequestType, req)
	if err != nil {
		return err
	}
	reply.JobModifyIndex = index
	reply.Index = index
	if req.Eval != nil {
		reply.EvalID = req.Eval.ID
		reply.EvalCreateIndex = index
	}
	return nil
}

// Get reads one job; Job is nil when it does not exist.
func (j *Job) Get(args *structs.JobSpecificRequest, reply *structs.SingleJobResponse) error {
	if done, err := j.srv.forward("Job.Get", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		job, err := st.JobByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.Job = job
		if job != nil {
			return job.ModifyIndex, nil
		}
		return maxIndex(st, "jobs")
	})
}

// List lists jobs, filtered by ID prefix, with their summaries.
func (j *Job) List(args *structs.JobListRequest, reply *structs.JobListResponse) error {
	if done, err := j.srv.forward("Job.List", args.QueryOptions, args, reply); done {
		return err
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		var jobs []*structs.Job
		var err error
		if args.Namespace == "*" {
			jobs, err = st.Jobs(ws)
		} else {
			jobs, err = st.JobsByIDPrefix(ws, namespaceOf(args.Namespace), args.Prefix)
		}
		if err != nil {
			return 0, err
		}
		stubs := make([]*structs.JobListStub, 0, len(jobs))
		for _, job := range jobs {
			if args.Prefix != "" && !strings.HasPrefix(job.ID, args.Prefix) {
				continue
			}
			sum, err := st.JobSummaryByID(ws, job.Namespace, job.ID)
			if err != nil {
				return 0, err
			}
			stubs = append(stubs, job.Stub(sum))
		}
		sort.Slice(stubs, func(a, b int) bool { return stubs[a].ID < stubs[b].ID })
		reply.Jobs = stubs
		return maxIndex(st, "jobs", "job_summary")
	})
}

// Allocations lists a job's allocations.
func (j *Job) Allocations(args *structs.JobSpecificRequest, reply *structs.JobAllocationsResponse) error {
	if done, err := j.srv.forward("Job.Allocations", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		allocs, err := st.AllocsByJob(ws, ns, args.JobID, args.All)
		if err != nil {
			return 0, err
		}
		reply.Allocations = make([]*structs.AllocListStub, 0, len(allocs))
		for _, a := range allocs {
			reply.Allocations = append(reply.Allocations, a.Stub())
		}
		return maxIndex(st, "allocs")
	})
}

// Evaluations lists a job's evaluations.
func (j *Job) Evaluations(args *structs.JobSpecificRequest, reply *structs.JobEvaluationsResponse) error {
	if done, err := j.srv.forward("Job.Evaluations", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		evals, err := st.EvalsByJob(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		if evals == nil {
			evals = []*structs.Evaluation{}
		}
		reply.Evaluations = evals
		return maxIndex(st, "evals")
	})
}

// Summary reads a job's summary.
func (j *Job) Summary(args *structs.JobSpecificRequest, reply *structs.JobSummaryResponse) error {
	if done, err := j.srv.forward("Job.Summary", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		sum, err := st.JobSummaryByID(ws, ns, args.JobID)
		if err != nil {
			return 0, err
		}
		reply.JobSummary = sum
		if sum != nil {
			return sum.ModifyIndex, nil
		}
		return maxIndex(st, "job_summary")
	})
}

// lookup returns the stored job, or an error naming it when there is none.
func (j *Job) lookup(namespace, id string) (*structs.Job, error) {
	job, err := j.srv.State().JobByID(nil, namespace, id)
	if err != nil {
		return nil, err
	}
	if job == nil {
		return nil, fmt.Errorf("job %q not found", id)
	}
	return job, nil
}

func namespaceOf(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}
