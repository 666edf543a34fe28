package fsm

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/nomad/batchqueue"
	"github.com/nomadq/nomadq/nomad/blockedevals"
	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/nomad/inmemsnapshots"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// FSM applies committed Raft entries to the state store. It is the only
// writer of state. After writing evaluations it hands them to the
// leader's broker or blocked set, which are disabled (and ignore them) on
// followers; those hand-offs never block.
type FSM struct {
	logger  hclog.Logger
	blocked *blockedevals.Tracker
	broker  *evalbroker.Broker

	mu    sync.RWMutex
	state *state.StateStore

	// batchQueueFeed receives the batch queue rows each apply added; it
	// is set on every store the FSM builds, a restored one included.
	batchQueueFeed func([]*structs.BatchQueueEntry)

	// groupFallbacks counts the group commits that one failed entry sent
	// back to be applied one entry at a time.
	groupFallbacks atomic.Int64
	// groupedEntries counts the entries applied in a shared transaction.
	groupedEntries atomic.Int64

	// fault is set by the first committed entry that does not decode.
	fault fault

	eventPublisher
}

// New returns an FSM over an empty state store that hands evals to
// broker and blocked.
func New(logger hclog.Logger, blocked *blockedevals.Tracker, broker *evalbroker.Broker) (*FSM, error) {
	st, err := state.NewStateStore()
	if err != nil {
		return nil, err
	}
	f := &FSM{logger: logger.Named("fsm"), blocked: blocked, broker: broker, state: st}
	f.wireBatchQueue(st)
	f.wireEvents(st)
	return f, nil
}

// wireBatchQueue gives a store the batch queue's routing rule and feed;
// every store the FSM builds, a restored one included, gets them.
func (f *FSM) wireBatchQueue(st *state.StateStore) {
	st.SetBatchQueueRouter(batchqueue.Route)
	st.SetBatchQueueFeed(f.batchQueueFeed)
}

// SetBatchQueueFeed hands the rows each apply adds to the batch queue
// table to fn (the leader's queue, which drops them unless it runs).
// Call it before Raft starts.
func (f *FSM) SetBatchQueueFeed(fn func([]*structs.BatchQueueEntry)) {
	f.batchQueueFeed = fn
	f.wireBatchQueue(f.State())
}

// State returns the current state store; a restore replaces it.
func (f *FSM) State() *state.StateStore {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.state
}

