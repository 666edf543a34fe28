package nomad

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/acl"
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
		return structs.NewBadRequestf("eval priority must be between %d and %d, got %d", structs.JobMinPriority, structs.JobMaxPriority, args.EvalPriority)
	}
	if err := dropOversizedSubmission(args); err != nil {
		reply.Warnings = err.Error()
	}
	return j.commit(job, args, reply)
}

// commit stores an admitted job as Register does: with its submission and
// a job-register eval in one Raft entry, or only a new eval when the spec
// did not change. args supplies the enforce-index check, the eval
// priority, the submission and the write request.
func (j *Job) commit(job *structs.Job, args *structs.JobRegisterRequest, reply *structs.JobRegisterResponse) error {
	st := j.srv.State()
	existing, err := st.JobByID(nil, job.Namespace, job.ID)
	if err != nil {
		return err
	}
	preserveValues(existing, job, args.PreserveCounts, args.PreserveResources)
	assignScalingPolicies(existing, job)
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
		Submission:   args.Submission,
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
// copy it, fill in the namespace, this server's job_default_priority,
// Nomad's defaults and this server's region, and validate it.
func (j *Job) admit(submitted *structs.Job, namespace string) (*structs.Job, error) {
	if submitted == nil {
		return nil, structs.NewBadRequest("Job must be specified")
	}
	job := submitted.Copy()
	if job.ID == "" {
		return nil, structs.NewBadRequest("Job ID hasn't been provided")
	}
	if namespace != "" && job.Namespace == "" {
		job.Namespace = namespace
	}
	if job.Priority == 0 {
		job.Priority = j.srv.config.JobDefaultPriority
	}
	job.Canonicalize()
	if job.Region == "" || job.Region == structs.DefaultRegion {
		job.Region = j.srv.config.Region
	}
	if err := job.Validate(); err != nil {
		return nil, structs.NewBadRequest(err.Error())
	}
	if err := j.checkPriority(job); err != nil {
		return nil, err
	}
	if err := j.checkMaxCount(job); err != nil {
		return nil, err
	}
	if err := j.checkHome(job); err != nil {
		return nil, err
	}
	return job, nil
}

// checkPriority refuses, with a 400, a job whose priority is above this
// server's job_max_priority.
func (j *Job) checkPriority(job *structs.Job) error {
	if err := job.CheckPriority(j.srv.config.JobMaxPriority); err != nil {
		return structs.NewBadRequest(err.Error())
	}
	return nil
}

// checkMaxCount refuses, with a 400, a job that asks for more
// allocations than this server's job_max_count: before anything reads
// its counts, which a plan or an evaluation would turn into that many
// allocations in memory.
func (j *Job) checkMaxCount(job *structs.Job) error {
	if err := job.CheckMaxCount(j.srv.config.JobMaxCount); err != nil {
		return structs.NewErrRPCCoded(http.StatusBadRequest, err.Error())
	}
	return nil
}

// checkHome refuses a job whose namespace or node pool does not exist, or
// whose namespace does not allow its task drivers or network modes.
func (j *Job) checkHome(job *structs.Job) error {
	ns, err := j.srv.State().NamespaceByName(nil, job.Namespace)
	if err != nil {
		return err
	}
	if ns == nil {
		return structs.NewBadRequestf("job %q is in nonexistent namespace %q", job.ID, job.Namespace)
	}
	if err := ns.CheckCapabilities(job); err != nil {
		return err
	}
	if err := applyNamespaceMaxRun(ns, job); err != nil {
		return err
	}
	if err := j.checkMemoryMax(job); err != nil {
		return err
	}
	return j.srv.checkNodePool(job.ID, job.NodePool)
}

// checkMemoryMax refuses memory_max while the scheduler configuration
// disables memory oversubscription: the scheduler would not reserve it
// and no driver would enforce it, so the job would run differently from
// what it says. (Nomad registers such a job with a warning.)
func (j *Job) checkMemoryMax(job *structs.Job) error {
	_, cfg, err := j.srv.State().SchedulerConfig()
	if err != nil {
		return err
	}
	if cfg != nil && cfg.MemoryOversubscriptionEnabled {
		return nil
	}
	var errs structs.MultiError
	for _, tg := range job.TaskGroups {
		for _, t := range tg.Tasks {
			if r := t.Resources; r != nil && r.MemoryMaxMB > 0 {
				errs.Add(fmt.Errorf("Task group %q, task %q: resources memory_max %d is not allowed: memory oversubscription is disabled in the scheduler configuration (set MemoryOversubscriptionEnabled with nomad operator scheduler set-config -memory-oversubscription=true)", tg.Name, t.Name, r.MemoryMaxMB))
			}
		}
	}
	if err := errs.ErrorOrNil(); err != nil {
		return structs.NewBadRequest(err.Error())
	}
	return nil
}

// checkEnforceIndex answers a check-index register with Nomad's wording,
// as a 400: the request lost a race, the server did not fail.
func checkEnforceIndex(existing *structs.Job, want uint64) error {
	const prefix = "Enforcing job modify index"
	switch {
	case want == 0 && existing != nil:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "%s 0: job already exists", prefix)
	case want != 0 && existing == nil:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "%s %d: job does not exist", prefix, want)
	case existing != nil && existing.JobModifyIndex != want:
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "%s %d: job exists with conflicting job modify index: %d", prefix, want, existing.JobModifyIndex)
	}
	return nil
}

