package nomad

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// coreScheduler runs the server's own `_core` evals: garbage collection of
// old terminal evals, allocs, dead jobs and down nodes. Its deletions go
// through Raft like any write.
type coreScheduler struct {
	srv  *Server
	snap *state.StateSnapshot
	now  time.Time

	// releaseMemory asks the worker to hand freed memory back to the OS
	// once it has let go of the eval's snapshot (see worker.process).
	releaseMemory bool
}

func newCoreScheduler(srv *Server, snap *state.StateSnapshot) *coreScheduler {
	return &coreScheduler{srv: srv, snap: snap, now: time.Now()}
}

// Process runs the GC that the eval's JobID names and completes the eval.
func (c *coreScheduler) Process(eval *structs.Evaluation) error {
	cfg := c.srv.config
	var err error
	switch eval.JobID {
	case structs.CoreJobEvalGC:
		err = c.evalGC(cfg.EvalGCThreshold, cfg.BatchEvalGCThreshold)
	case structs.CoreJobJobGC:
		err = c.jobGC(cfg.JobGCThreshold)
	case structs.CoreJobNodeGC:
		err = c.nodeGC(cfg.NodeGCThreshold)
	case structs.CoreJobForceGC:
		if err = c.jobGC(0); err == nil {
			if err = c.evalGC(0, 0); err == nil {
				err = c.nodeGC(0)
			}
		}
		// The operator asked for garbage to go: the memory the collected
		// jobs, evals and allocs held goes back to the OS now, not over
		// the minutes the runtime's scavenger would take. Not here: this
		// eval's snapshot still holds all of it.
		c.releaseMemory = err == nil
	default:
		err = fmt.Errorf("core scheduler cannot handle job %q", eval.JobID)
	}
	if err != nil {
		return err
	}
	done := eval.Copy()
	done.Status = structs.EvalStatusComplete
	done.ModifyTime = time.Now().UnixNano()
	_, _, err = c.srv.raftApply(structs.EvalUpdateRequestType, &structs.EvalUpdateRequest{Evals: []*structs.Evaluation{done}})
	return err
}

func (c *coreScheduler) olderThan(ns int64, threshold time.Duration) bool {
	return c.now.Sub(time.Unix(0, ns)) >= threshold
}

// evalGC deletes terminal evals older than the threshold whose allocs are
// all terminal too, with those allocs. Batch jobs' evals are kept longer so
// users can still see why a finished batch job ran as it did.
func (c *coreScheduler) evalGC(threshold, batchThreshold time.Duration) error {
	evals, err := c.snap.Evals(nil)
	if err != nil {
		return err
	}
	var evalIDs, allocIDs []string
	// The allocs of each job seen, by eval: reading them per eval would
	// read a job's allocs once per eval (there is no eval index), which
	// for a system job re-evaluated on every node update is evals x allocs.
	byEval := make(map[structs.NamespacedID]map[string][]*structs.Allocation)
	allocsOf := func(e *structs.Evaluation) (map[string][]*structs.Allocation, error) {
		key := structs.NamespacedID{Namespace: e.Namespace, ID: e.JobID}
		if m, ok := byEval[key]; ok {
			return m, nil
		}
		allocs, err := c.snap.AllocsByJob(nil, e.Namespace, e.JobID, true)
		if err != nil {
			return nil, err
		}
		m := make(map[string][]*structs.Allocation)
		for _, a := range allocs {
			m[a.EvalID] = append(m[a.EvalID], a)
		}
		byEval[key] = m
		return m, nil
	}
	for _, e := range evals {
		if e.Type == structs.JobTypeCore && e.Status == structs.EvalStatusPending {
			continue
		}
		t := threshold
		if e.Type == structs.JobTypeBatch || e.Type == structs.JobTypeSysBatch {
			t = batchThreshold
		}
		if !e.TerminalStatus() || !c.olderThan(e.ModifyTime, t) {
			continue
		}
		jobAllocs, err := allocsOf(e)
		if err != nil {
			return err
		}
		allocs := jobAllocs[e.ID]
		collectable := true
		var ids []string
		for _, a := range allocs {
			if !a.TerminalStatus() || !a.ClientTerminalStatus() && a.ClientStatus != structs.AllocClientStatusPending || !c.olderThan(a.ModifyTime, t) {
				collectable = false
				break
			}
			ids = append(ids, a.ID)
		}
		if !collectable {
			continue
		}
		evalIDs = append(evalIDs, e.ID)
		allocIDs = append(allocIDs, ids...)
	}
	return c.deleteEvals(evalIDs, allocIDs)
}