// applyEntry applies one log entry (see Apply). An entry that does not
// decode is answered with an error matching ErrCorruptEntry; one that
// decodes but that a state rule refuses, with that rule's error.
func (f *FSM) applyEntry(l *raft.Log) any {
	if len(l.Data) == 0 {
		return nil
	}
	msgType := structs.MessageType(l.Data[0])
	ignorable := msgType&structs.IgnoreUnknownTypeFlag != 0
	msgType &^= structs.IgnoreUnknownTypeFlag
	buf := l.Data[1:]
	defer f.publishEvents(msgType, l.Index)
	switch msgType {
	case structs.NodeRegisterRequestType:
		return f.applyNodeRegister(buf, l.Index)
	case structs.NodeDeregisterRequestType:
		return f.applyNodeDeregister(buf, l.Index)
	case structs.NodeUpdateStatusRequestType:
		return f.applyNodeStatus(buf, l.Index)
	case structs.NodeUpdateEligibilityRequestType:
		return f.applyNodeEligibility(buf, l.Index)
	case structs.NodeUpdateDrainRequestType:
		return f.applyNodeDrain(buf, l.Index)
	case structs.BatchNodeUpdateDrainRequestType:
		return f.applyBatchNodeDrain(buf, l.Index)
	case structs.AllocUpdateDesiredTransitionRequestType:
		return f.applyAllocDesiredTransition(buf, l.Index)
	case structs.JobRegisterRequestType:
		return f.applyJobRegister(buf, l.Index)
	case structs.JobDeregisterRequestType:
		return f.applyJobDeregister(buf, l.Index)
	case structs.EvalUpdateRequestType:
		return f.applyEvalUpdate(buf, l.Index)
	case structs.EvalDeleteRequestType:
		return f.applyEvalDelete(buf, l.Index)
	case structs.AllocClientUpdateRequestType:
		return f.applyAllocClientUpdate(buf, l.Index)
	case structs.ApplyPlanResultsRequestType:
		return f.applyPlanResults(buf, l.Index)
	case structs.SchedulerConfigRequestType:
		return f.applySchedulerConfig(buf, l.Index)
	case structs.BatchQueueReleaseRequestType:
		return f.applyBatchQueueRelease(buf, l.Index)
	case structs.BatchQueueControlRequestType:
		return f.applyBatchQueueControl(buf, l.Index)
	case structs.BatchQueueUsageResetRequestType:
		return f.applyBatchQueueUsageReset(buf, l.Index)
	case structs.PeriodicLaunchRequestType:
		return f.applyPeriodicLaunch(buf, l.Index)
	case structs.RootKeyUpsertRequestType:
		return f.applyRootKeyUpsert(buf, l.Index)
	case structs.RootKeyDeleteRequestType:
		return f.applyRootKeyDelete(buf, l.Index)
	case structs.ACLPolicyUpsertRequestType, structs.ACLPolicyDeleteRequestType, structs.ACLTokenUpsertRequestType,
		structs.ACLTokenDeleteRequestType, structs.ACLTokenBootstrapRequestType, structs.OneTimeTokenUpsertRequestType,
		structs.OneTimeTokenDeleteRequestType, structs.OneTimeTokenExpireRequestType, structs.ACLRolesUpsertRequestType,
		structs.ACLRolesDeleteByIDRequestType:
		return f.applyACL(msgType, buf, l.Index)
	case structs.ACLAuthMethodsUpsertRequestType, structs.ACLAuthMethodsDeleteRequestType,
		structs.ACLBindingRulesUpsertRequestType, structs.ACLBindingRulesDeleteRequestType:
		return f.applyACLAuth(msgType, buf, l.Index)
	case structs.NamespaceUpsertRequestType:
		return f.applyNamespaceUpsert(buf, l.Index)
	case structs.NamespaceDeleteRequestType:
		return f.applyNamespaceDelete(buf, l.Index)
	case structs.NodePoolUpsertRequestType:
		return f.applyNodePoolUpsert(buf, l.Index)
	case structs.NodePoolDeleteRequestType:
		return f.applyNodePoolDelete(buf, l.Index)
	case structs.JobStabilityRequestType:
		return f.applyJobStability(buf, l.Index)
	case structs.ScalingEventRegisterRequestType:
		return f.applyScalingEvent(buf, l.Index)
	case structs.ReconcileJobSummariesRequestType:
		return f.applyReconcileJobSummaries(buf, l.Index)
	case structs.AutopilotRequestType:
		return f.applyAutopilotConfig(buf, l.Index)
	case structs.VarApplyStateRequestType:
		return f.applyVariable(buf, l.Index)
	case structs.ServiceRegistrationUpsertRequestType:
		return f.applyServiceRegistrationUpsert(buf, l.Index)
	case structs.ServiceRegistrationDeleteByIDRequestType:
		return f.applyServiceRegistrationDeleteByID(buf, l.Index)
	case structs.ServiceRegistrationDeleteByNodeIDRequestType:
		return f.applyServiceRegistrationDeleteByNodeID(buf, l.Index)
	}
	if ignorable {
		f.logger.Warn("ignoring unknown message type", "type", uint8(msgType), "index", l.Index)
		return nil
	}
	// A server that skipped an entry it cannot read would hold a state
	// no other server holds (one that knows the type, a newer version,
	// applies it), so this is a fault: Apply stops the FSM.
	return unknownType(msgType)
}

func decode[T any](buf []byte, msgType structs.MessageType) (*T, error) {
	var req T
	if err := structs.Decode(buf, &req); err != nil {
		return nil, notDecodable(msgType, err)
	}
	// A nil object decodes: the entry is well-formed and refused by
	// every server alike, as a state rule refuses one.
	if err := checkEntries(&req); err != nil {
		return nil, fmt.Errorf("fsm: decode %s: %w", msgType, err)
	}
	return &req, nil
}

func (f *FSM) applyNodeRegister(buf []byte, index uint64) any {
	req, err := decode[structs.NodeRegisterRequest](buf, structs.NodeRegisterRequestType)
	if err != nil {
		return err
	}
	if err := f.State().UpsertNode(index, req.Node); err != nil {
		return err
	}
	if req.Node.Status == structs.NodeStatusReady {
		f.blocked.Unblock(req.Node.ComputedClass, index)
	}
	return nil
}

