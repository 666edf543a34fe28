package nomad

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-hclog"
	memdb "github.com/hashicorp/go-memdb"
	"github.com/nomadq/nomadq/nomad/periodicschedule"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// periodicLauncher stores one periodic launch (child job, its eval and the
// parent's launch record) and returns the index it was written at. The
// server's launcher goes through Raft; tests write the state store.
type periodicLauncher interface {
	LaunchPeriodic(req *structs.PeriodicLaunchRequest) (uint64, error)
}

// periodicDispatcher is the leader's clock for periodic jobs. It is
// stateless across leaderships: each pass reads the periodic jobs and
// their persisted launch records and decides with
// periodicschedule.Decide, so a new leader resumes the schedule where the
// old one stopped, with at most one catch-up launch. It waits on a timer
// for the next launch and on a memdb watch set for changes to periodic
// jobs and launch records.
type periodicDispatcher struct {
	logger   hclog.Logger
	state    func() *state.StateStore
	launcher periodicLauncher

	// skipped holds, per job, the last launch skipped because of
	// prohibit_overlap, so that the schedule moves past it. It is leader
	// memory only: a new leader may launch once for a skipped tick once the
	// running child has finished.
	skipped map[structs.NamespacedID]time.Time
}

func newPeriodicDispatcher(logger hclog.Logger, st func() *state.StateStore, l periodicLauncher) *periodicDispatcher {
	return &periodicDispatcher{
		logger:   logger.Named("periodic"),
		state:    st,
		launcher: l,
		skipped:  make(map[structs.NamespacedID]time.Time),
	}
}

