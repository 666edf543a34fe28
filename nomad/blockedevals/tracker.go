package blockedevals

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/structs"
)

// Enqueuer accepts pending evals; evalbroker.Broker is one.
type Enqueuer interface {
	Enqueue(eval *structs.Evaluation)
}

// Requeuer is implemented by enqueuers that take a delivery token with
// each eval, as evalbroker.Broker.EnqueueAll does. Tracker uses it
// for evals reblocked by a worker that still holds them: with the token
// the broker enqueues the eval after that worker acks, where a plain
// Enqueue would drop it as a duplicate of the delivery in flight. A
// wrapper around the broker should forward it.
type Requeuer interface {
	EnqueueAll(evals map[*structs.Evaluation]string)
}

// ErrDisabled is returned by Reblock when the tracker is
// disabled because this server is not (or stops being) the leader.
var ErrDisabled = errors.New("blocked evals disabled")

// Stats is a snapshot of the blocked evals.
type Stats struct {
	// TotalBlocked counts every tracked eval, escaped and system ones
	// included.
	TotalBlocked int
	// TotalEscaped counts evals whose constraints cannot be expressed by
	// computed node class, which every unblock releases.
	TotalEscaped int
	// ByJob counts blocked evals per job: one, or one per node for system
	// jobs.
	ByJob map[structs.NamespacedID]int
}

// Tracker holds evals that could not place all their allocations
// until the cluster changes in a way that may let them: a node of a class
// they are eligible for becomes ready or eligible, or capacity is freed.
// It keeps at most one blocked eval per job (per job and node for system
// jobs); older ones are handed to the leader as duplicates to cancel. It
// lives only on the leader and in memory.
type Tracker struct {
	broker Enqueuer
	logger hclog.Logger

	mu      sync.Mutex
	enabled bool

	// captured evals are released by unblocks of classes they are eligible
	// for or have not seen; escaped ones by any unblock.
	captured map[string]blockedEval
	escaped  map[string]blockedEval
	jobs     map[structs.NamespacedID]string

	// system holds system and sysbatch evals blocked on one node, by node
	// and job; UnblockNode releases them.
	system map[string]map[structs.NamespacedID]blockedEval

	// classIndex and nodeIndex remember the latest unblock so that an eval
	// computed from an older snapshot is not blocked on a change it missed.
	// Entries older than unblockIndexTTL are pruned (pruneLocked), or the
	// maps would grow with every node and class ever seen in a term.
	classIndex map[string]unblockAt
	nodeIndex  map[string]unblockAt
	maxIndex   uint64
	lastPrune  time.Time
	// now is the clock the unblock times are read from.
	now func() time.Time

	duplicates []*structs.Evaluation
	dupAdded   chan struct{}
}

// Unblock indexes are remembered for unblockIndexTTL, as Nomad does: an
// eval is computed from a snapshot and blocked within seconds, so an
// unblock older than that cannot be one it missed. They are pruned at
// most every unblockPruneEvery, by the unblock that finds them due.
const (
	unblockIndexTTL   = 15 * time.Minute
	unblockPruneEvery = 5 * time.Minute
)

// unblockAt is the latest unblock of a class or node: its Raft index
// and when it was seen.
type unblockAt struct {
	index uint64
	at    time.Time
}

// blockedEval is a tracked eval and the delivery token it was reblocked
// under, if any.
type blockedEval struct {
	eval  *structs.Evaluation
	token string
}

// update returns be for an eval tracked as old with the same ID, keeping
// old's token when be has none.
func (old blockedEval) update(be blockedEval) blockedEval {
	if be.token == "" {
		be.token = old.token
	}
	return be
}

// New returns a disabled tracker that re-enqueues unblocked
// evals into broker.
func New(broker Enqueuer, logger hclog.Logger) *Tracker {
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	b := &Tracker{broker: broker, logger: logger.Named("blocked_evals"), now: time.Now}
	b.resetLocked()
	return b
}

// SetEnabled turns tracking on or off. Turning it off forgets every
// blocked eval, duplicate and unblock index, and releases GetDuplicates.
func (b *Tracker) SetEnabled(enabled bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.enabled = enabled
	if !enabled {
		close(b.dupAdded)
		b.resetLocked()
	}
}