func (f *FSM) applyNodeDeregister(buf []byte, index uint64) any {
	req, err := decode[structs.NodeDeregisterRequest](buf, structs.NodeDeregisterRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteNode(index, req.NodeIDs)
}

func (f *FSM) applyNodeStatus(buf []byte, index uint64) any {
	req, err := decode[structs.NodeUpdateStatusRequest](buf, structs.NodeUpdateStatusRequestType)
	if err != nil {
		return err
	}
	st := f.State()
	if err := st.UpdateNodeStatus(index, req.NodeID, req.Status, req.UpdatedAt, req.NodeEvent); err != nil {
		return err
	}
	if err := f.upsertEvals(index, req.Evals); err != nil {
		return err
	}
	if req.Status == structs.NodeStatusReady {
		if n, err := st.NodeByID(nil, req.NodeID); err == nil && n != nil {
			f.blocked.Unblock(n.ComputedClass, index)
		}
	}
	return nil
}

func (f *FSM) applyNodeEligibility(buf []byte, index uint64) any {
	req, err := decode[structs.NodeUpdateEligibilityRequest](buf, structs.NodeUpdateEligibilityRequestType)
	if err != nil {
		return err
	}
	st := f.State()
	if err := st.UpdateNodeEligibility(index, req.NodeID, req.Eligibility, req.UpdatedAt, req.NodeEvent); err != nil {
		return err
	}
	if err := f.upsertEvals(index, req.Evals); err != nil {
		return err
	}
	if req.Eligibility == structs.NodeSchedulingEligible {
		if n, err := st.NodeByID(nil, req.NodeID); err == nil && n != nil {
			f.blocked.Unblock(n.ComputedClass, index)
		}
	}
	return nil
}

func (f *FSM) applyJobRegister(buf []byte, index uint64) any {
	return f.alone(func(w *entryWriter) error { return f.jobRegister(w, buf, index) })
}

func (f *FSM) jobRegister(w *entryWriter, buf []byte, index uint64) error {
	req, err := decode[structs.JobRegisterRequest](buf, structs.JobRegisterRequestType)
	if err != nil {
		return err
	}
	if req.Eval != nil {
		req.Eval.JobModifyIndex = index
	}
	if err := w.UpsertJobWithSubmission(index, req.Job, req.Submission, req.Eval); err != nil {
		return err
	}
	if req.Eval != nil {
		f.routeEvals(w, []*structs.Evaluation{req.Eval})
	}
	return nil
}

func (f *FSM) applyJobDeregister(buf []byte, index uint64) any {
	req, err := decode[structs.JobDeregisterRequest](buf, structs.JobDeregisterRequestType)
	if err != nil {
		return err
	}
	st := f.State()
	if req.Purge {
		if err := st.DeleteJob(index, req.Namespace, req.JobID); err != nil {
			return err
		}
	} else {
		job, err := st.JobByID(nil, req.Namespace, req.JobID)
		if err != nil {
			return err
		}
		if job == nil {
			return fmt.Errorf("job %q %w", req.JobID, state.ErrNotFound)
		}
		stopped := job.Copy()
		stopped.Stop = true
		if err := st.UpsertJob(index, stopped); err != nil {
			return err
		}
	}
	f.blocked.Untrack(req.Namespace, req.JobID)
	if req.Eval != nil {
		return f.upsertEvals(index, []*structs.Evaluation{req.Eval})
	}
	return nil
}

func (f *FSM) applyEvalUpdate(buf []byte, index uint64) any {
	return f.alone(func(w *entryWriter) error { return f.evalUpdate(w, buf, index) })
}

func (f *FSM) evalUpdate(w *entryWriter, buf []byte, index uint64) error {
	req, err := decode[structs.EvalUpdateRequest](buf, structs.EvalUpdateRequestType)
	if err != nil {
		return err
	}
	return f.upsertEvalsVia(w, index, req.Evals)
}

// upsertEvals writes an entry's evals, when it has any, on their own
// and routes them to the leader's structures.
func (f *FSM) upsertEvals(index uint64, evals []*structs.Evaluation) error {
	if len(evals) == 0 {
		return nil
	}
	return f.alone(func(w *entryWriter) error { return f.upsertEvalsVia(w, index, evals) })
}

func (f *FSM) upsertEvalsVia(w *entryWriter, index uint64, evals []*structs.Evaluation) error {
	if err := w.UpsertEvals(index, evals); err != nil {
		return err
	}
	f.routeEvals(w, evals)
	return nil
}

// routeEvals hands the evals w's last write stored to the broker or the
// blocked set once the writes are visible; both are in-memory and
// disabled on followers, so this never blocks Raft. Where a pending eval
// goes was decided by that write: one it routed to the batch queue (or
// found held there) waits there, and only the others reach the broker.
func (f *FSM) routeEvals(w *entryWriter, evals []*structs.Evaluation) {
	for _, e := range evals {
		switch {
		case e.Status == structs.EvalStatusPending && w.Queued(e.ID):
			// Waits in the batch queue, which watches its table.
		case e.Status == structs.EvalStatusPending:
			w.after(func() { f.broker.Enqueue(e) })
		case e.Status == structs.EvalStatusBlocked:
			w.after(func() { f.blocked.Block(e) })
		case e.Status == structs.EvalStatusComplete && len(e.FailedTGAllocs) == 0:
			w.after(func() { f.blocked.Untrack(e.Namespace, e.JobID) })
		}
	}
}

func (f *FSM) applyEvalDelete(buf []byte, index uint64) any {
	req, err := decode[structs.EvalDeleteRequest](buf, structs.EvalDeleteRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteEval(index, req.Evals, req.Allocs)
}

func (f *FSM) applyAllocClientUpdate(buf []byte, index uint64) any {
	return f.alone(func(w *entryWriter) error { return f.allocClientUpdate(w, buf, index) })
}

func (f *FSM) allocClientUpdate(w *entryWriter, buf []byte, index uint64) error {
	req, err := decode[structs.AllocUpdateRequest](buf, structs.AllocClientUpdateRequestType)
	if err != nil {
		return err
	}
	if err := w.UpdateAllocsFromClient(index, req.Alloc); err != nil {
		return err
	}
	if len(req.Evals) > 0 {
		if err := f.upsertEvalsVia(w, index, req.Evals); err != nil {
			return err
		}
	}
	// A finished alloc frees capacity on its node: evals blocked on that
	// node's class may fit now.
	w.after(func() {
		st := f.State()
		unblocked := make(map[string]bool)
		for _, a := range req.Alloc {
			if !a.ClientTerminalStatus() || unblocked[a.NodeID] {
				continue
			}
			unblocked[a.NodeID] = true
			if n, err := st.NodeByID(nil, a.NodeID); err == nil && n != nil {
				f.blocked.Unblock(n.ComputedClass, index)
			}
		}
	})
	return nil
}

func (f *FSM) applyPlanResults(buf []byte, index uint64) any {
	return f.alone(func(w *entryWriter) error { return f.planResults(w, buf, index) })
}

func (f *FSM) planResults(w *entryWriter, buf []byte, index uint64) error {
	req, err := decode[structs.ApplyPlanResultsRequest](buf, structs.ApplyPlanResultsRequestType)
	if err != nil {
		return err
	}
	if err := w.UpsertPlanResults(index, req); err != nil {
		return err
	}
	f.routeEvals(w, req.Evals)
	return nil
}

// applySchedulerConfig writes the configuration; one that switches the
// batch queue off drains the queue in the same transaction, and the evals
// that waited in it go to the broker at once.
func (f *FSM) applySchedulerConfig(buf []byte, index uint64) any {
	req, err := decode[structs.SchedulerSetConfigRequest](buf, structs.SchedulerConfigRequestType)
	if err != nil {
		return err
	}
	var released []*structs.Evaluation
	if req.CAS {
		var ok bool
		ok, released, err = f.State().SchedulerCASConfig(index, req.Config.ModifyIndex, &req.Config)
		if err != nil {
			return err
		}
		f.enqueue(released)
		return ok
	}
	released, err = f.State().SchedulerSetConfig(index, &req.Config)
	if err != nil {
		return err
	}
	f.enqueue(released)
	return nil
}

// enqueue hands evals to the broker (a no-op on followers).
func (f *FSM) enqueue(evals []*structs.Evaluation) {
	for _, e := range evals {
		f.broker.Enqueue(e)
	}
}

// Snapshot captures the state for Raft; it is written out later, off the
// apply path.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	if err := f.errFaulted(); err != nil {
		return nil, err
	}
	snap, err := f.State().Snapshot()
	if err != nil {
		return nil, err
	}
	return &snapshot{snap: snap}, nil
}

