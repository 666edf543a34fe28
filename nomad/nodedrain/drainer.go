package nodedrain

import (
	"context"
	"sort"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Writer commits the drainer's decisions; the server's is Raft, tests
// write to a state store directly.
type Writer interface {
	// MarkMigrate sets DesiredTransition.Migrate on allocations and
	// writes the evals that move them, in one entry.
	MarkMigrate(req *structs.AllocUpdateDesiredTransitionRequest) error
	// CompleteDrains ends the drains of nodes.
	CompleteDrains(req *structs.BatchNodeUpdateDrainRequest) error
}

// Drainer is the leader's drain loop. It holds nothing of its own:
// every drain, its deadline included, is in state, so a new leader picks
// up where the old one stopped. It sleeps on memdb watch sets over the
// nodes and allocations it decided from, and on a timer for the next
// deadline, and never polls.
type Drainer struct {
	logger hclog.Logger
	state  func() *state.StateStore
	writer Writer
	now    func() time.Time
}

// New returns a Drainer that reads the current state store from state,
// commits through w and tells the time with now.
func New(logger hclog.Logger, state func() *state.StateStore, w Writer, now func() time.Time) *Drainer {
	return &Drainer{logger: logger, state: state, writer: w, now: now}
}

// drainRetry is how long the drainer waits after a failed write.
const drainRetry = time.Second

// Run drains until ctx ends.
func (d *Drainer) Run(ctx context.Context) {
	for ctx.Err() == nil {
		st := d.state()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		now := d.now()
		plan, err := planDrains(ws, st, now)
		if err == nil {
			err = d.commit(plan, now)
		}
		var wake time.Time
		if err != nil {
			d.logger.Error("node drain step failed; retrying", "error", err, "retry_in", drainRetry)
			wake = now.Add(drainRetry)
		} else {
			wake = plan.wake
		}
		d.wait(ctx, ws, wake, now)
	}
}

// wait blocks until something the last plan read changes, wake comes, or
// ctx ends.
func (d *Drainer) wait(ctx context.Context, ws memdb.WatchSet, wake, now time.Time) {
	wctx := ctx
	if !wake.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, max(wake.Sub(now), 0))
		defer cancel()
	}
	_ = ws.WatchCtx(wctx)
}

// commit writes a plan: first the migrations with one eval per job, then
// the completed drains.
func (d *Drainer) commit(p *drainPlan, now time.Time) error {
	if len(p.migrate) > 0 {
		req := &structs.AllocUpdateDesiredTransitionRequest{Allocs: make(map[string]*structs.DesiredTransition, len(p.migrate))}
		seen := make(map[structs.NamespacedID]bool)
		for _, a := range p.migrate {
			req.Allocs[a.ID] = &structs.DesiredTransition{Migrate: new(true)}
			key := structs.NamespacedID{Namespace: a.Namespace, ID: a.JobID}
			if seen[key] || a.Job == nil {
				continue
			}
			seen[key] = true
			req.Evals = append(req.Evals, drainEval(a.Job, a.NodeID, now))
		}
		if err := d.writer.MarkMigrate(req); err != nil {
			return err
		}
		d.logger.Info("allocations marked for migration", "count", len(p.migrate), "evals", len(req.Evals))
	}
	if len(p.complete) == 0 {
		return nil
	}
	req := &structs.BatchNodeUpdateDrainRequest{
		Updates:    make(map[string]*structs.DrainUpdate, len(p.complete)),
		NodeEvents: make(map[string]*structs.NodeEvent, len(p.complete)),
		UpdatedAt:  now.Unix(),
	}
	ids := make([]string, 0, len(p.complete))
	for id, deadlined := range p.complete {
		ids = append(ids, id)
		req.Updates[id] = &structs.DrainUpdate{}
		e := &structs.NodeEvent{Subsystem: structs.NodeEventSubsystemDrain, Message: structs.NodeEventDrainComplete, Timestamp: now}
		if deadlined {
			e.Details = map[string]string{structs.NodeEventDetailDeadlined: "true"}
		}
		req.NodeEvents[id] = e
	}
	if err := d.writer.CompleteDrains(req); err != nil {
		return err
	}
	sort.Strings(ids)
	d.logger.Info("node drains complete", "nodes", ids)
	return nil
}

// drainEval is the eval that moves a job's allocations off a draining
// node.
func drainEval(job *structs.Job, nodeID string, now time.Time) *structs.Evaluation {
	return &structs.Evaluation{
		ID:             structs.GenerateUUID(),
		Namespace:      job.Namespace,
		Priority:       job.Priority,
		Type:           job.Type,
		TriggeredBy:    structs.EvalTriggerNodeDrain,
		JobID:          job.ID,
		JobModifyIndex: job.JobModifyIndex,
		NodeID:         nodeID,
		Status:         structs.EvalStatusPending,
		CreateTime:     now.UnixNano(),
		ModifyTime:     now.UnixNano(),
	}
}
