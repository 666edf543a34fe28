package nomad

import (
	"sort"

	"github.com/nomadq/nomadq/acl"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Statuses lists jobs with their allocs' statuses, as the UI's job index
// shows them: most recently changed first (Reverse: oldest first), child
// jobs only with IncludeChildren, only the named jobs when Jobs is set.
// The reply index is the highest modify index among the listed jobs and
// their allocs, so that a change to a job not listed does not wake a
// blocked query.
func (j *Job) Statuses(args *structs.JobStatusesRequest, reply *structs.JobStatusesResponse) error {
	if done, err := j.srv.forward("Job.Statuses", args.QueryOptions, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	allow, err := j.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadJob)
	if err != nil {
		return err
	}
	wanted := make(map[structs.NamespacedID]bool, len(args.Jobs))
	for _, id := range args.Jobs {
		id.Namespace = namespaceOf(id.Namespace)
		wanted[id] = true
	}
	return j.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		jobs, err := st.Jobs(ws)
		if err != nil {
			return 0, err
		}
		var index uint64 = 1
		out := make([]structs.JobStatusesJob, 0, len(jobs))
		for _, job := range jobs {
			switch {
			case ns != "*" && job.Namespace != ns, !allow(job.Namespace):
				continue
			case len(wanted) > 0 && !wanted[structs.NamespacedID{Namespace: job.Namespace, ID: job.ID}]:
				continue
			case job.ParentID != "" && !args.IncludeChildren:
				continue
			}
			js, high, err := jobStatuses(ws, st, job, jobs)
			if err != nil {
				return 0, err
			}
			index = max(index, high)
			out = append(out, js)
		}
		sort.SliceStable(out, func(a, b int) bool {
			if args.Reverse {
				return out[a].ModifyIndex < out[b].ModifyIndex
			}
			return out[a].ModifyIndex > out[b].ModifyIndex
		})
		reply.Jobs = out
		return index, nil
	})
}

// jobStatuses builds one job's entry and returns the highest modify index
// it read. all is every job, to find a parent's children.
func jobStatuses(ws memdb.WatchSet, st *state.StateStore, job *structs.Job, all []*structs.Job) (structs.JobStatusesJob, uint64, error) {
	high := job.ModifyIndex
	js := structs.JobStatusesJob{
		NamespacedID: structs.NamespacedID{Namespace: job.Namespace, ID: job.ID},
		Name:         job.Name,
		Type:         job.Type,
		NodePool:     job.NodePool,
		Datacenters:  job.Datacenters,
		Priority:     job.Priority,
		Version:      job.Version,
		SubmitTime:   job.SubmitTime,
		ModifyIndex:  job.ModifyIndex,
		ParentID:     job.ParentID,
		Stop:         job.Stop,
		Status:       job.Status,
	}
	_, js.IsPack = job.Meta["pack.name"]
	for _, tg := range job.TaskGroups {
		js.GroupCountSum += tg.Count
	}
	if job.IsPeriodic() || job.IsParameterized() {
		js.ChildStatuses = []string{}
		for _, c := range all {
			if c.Namespace == job.Namespace && c.ParentID == job.ID {
				js.ChildStatuses = append(js.ChildStatuses, c.Status)
				high = max(high, c.ModifyIndex)
			}
		}
		return js, high, nil
	}
	allocs, err := st.AllocsByJob(ws, job.Namespace, job.ID, true)
	if err != nil {
		return js, 0, err
	}
	for _, a := range allocs {
		sa := structs.JobStatusesAlloc{
			ID:             a.ID,
			Group:          a.TaskGroup,
			ClientStatus:   a.ClientStatus,
			NodeID:         a.NodeID,
			FollowupEvalID: a.FollowupEvalID,
		}
		if a.Job != nil {
			sa.JobVersion = a.Job.Version
		}
		js.Allocs = append(js.Allocs, sa)
		high = max(high, a.ModifyIndex)
	}
	return js, high, nil
}