// run launches periodic children until ctx ends (leadership is lost).
func (d *periodicDispatcher) run(ctx context.Context) {
	for {
		st := d.state()
		ws := memdb.NewWatchSet()
		ws.Add(st.AbandonCh())
		wake, err := d.pass(st, ws, time.Now())
		if err != nil {
			d.logger.Error("periodic dispatch pass failed", "error", err)
			wake = time.Now().Add(5 * time.Second)
		}
		var timer *time.Timer
		var timerC <-chan time.Time
		if !wake.IsZero() {
			timer = time.NewTimer(time.Until(wake))
			timerC = timer.C
		}
		wctx, cancel := context.WithCancel(ctx)
		select {
		case <-ctx.Done():
		case <-ws.WatchCh(wctx):
		case <-timerC:
		}
		cancel()
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// pass launches every child that is due at now and returns when the next
// launch of any job is due (zero: none scheduled).
func (d *periodicDispatcher) pass(st *state.StateStore, ws memdb.WatchSet, now time.Time) (time.Time, error) {
	jobs, err := st.PeriodicJobs(ws)
	if err != nil {
		return time.Time{}, err
	}
	launches, err := st.PeriodicLaunches(ws)
	if err != nil {
		return time.Time{}, err
	}
	last := make(map[structs.NamespacedID]int64, len(launches))
	for _, l := range launches {
		last[structs.NamespacedID{Namespace: l.Namespace, ID: l.ID}] = l.Launch
	}
	live := make(map[structs.NamespacedID]bool, len(jobs))
	var wake time.Time
	for _, job := range jobs {
		if job.Stop || job.Periodic == nil || !job.Periodic.Enabled {
			continue
		}
		key := structs.NamespacedID{Namespace: job.Namespace, ID: job.ID}
		live[key] = true
		// The schedule resumes after the last launch, a skipped launch or
		// the job's (re)submission, whichever is latest.
		anchor := time.Unix(0, max(last[key], job.SubmitTime))
		if s := d.skipped[key]; s.After(anchor) {
			anchor = s
		}
		w := d.dispatchJob(st, job, anchor, now)
		if !w.IsZero() && (wake.IsZero() || w.Before(wake)) {
			wake = w
		}
	}
	for key := range d.skipped {
		if !live[key] {
			delete(d.skipped, key)
		}
	}
	return wake, nil
}

// dispatchJob launches (or skips) the job's due child, if any, and
// returns when the job is next due.
func (d *periodicDispatcher) dispatchJob(st *state.StateStore, job *structs.Job, anchor, now time.Time) time.Time {
	key := structs.NamespacedID{Namespace: job.Namespace, ID: job.ID}
	step, err := periodicschedule.Decide(job.Periodic, anchor, now)
	if err != nil {
		d.logger.Error("cannot compute next launch", "job", job.ID, "namespace", job.Namespace, "error", err)
		return time.Time{}
	}
	if !step.Launch {
		return step.Wake
	}
	switch running, err := periodicChildRunning(st, job); {
	case err != nil:
		d.logger.Error("cannot list periodic children", "job", job.ID, "error", err)
		d.skipped[key] = step.At
	case running && job.Periodic.ProhibitOverlap:
		d.logger.Debug("skipping periodic launch: a previous child is still running", "job", job.ID, "launch", step.At)
		d.skipped[key] = step.At
	default:
		req := newPeriodicLaunch(job, step.At, now)
		if _, err := d.launcher.LaunchPeriodic(req); err != nil {
			d.logger.Error("periodic launch failed", "job", job.ID, "launch", step.At, "error", err)
			d.skipped[key] = step.At
		} else {
			d.logger.Debug("launched periodic child", "job", job.ID, "child", req.Job.ID)
		}
	}
	next, err := periodicschedule.Next(job.Periodic, step.At)
	if err != nil {
		return time.Time{}
	}
	return next
}

// periodicChildRunning reports whether a child the job launched is not
// dead yet.
func periodicChildRunning(st *state.StateStore, job *structs.Job) (bool, error) {
	children, err := st.JobsByIDPrefix(nil, job.Namespace, job.ID+structs.PeriodicLaunchSuffix)
	if err != nil {
		return false, err
	}
	for _, c := range children {
		if c.ParentID == job.ID && c.Status != structs.JobStatusDead {
			return true, nil
		}
	}
	return false, nil
}

// newPeriodicLaunch builds the Raft message that launches parent's child
// for the launch time at: the child job, its periodic-job eval and the
// parent's new launch record.
func newPeriodicLaunch(parent *structs.Job, at, now time.Time) *structs.PeriodicLaunchRequest {
	child := parent.Copy()
	child.ID = structs.PeriodicChildID(parent.ID, at.Unix())
	child.Name = child.ID
	child.ParentID = parent.ID
	child.Periodic = nil
	child.Status = ""
	child.StatusDescription = ""
	child.Stop = false
	child.SubmitTime = now.UnixNano()
	eval := &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   child.Namespace,
		Priority:    child.Priority,
		Type:        child.Type,
		TriggeredBy: structs.EvalTriggerPeriodicJob,
		JobID:       child.ID,
		Status:      structs.EvalStatusPending,
		CreateTime:  now.UnixNano(),
		ModifyTime:  now.UnixNano(),
	}
	return &structs.PeriodicLaunchRequest{
		Job:    child,
		Eval:   eval,
		Launch: &structs.PeriodicLaunch{ID: parent.ID, Namespace: parent.Namespace, Launch: at.UnixNano()},
	}
}

// raftPeriodicLauncher launches through the server's Raft log.
type raftPeriodicLauncher struct{ srv *Server }

// LaunchPeriodic implements periodicLauncher.
func (l raftPeriodicLauncher) LaunchPeriodic(req *structs.PeriodicLaunchRequest) (uint64, error) {
	_, index, err := l.srv.raftApply(structs.PeriodicLaunchRequestType, req)
	if err != nil {
		return 0, fmt.Errorf("launch %q: %w", req.Job.ID, err)
	}
	return index, nil
}

// runPeriodicDispatcher is the leader loop of the periodic dispatcher.
func (s *Server) runPeriodicDispatcher(ctx context.Context) {
	newPeriodicDispatcher(s.logger, s.State, raftPeriodicLauncher{s}).run(ctx)
}