// Enabled reports whether evals are tracked.
func (b *Tracker) Enabled() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.enabled
}

func (b *Tracker) resetLocked() {
	b.captured = make(map[string]blockedEval)
	b.escaped = make(map[string]blockedEval)
	b.jobs = make(map[structs.NamespacedID]string)
	b.system = make(map[string]map[structs.NamespacedID]blockedEval)
	b.classIndex = make(map[string]unblockAt)
	b.nodeIndex = make(map[string]unblockAt)
	b.maxIndex = 0
	b.lastPrune = b.now()
	b.duplicates = nil
	b.dupAdded = make(chan struct{})
}

// Block tracks an eval with status blocked until an unblock may let it
// place. It replaces an older blocked eval of the same job, which becomes
// a duplicate; if a newer one is tracked, eval itself is the duplicate.
// An eval that missed an unblock since its snapshot is enqueued at once.
func (b *Tracker) Block(eval *structs.Evaluation) {
	b.block(eval, "")
}

// Reblock is Block for an eval that a worker dequeued under token and
// found still blocked; the token lets the broker enqueue it after the
// worker acks if it is unblocked before then. If the eval is already
// tracked (the FSM blocked it when the update was applied), the token is
// added to it.
func (b *Tracker) Reblock(eval *structs.Evaluation, token string) error {
	switch {
	case eval == nil:
		return errors.New("reblock: evaluation is nil")
	case eval.Status != structs.EvalStatusBlocked:
		return fmt.Errorf("reblock evaluation %q: status is %q, want %q", eval.ID, eval.Status, structs.EvalStatusBlocked)
	case token == "":
		return fmt.Errorf("reblock evaluation %q: missing delivery token", eval.ID)
	}
	if !b.block(eval, token) {
		return fmt.Errorf("reblock evaluation %q: %w", eval.ID, ErrDisabled)
	}
	return nil
}

// block tracks or enqueues eval and reports whether the tracker was
// enabled.
func (b *Tracker) block(eval *structs.Evaluation, token string) bool {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return false
	}
	if eval == nil || eval.Status != structs.EvalStatusBlocked {
		b.mu.Unlock()
		return true
	}
	be := blockedEval{eval: eval, token: token}
	var missed bool
	if node := systemNode(eval); node != "" {
		missed = b.blockSystemLocked(node, be)
	} else {
		missed = b.blockJobLocked(be)
	}
	b.mu.Unlock()
	if missed {
		b.logger.Debug("eval missed an unblock, enqueuing it", "eval_id", eval.ID, "snapshot_index", eval.SnapshotIndex)
		b.enqueue([]blockedEval{be})
	}
	return true
}

// systemNode returns the node a system or sysbatch eval is blocked on, or
// "" for evals tracked per job and class.
func systemNode(eval *structs.Evaluation) string {
	if eval.Type == structs.JobTypeSystem || eval.Type == structs.JobTypeSysBatch {
		return eval.NodeID
	}
	return ""
}

// blockJobLocked tracks be by job and class, and reports whether it must
// be enqueued at once instead.
func (b *Tracker) blockJobLocked(be blockedEval) bool {
	eval := be.eval
	for _, set := range []map[string]blockedEval{b.captured, b.escaped} {
		if old, ok := set[eval.ID]; ok {
			set[eval.ID] = old.update(be)
			return false
		}
	}
	key := structs.NamespacedID{Namespace: eval.Namespace, ID: eval.JobID}
	if id, ok := b.jobs[key]; ok {
		old, ok := b.captured[id]
		if !ok {
			old = b.escaped[id]
		}
		if !supersedes(eval, old.eval) {
			b.addDuplicateLocked(eval)
			return false
		}
		delete(b.captured, id)
		delete(b.escaped, id)
		delete(b.jobs, key)
		b.addDuplicateLocked(old.eval)
	}
	if b.missedUnblockLocked(eval) {
		return true
	}
	if eval.EscapedComputedClass {
		b.escaped[eval.ID] = be
	} else {
		b.captured[eval.ID] = be
	}
	b.jobs[key] = eval.ID
	return false
}

