package nomad

import (
	"net/http"
	"sort"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Scaling is the RPC endpoint of scaling policies. A policy lives in its
// task group's scaling block; these read them out of the stored jobs, so
// a policy appears, changes and disappears with its job.
type Scaling struct {
	srv *Server
}

// scalingPolicies lists the policies of the jobs in namespace ("*": all),
// each with the job's indexes, ordered by ID.
func scalingPolicies(ws memdb.WatchSet, st *state.StateStore, namespace, jobID string) ([]*structs.ScalingPolicy, error) {
	var jobs []*structs.Job
	var err error
	if namespace == "*" {
		jobs, err = st.Jobs(ws)
	} else {
		jobs, err = st.JobsByNamespace(ws, namespaceOf(namespace))
	}
	if err != nil {
		return nil, err
	}
	var out []*structs.ScalingPolicy
	for _, job := range jobs {
		if jobID != "" && job.ID != jobID {
			continue
		}
		for _, tg := range job.TaskGroups {
			if tg.Scaling == nil || tg.Scaling.ID == "" {
				continue
			}
			p := tg.Scaling.Copy()
			p.CreateIndex, p.ModifyIndex = job.CreateIndex, job.JobModifyIndex
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// ListPolicies lists scaling policies, optionally of one job and type.
func (sc *Scaling) ListPolicies(args *structs.ScalingPolicyListRequest, reply *structs.ScalingPolicyListResponse) error {
	if done, err := sc.srv.forward("Scaling.ListPolicies", args.QueryOptions, args, reply); done {
		return err
	}
	if args.Type != "" && args.Type != structs.ScalingPolicyTypeHorizontal {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "scaling policy type %q is not supported: only %q", args.Type, structs.ScalingPolicyTypeHorizontal)
	}
	a, _, err := sc.srv.ResolveACL(args.AuthToken)
	if err != nil {
		return err
	}
	return sc.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		policies, err := scalingPolicies(ws, st, args.Namespace, args.Job)
		if err != nil {
			return 0, err
		}
		reply.Policies = make([]*structs.ScalingPolicyListStub, 0, len(policies))
		for _, p := range policies {
			if !canListScalingPolicies(a, p.Target[structs.ScalingTargetNamespace]) {
				continue
			}
			reply.Policies = append(reply.Policies, p.Stub())
		}
		return maxIndex(st, state.TableJobs)
	})
}

// GetPolicy reads one policy by ID; Policy is nil when none has it.
func (sc *Scaling) GetPolicy(args *structs.ScalingPolicySpecificRequest, reply *structs.SingleScalingPolicyResponse) error {
	if done, err := sc.srv.forward("Scaling.GetPolicy", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := sc.srv.namespaceFilter(args.AuthToken, acl.NamespaceCapabilityReadScalingPolicy)
	if err != nil {
		return err
	}
	return sc.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		policies, err := scalingPolicies(ws, st, "*", "")
		if err != nil {
			return 0, err
		}
		// A policy is found only in the namespace the request names (or
		// "*"), and only where the caller may read policies: "*" passes
		// the rule when any namespace grants it, so the policy's own
		// namespace decides.
		reply.Policy = nil
		for _, p := range policies {
			ns := p.Target[structs.ScalingTargetNamespace]
			if p.ID == args.ID && (args.Namespace == "*" || ns == namespaceOf(args.Namespace)) && allow(ns) {
				reply.Policy = p
			}
		}
		return maxIndex(st, state.TableJobs)
	})
}

// canListScalingPolicies reports whether a may list the scaling policies
// of namespace ns: list-scaling-policies, or both list-jobs and read-job,
// as Nomad grants it.
func canListScalingPolicies(a *acl.ACL, ns string) bool {
	return a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityListScalingPolicies) ||
		a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityListJobs) && a.AllowNamespaceOperation(ns, acl.NamespaceCapabilityReadJob)
}

// scalingListRule: in one namespace the caller needs what
// canListScalingPolicies asks; over every namespace ("*") anyone may ask
// and the listing keeps the policies of the namespaces the token may
// list, an empty list for a token with none, as Nomad answers.
func scalingListRule(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	ns := aclNamespaceOf(args)
	if ns == acl.AllNamespaces {
		return nil
	}
	return allowIf(canListScalingPolicies(a, ns))
}