// Restore replaces the state with a snapshot's. Blocking queries on the old
// store are woken through its abandon channel.
func (f *FSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	if err := f.errFaulted(); err != nil {
		return err
	}
	start := time.Now()
	st, err := state.RestoreFrom(r)
	if err != nil {
		return fmt.Errorf("fsm: restore snapshot: %w", err)
	}
	f.wireBatchQueue(st)
	f.wireEvents(st)
	f.restoredEvents(st)
	f.mu.Lock()
	old := f.state
	f.state = st
	f.mu.Unlock()
	old.Abandon()
	f.logger.Info("restored state from snapshot", "took", time.Since(start))
	return nil
}

// snapshot is a state snapshot Raft writes out off the apply path.
type snapshot struct {
	snap *state.StateSnapshot
}

// Persist writes the snapshot to sink.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if d, ok := sink.(inmemsnapshots.DeferringSink); ok {
		// A dev server's store: encode only if the snapshot is read. The
		// state snapshot is immutable, so encoding it later writes the
		// same bytes as now.
		if err := d.Defer(s.snap.WriteTo); err != nil {
			_ = sink.Cancel()
			return err
		}
		return sink.Close()
	}
	if _, err := s.snap.WriteTo(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release is a no-op: the state snapshot holds no resources.
func (s *snapshot) Release() {}