// blockSystemLocked tracks be on its node, and reports whether it must be
// enqueued at once instead.
func (b *Tracker) blockSystemLocked(node string, be blockedEval) bool {
	eval := be.eval
	key := structs.NamespacedID{Namespace: eval.Namespace, ID: eval.JobID}
	byJob := b.system[node]
	if old, ok := byJob[key]; ok {
		if old.eval.ID == eval.ID {
			byJob[key] = old.update(be)
			return false
		}
		if !supersedes(eval, old.eval) {
			b.addDuplicateLocked(eval)
			return false
		}
		delete(byJob, key)
		b.addDuplicateLocked(old.eval)
	}
	if eval.SnapshotIndex < b.nodeIndex[node].index {
		return true
	}
	if byJob == nil {
		byJob = make(map[structs.NamespacedID]blockedEval)
		b.system[node] = byJob
	}
	byJob[key] = be
	return false
}

// supersedes reports whether blocked eval a is at least as recent as b,
// by the later of its creation and its snapshot.
func supersedes(a, b *structs.Evaluation) bool {
	return max(a.CreateIndex, a.SnapshotIndex) >= max(b.CreateIndex, b.SnapshotIndex)
}

// missedUnblockLocked reports whether an unblock the eval would have been
// released by happened after its snapshot.
func (b *Tracker) missedUnblockLocked(eval *structs.Evaluation) bool {
	if eval.EscapedComputedClass {
		return eval.SnapshotIndex < b.maxIndex
	}
	for class, u := range b.classIndex {
		if u.index <= eval.SnapshotIndex {
			continue
		}
		if eligible, seen := eval.ClassEligibility[class]; !seen || eligible {
			return true
		}
	}
	return false
}

func (b *Tracker) addDuplicateLocked(eval *structs.Evaluation) {
	b.logger.Debug("blocked eval superseded", "eval_id", eval.ID, "job_id", eval.JobID, "namespace", eval.Namespace)
	b.duplicates = append(b.duplicates, eval)
	close(b.dupAdded)
	b.dupAdded = make(chan struct{})
}

// GetDuplicates removes and returns the blocked evals superseded by a
// newer one of their job, waiting up to timeout for one when there are
// none. A timeout <= 0 does not wait. The leader cancels them.
func (b *Tracker) GetDuplicates(timeout time.Duration) []*structs.Evaluation {
	var deadline <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		deadline = t.C
	}
	for {
		b.mu.Lock()
		if len(b.duplicates) > 0 {
			out := b.duplicates
			b.duplicates = nil
			b.mu.Unlock()
			return out
		}
		added := b.dupAdded
		enabled := b.enabled
		b.mu.Unlock()
		if deadline == nil || !enabled {
			return nil
		}
		select {
		case <-added:
		case <-deadline:
			return nil
		}
	}
}

// Unblock releases the evals that may now place because a node of
// computedClass became ready or eligible, or freed capacity, at the given
// Raft index: every escaped eval, and every captured eval not marked
// ineligible for the class.
func (b *Tracker) Unblock(computedClass string, index uint64) {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return
	}
	now := b.now()
	if index > b.classIndex[computedClass].index {
		b.classIndex[computedClass] = unblockAt{index: index, at: now}
	}
	b.pruneLocked(now)
	b.maxIndex = max(b.maxIndex, index)
	out := b.releaseLocked(func(be blockedEval, escaped bool) bool {
		if escaped {
			return true
		}
		eligible, seen := be.eval.ClassEligibility[computedClass]
		return !seen || eligible
	})
	b.mu.Unlock()
	b.enqueue(out)
}

// pruneLocked forgets the unblock indexes older than unblockIndexTTL,
// once every unblockPruneEvery.
func (b *Tracker) pruneLocked(now time.Time) {
	if now.Sub(b.lastPrune) < unblockPruneEvery {
		return
	}
	b.lastPrune = now
	for _, m := range []map[string]unblockAt{b.classIndex, b.nodeIndex} {
		for k, u := range m {
			if now.Sub(u.at) > unblockIndexTTL {
				delete(m, k)
			}
		}
	}
}