// Deregister stops a job (or purges it), with a job-deregister eval.
func (j *Job) Deregister(args *structs.JobDeregisterRequest, reply *structs.JobDeregisterResponse) error {
	if done, err := j.srv.forward("Job.Deregister", args.WriteRequest, args, reply); done {
		return err
	}
	if args.JobID == "" {
		return structs.NewBadRequest("missing job ID for deregistering")
	}
	ns := namespaceOf(args.Namespace)
	job, err := j.lookup(ns, args.JobID)
	if err != nil {
		return err
	}
	req := &structs.JobDeregisterRequest{JobID: args.JobID, Purge: args.Purge, WriteRequest: args.WriteRequest}
	req.Namespace = ns
	if args.EvalPriority != 0 && (args.EvalPriority < structs.JobMinPriority || args.EvalPriority > structs.JobMaxPriority) {
		return structs.NewBadRequestf("eval priority must be between %d and %d, got %d", structs.JobMinPriority, structs.JobMaxPriority, args.EvalPriority)
	}
	if !job.IsPeriodic() && !job.IsParameterized() {
		now := time.Now().UnixNano()
		prio := job.Priority
		if args.EvalPriority != 0 {
			prio = args.EvalPriority
		}
		req.Eval = &structs.Evaluation{
			ID:             structs.GenerateUUID(),
			Namespace:      ns,
			Priority:       prio,
			Type:           job.Type,
			TriggeredBy:    structs.EvalTriggerJobDeregister,
			JobID:          job.ID,
			JobModifyIndex: job.JobModifyIndex,
			Status:         structs.EvalStatusPending,
			CreateTime:     now,
			ModifyTime:     now,
		}
	}
	if args.NoShutdownDelay {
		if err := j.skipShutdownDelay(ns, job.ID); err != nil {
			return err
		}
	}
	_, index, err := j.srv.raftApply(structs.JobDeregisterRequestType, req)
	if err != nil {
		// A 404 when purged or deleted since the lookup above.
		return codeNotFound(err)
	}
	reply.JobModifyIndex = index
	reply.Index = index
	if req.Eval != nil {
		reply.EvalID = req.Eval.ID
		reply.EvalCreateIndex = index
	}
	return nil
}

// skipShutdownDelay marks the job's running allocations to be stopped
// without their shutdown_delay, before the stop itself, so the client
// sees the mark with (or before) the stop, as Nomad does for job stop
// -no-shutdown-delay.
func (j *Job) skipShutdownDelay(ns, jobID string) error {
	allocs, err := j.srv.State().AllocsByJob(nil, ns, jobID, true)
	if err != nil {
		return err
	}
	transitions := make(map[string]*structs.DesiredTransition)
	for _, a := range allocs {
		if !a.TerminalStatus() {
			transitions[a.ID] = &structs.DesiredTransition{NoShutdownDelay: new(true)}
		}
	}
	if len(transitions) == 0 {
		return nil
	}
	_, _, err = j.srv.raftApply(structs.AllocUpdateDesiredTransitionRequestType, &structs.AllocUpdateDesiredTransitionRequest{Allocs: transitions})
	return err
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
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	allow, err := j.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityListJobs)
	if err != nil {
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
		jobs = slices.DeleteFunc(jobs, func(j *structs.Job) bool { return !allow(j.Namespace) })
		if jobs, err = structs.KeepMatching(filter, jobs, func(j *structs.Job) any { return j }); err != nil {
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
		return tableIndex(st, "allocs")
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
		return tableIndex(st, "evals")
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
		return nil, structs.NewErrRPCCodedf(http.StatusNotFound, "job %q not found", id)
	}
	return job, nil
}

func namespaceOf(ns string) string {
	if ns == "" {
		return structs.DefaultNamespace
	}
	return ns
}

// preserveValues keeps, in a job being registered again, the counts of
// the groups and the resources of the tasks it already has, when asked:
// an operator re-submitting a job file leaves counts set by scaling and
// resources set by tuning as they are. New groups and tasks take what
// the file says.
func preserveValues(existing, job *structs.Job, counts, resources bool) {
	if existing == nil || (!counts && !resources) {
		return
	}
	for _, tg := range job.TaskGroups {
		old := existing.LookupTaskGroup(tg.Name)
		if old == nil {
			continue
		}
		if counts {
			tg.Count = old.Count
		}
		if !resources {
			continue
		}
		for _, t := range tg.Tasks {
			for _, ot := range old.Tasks {
				if ot.Name == t.Name {
					t.Resources = ot.Resources.Copy()
				}
			}
		}
	}
}

// assignScalingPolicies gives each group's scaling policy its target and
// an ID, keeping the ID the group's policy had in the stored job so that
// an autoscaler following a policy keeps following it across versions.
func assignScalingPolicies(existing, job *structs.Job) {
	for _, tg := range job.TaskGroups {
		p := tg.Scaling
		if p == nil {
			continue
		}
		p.Target = structs.ScalingTarget(job.Namespace, job.ID, tg.Name)
		p.ID = ""
		if existing != nil {
			if old := existing.LookupTaskGroup(tg.Name); old != nil && old.Scaling != nil {
				p.ID = old.Scaling.ID
			}
		}
		if p.ID == "" {
			p.ID = structs.GenerateUUID()
		}
	}
}
