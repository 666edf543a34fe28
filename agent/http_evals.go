package agent

import (
	"net/http"
	"strconv"
	"time"

	"github.com/nomadq/nomadq/structs"
)

func (h *httpHandler) evalsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method == http.MethodDelete {
		return h.evalsDeleteRequest(w, r)
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	q := r.URL.Query()
	args := structs.EvalListRequest{FilterJobID: q.Get("job"), FilterEvalStatus: q.Get("status")}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.EvalListResponse
	if err := h.agent.rpc("Eval.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	evals := page(&args.QueryOptions, reply.Evaluations, func(e *structs.Evaluation) string { return e.ID }, &reply.QueryMeta)
	setMeta(w, &reply.QueryMeta)
	if evals == nil {
		evals = []*structs.Evaluation{}
	}
	return evals, nil
}

// evalWithRelated is an evaluation with the stubs of the evaluations
// linked to it (?related=true).
type evalWithRelated struct {
	*structs.Evaluation
	RelatedEvals []*evalStub
}

// evalStub is the list view of an evaluation in RelatedEvals.
type evalStub struct {
	ID                string
	Namespace         string
	Priority          int
	Type              string
	TriggeredBy       string
	JobID             string
	NodeID            string
	DeploymentID      string
	Status            string
	StatusDescription string
	WaitUntil         time.Time
	NextEval          string
	PreviousEval      string
	BlockedEval       string
	CreateIndex       uint64
	ModifyIndex       uint64
	CreateTime        int64
	ModifyTime        int64
}

func stubEval(e *structs.Evaluation) *evalStub {
	return &evalStub{
		ID: e.ID, Namespace: e.Namespace, Priority: e.Priority, Type: e.Type, TriggeredBy: e.TriggeredBy,
		JobID: e.JobID, NodeID: e.NodeID, DeploymentID: e.DeploymentID, Status: e.Status,
		StatusDescription: e.StatusDescription, WaitUntil: e.WaitUntil, NextEval: e.NextEval,
		PreviousEval: e.PreviousEval, BlockedEval: e.BlockedEval, CreateIndex: e.CreateIndex,
		ModifyIndex: e.ModifyIndex, CreateTime: e.CreateTime, ModifyTime: e.ModifyTime,
	}
}

func (h *httpHandler) evalSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	evalID, rest, err := pathID(r, "/v1/evaluation/")
	if err != nil {
		return nil, err
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	switch rest {
	case "":
		return h.evalGet(w, r, evalID)
	case "/allocations":
		args := structs.EvalSpecificRequest{EvalID: evalID}
		var reply structs.EvalAllocationsResponse
		if err := h.query(w, r, "Eval.Allocations", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		if reply.Allocations == nil {
			reply.Allocations = []*structs.AllocListStub{}
		}
		return reply.Allocations, nil
	}
	return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
}

func (h *httpHandler) evalGet(w http.ResponseWriter, r *http.Request, evalID string) (any, error) {
	args := structs.EvalSpecificRequest{EvalID: evalID}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	related := false
	if s := r.URL.Query().Get("related"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Failed to parse value of %q (%v) as a bool: %v", "related", s, err)
		}
		related = b
	}
	var reply structs.SingleEvalResponse
	if err := h.agent.rpc("Eval.Get", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	setMeta(w, &reply.QueryMeta)
	if reply.Eval == nil {
		return nil, codedErr(http.StatusNotFound, "eval not found")
	}
	if !related {
		return reply.Eval, nil
	}
	out := &evalWithRelated{Evaluation: reply.Eval, RelatedEvals: []*evalStub{}}
	jargs := structs.JobSpecificRequest{JobID: reply.Eval.JobID}
	jargs.QueryOptions = structs.QueryOptions{Region: args.Region, Namespace: reply.Eval.Namespace, AllowStale: true, AuthToken: args.AuthToken}
	var jreply structs.JobEvaluationsResponse
	if err := h.agent.rpc("Job.Evaluations", &jargs, &jreply); err != nil {
		return nil, rpcError(err)
	}
	out.RelatedEvals = relatedEvals(reply.Eval, jreply.Evaluations)
	return out, nil
}

// relatedEvals follows the NextEval, PreviousEval and BlockedEval links
// from e through the job's evaluations.
func relatedEvals(e *structs.Evaluation, all []*structs.Evaluation) []*evalStub {
	byID := make(map[string]*structs.Evaluation, len(all))
	for _, x := range all {
		byID[x.ID] = x
	}
	seen := map[string]bool{e.ID: true}
	queue := []*structs.Evaluation{e}
	out := []*evalStub{}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		links := []string{cur.NextEval, cur.PreviousEval, cur.BlockedEval}
		for _, x := range all {
			if x.PreviousEval == cur.ID || x.NextEval == cur.ID || x.BlockedEval == cur.ID {
				links = append(links, x.ID)
			}
		}
		for _, id := range links {
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			if x, ok := byID[id]; ok {
				out = append(out, stubEval(x))
				queue = append(queue, x)
			}
		}
	}
	return out
}