// UnblockNode releases the system evals blocked on a node that became
// ready or eligible, or freed capacity, at the given Raft index.
func (b *Tracker) UnblockNode(nodeID string, index uint64) {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return
	}
	now := b.now()
	if index > b.nodeIndex[nodeID].index {
		b.nodeIndex[nodeID] = unblockAt{index: index, at: now}
	}
	b.pruneLocked(now)
	var out []blockedEval
	for _, be := range b.system[nodeID] {
		out = append(out, be)
	}
	delete(b.system, nodeID)
	b.mu.Unlock()
	b.enqueue(out)
}

// UnblockFailed releases the evals blocked because the scheduler ran out
// of plan attempts; the leader calls it periodically.
func (b *Tracker) UnblockFailed() {
	b.mu.Lock()
	if !b.enabled {
		b.mu.Unlock()
		return
	}
	out := b.releaseLocked(func(be blockedEval, _ bool) bool {
		return be.eval.TriggeredBy == structs.EvalTriggerMaxPlans
	})
	for node, byJob := range b.system {
		for key, be := range byJob {
			if be.eval.TriggeredBy == structs.EvalTriggerMaxPlans {
				out = append(out, be)
				delete(byJob, key)
			}
		}
		if len(byJob) == 0 {
			delete(b.system, node)
		}
	}
	b.mu.Unlock()
	b.enqueue(out)
}

// releaseLocked stops tracking the captured and escaped evals that match
// and returns them.
func (b *Tracker) releaseLocked(match func(be blockedEval, escaped bool) bool) []blockedEval {
	var out []blockedEval
	for _, set := range []struct {
		evals   map[string]blockedEval
		escaped bool
	}{{b.captured, false}, {b.escaped, true}} {
		for id, be := range set.evals {
			if !match(be, set.escaped) {
				continue
			}
			out = append(out, be)
			delete(set.evals, id)
			delete(b.jobs, structs.NamespacedID{Namespace: be.eval.Namespace, ID: be.eval.JobID})
		}
	}
	return out
}

// Untrack forgets the blocked evals of a job, without reporting them as
// duplicates; the leader calls it when an eval for the job completes with
// every allocation placed.
func (b *Tracker) Untrack(namespace, jobID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.enabled {
		return
	}
	key := structs.NamespacedID{Namespace: namespace, ID: jobID}
	if id, ok := b.jobs[key]; ok {
		delete(b.captured, id)
		delete(b.escaped, id)
		delete(b.jobs, key)
	}
	for node, byJob := range b.system {
		delete(byJob, key)
		if len(byJob) == 0 {
			delete(b.system, node)
		}
	}
}

// enqueue hands released evals to the broker as pending copies, passing
// the reblock token along when the broker takes one. It runs without the
// lock so that the broker may call back into Tracker.
func (b *Tracker) enqueue(released []blockedEval) {
	if len(released) == 0 {
		return
	}
	b.logger.Debug("unblocking evals", "count", len(released))
	requeuer, canRequeue := b.broker.(Requeuer)
	var withToken map[*structs.Evaluation]string
	for _, be := range released {
		eval := be.eval.Copy()
		eval.Status = structs.EvalStatusPending
		if be.token != "" && canRequeue {
			if withToken == nil {
				withToken = make(map[*structs.Evaluation]string)
			}
			withToken[eval] = be.token
			continue
		}
		b.broker.Enqueue(eval)
	}
	if withToken != nil {
		requeuer.EnqueueAll(withToken)
	}
}

// Stats returns counts of the tracked evals.
func (b *Tracker) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Stats{
		TotalEscaped: len(b.escaped),
		ByJob:        make(map[structs.NamespacedID]int),
	}
	for _, set := range []map[string]blockedEval{b.captured, b.escaped} {
		for _, be := range set {
			s.ByJob[structs.NamespacedID{Namespace: be.eval.Namespace, ID: be.eval.JobID}]++
			s.TotalBlocked++
		}
	}
	for _, byJob := range b.system {
		for key := range byJob {
			s.ByJob[key]++
			s.TotalBlocked++
		}
	}
	return s
}