// deleteEvals writes the deletions in batches so no Raft entry grows huge.
func (c *coreScheduler) deleteEvals(evalIDs, allocIDs []string) error {
	const batch = 4096
	for len(evalIDs) > 0 || len(allocIDs) > 0 {
		ne, na := min(batch, len(evalIDs)), min(batch, len(allocIDs))
		req := &structs.EvalDeleteRequest{Evals: evalIDs[:ne], Allocs: allocIDs[:na]}
		if _, _, err := c.srv.raftApply(structs.EvalDeleteRequestType, req); err != nil {
			return err
		}
		evalIDs, allocIDs = evalIDs[ne:], allocIDs[na:]
	}
	return nil
}

// jobGC purges dead jobs whose evals and allocs are all terminal and older
// than the threshold, together with those evals and allocs.
func (c *coreScheduler) jobGC(threshold time.Duration) error {
	jobs, err := c.snap.Jobs(nil)
	if err != nil {
		return err
	}
	for _, job := range jobs {
		if job.Status != structs.JobStatusDead || job.IsPeriodic() || job.IsParameterized() {
			continue
		}
		evals, err := c.snap.EvalsByJob(nil, job.Namespace, job.ID)
		if err != nil {
			return err
		}
		allocs, err := c.snap.AllocsByJob(nil, job.Namespace, job.ID, true)
		if err != nil {
			return err
		}
		collectable := c.olderThan(job.SubmitTime, threshold)
		var evalIDs, allocIDs []string
		for _, e := range evals {
			if !e.TerminalStatus() || !c.olderThan(e.ModifyTime, threshold) {
				collectable = false
			}
			evalIDs = append(evalIDs, e.ID)
		}
		for _, a := range allocs {
			if !a.TerminalStatus() || !c.olderThan(a.ModifyTime, threshold) {
				collectable = false
			}
			allocIDs = append(allocIDs, a.ID)
		}
		if !collectable {
			continue
		}
		if err := c.deleteEvals(evalIDs, allocIDs); err != nil {
			return err
		}
		req := &structs.JobDeregisterRequest{JobID: job.ID, Purge: true}
		req.Namespace = job.Namespace
		if _, _, err := c.srv.raftApply(structs.JobDeregisterRequestType, req); err != nil {
			return err
		}
	}
	return nil
}

// nodeGC removes down nodes older than the threshold that hold no live
// allocations.
func (c *coreScheduler) nodeGC(threshold time.Duration) error {
	nodes, err := c.snap.Nodes(nil)
	if err != nil {
		return err
	}
	var ids []string
	for _, n := range nodes {
		if !n.TerminalStatus() || !c.olderThan(n.StatusUpdatedAt*int64(time.Second), threshold) {
			continue
		}
		allocs, err := c.snap.AllocsByNode(nil, n.ID)
		if err != nil {
			return err
		}
		live := false
		for _, a := range allocs {
			if !a.TerminalStatus() {
				live = true
				break
			}
		}
		if !live {
			ids = append(ids, n.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, _, err = c.srv.raftApply(structs.NodeDeregisterRequestType, &structs.NodeDeregisterRequest{NodeIDs: ids})
	return err
}
