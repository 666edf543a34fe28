package nomad

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// dispatchMu serializes dispatches that carry an idempotency token, so
// that two concurrent dispatches with the same token cannot both create a
// child between the check and the write.
var dispatchMu sync.Mutex

// Dispatch creates a child of a parameterized job with the given payload
// and meta, and its job-register eval in the same Raft entry. Dispatched
// children are job-register evals of their own jobs, so they go through
// the batch queue like any registration. A dispatch with an idempotency
// token that a live child already carries returns that child.
func (j *Job) Dispatch(args *structs.JobDispatchRequest, reply *structs.JobDispatchResponse) error {
	if done, err := j.srv.forward("Job.Dispatch", args.WriteRequest, args, reply); done {
		return err
	}
	ns := namespaceOf(args.Namespace)
	st := j.srv.State()
	if exists, err := st.NamespaceByName(nil, ns); err != nil {
		return err
	} else if exists == nil {
		return structs.NewBadRequestf("job %q is in nonexistent namespace %q", args.JobID, ns)
	}
	parent, err := st.JobByID(nil, ns, args.JobID)
	if err != nil {
		return err
	}
	if parent == nil {
		return structs.NewErrNotFoundf("parameterized job %q not found", args.JobID)
	}
	if err := validateDispatch(parent, args); err != nil {
		return err
	}

	if args.IdempotencyToken != "" {
		dispatchMu.Lock()
		defer dispatchMu.Unlock()
		children, err := st.JobsByIDPrefix(nil, ns, parent.ID+structs.DispatchLaunchSuffix)
		if err != nil {
			return err
		}
		for _, c := range children {
			if c.ParentID == parent.ID && c.DispatchIdempotencyToken == args.IdempotencyToken && !c.Stop {
				reply.DispatchedJobID = c.ID
				reply.JobCreateIndex = c.CreateIndex
				reply.Index = c.ModifyIndex
				return nil
			}
		}
	}

	now := time.Now()
	child := dispatchedChild(parent, args, now)
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   child.Namespace,
		Priority:    child.Priority,
		Type:        child.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       child.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now.UnixNano(),
		ModifyTime:  now.UnixNano(),
	}
	_, index, err := j.srv.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{
		Job:          child,
		Eval:         eval,
		WriteRequest: args.WriteRequest,
	})
	if err != nil {
		return structs.WrapRPCCodedf(err, "dispatch %q", parent.ID)
	}
	reply.DispatchedJobID = child.ID
	reply.EvalID = eval.ID
	reply.EvalCreateIndex = index
	reply.JobCreateIndex = index
	reply.Index = index
	return nil
}

// validateDispatch checks a dispatch against the parent's parameterized
// block. Its errors name the problem and are coded 400: the request is
// wrong, not the server.
func validateDispatch(parent *structs.Job, args *structs.JobDispatchRequest) error {
	if !parent.IsParameterized() {
		return structs.NewBadRequestf("Specified job %q is not a parameterized job", parent.ID)
	}
	if parent.Stop {
		return structs.NewBadRequestf("Specified job %q is stopped", parent.ID)
	}
	p := parent.ParameterizedJob
	n := len(args.Payload)
	switch {
	case n > structs.DispatchPayloadSizeLimit:
		return structs.NewBadRequestf("Payload exceeds maximum size: %d bytes > %d bytes (16 KiB)", n, structs.DispatchPayloadSizeLimit)
	case n > 0 && p.Payload == structs.DispatchPayloadForbidden:
		return structs.NewBadRequestf("Payload is not allowed: job %q has parameterized payload = %q", parent.ID, p.Payload)
	case n == 0 && p.Payload == structs.DispatchPayloadRequired:
		return structs.NewBadRequestf("Payload is required: job %q has parameterized payload = %q", parent.ID, p.Payload)
	}
	var missing, unpermitted []string
	for _, k := range p.MetaRequired {
		if _, ok := args.Meta[k]; !ok {
			missing = append(missing, k)
		}
	}
	for k := range args.Meta {
		if !slices.Contains(p.MetaRequired, k) && !slices.Contains(p.MetaOptional, k) {
			unpermitted = append(unpermitted, k)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return structs.NewBadRequestf("Dispatch did not provide required meta keys: %v", missing)
	}
	if len(unpermitted) > 0 {
		sort.Strings(unpermitted)
		allowed := append(slices.Clone(p.MetaRequired), p.MetaOptional...)
		sort.Strings(allowed)
		return structs.NewBadRequestf("Dispatch provided unpermitted meta keys: %v (allowed: %v)", unpermitted, allowed)
	}
	return nil
}

// dispatchedChild derives the child job of a dispatch: the parent with
// the payload, the merged meta and the dispatch markers.
func dispatchedChild(parent *structs.Job, args *structs.JobDispatchRequest, now time.Time) *structs.Job {
	child := parent.Copy()
	child.ID = fmt.Sprintf("%s%s%d-%s", parent.ID, structs.DispatchLaunchSuffix, now.Unix(), structs.GenerateUUID()[:8])
	child.Name = child.ID
	child.ParentID = parent.ID
	child.Dispatched = true
	child.DispatchIdempotencyToken = args.IdempotencyToken
	child.Payload = slices.Clone(args.Payload)
	child.Status = ""
	child.StatusDescription = ""
	child.SubmitTime = now.UnixNano()
	if len(args.Meta) > 0 {
		meta := make(map[string]string, len(parent.Meta)+len(args.Meta))
		maps.Copy(meta, parent.Meta)
		maps.Copy(meta, args.Meta)
		child.Meta = meta
	}
	return child
}
