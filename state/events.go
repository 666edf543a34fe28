package state

import (
	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// ChangeFeed receives the objects one committed write changed, with the
// write's Raft index. It runs inside the FSM's apply and must not block.
type ChangeFeed func(index uint64, changes memdb.Changes)

// SetChangeFeed makes every later write hand its committed changes to fn
// (nil: none, and changes are not tracked). Set it before the store takes
// writes.
func (s *StateStore) SetChangeFeed(fn ChangeFeed) { s.changeFeed = fn }

// eventTypes names the events of each Raft message type, as Nomad does;
// writes of other types produce no events.
var eventTypes = map[structs.MessageType]string{
	structs.NodeRegisterRequestType:                 structs.TypeNodeRegistration,
	structs.NodeDeregisterRequestType:               structs.TypeNodeDeregistration,
	structs.NodeBatchDeregisterRequestType:          structs.TypeNodeDeregistration,
	structs.NodeUpdateStatusRequestType:             structs.TypeNodeEvent,
	structs.NodeUpdateEligibilityRequestType:        structs.TypeNodeEligibilityUpdate,
	structs.NodeUpdateDrainRequestType:              structs.TypeNodeDrain,
	structs.BatchNodeUpdateDrainRequestType:         structs.TypeNodeDrain,
	structs.NodePoolUpsertRequestType:               structs.TypeNodePoolUpserted,
	structs.NodePoolDeleteRequestType:               structs.TypeNodePoolDeleted,
	structs.JobRegisterRequestType:                  structs.TypeJobRegistered,
	structs.JobDeregisterRequestType:                structs.TypeJobDeregistered,
	structs.JobBatchDeregisterRequestType:           structs.TypeJobBatchDeregistered,
	structs.EvalUpdateRequestType:                   structs.TypeEvalUpdated,
	structs.AllocClientUpdateRequestType:            structs.TypeAllocationUpdated,
	structs.AllocUpdateDesiredTransitionRequestType: structs.TypeAllocationUpdateDesiredStatus,
	structs.ApplyPlanResultsRequestType:             structs.TypePlanResult,
	structs.VarApplyStateRequestType:                structs.TypeVariableUpdated,
}

// EventsFromChanges turns the changes one Raft entry of type msgType made
// into event stream events; nil when the type produces none. Objects are
// copied where the event leaves something out (an alloc's Job, a node's
// SecretID, a variable's items), so stored objects stay untouched.
func EventsFromChanges(msgType structs.MessageType, index uint64, changes memdb.Changes) []structs.Event {
	typ, ok := eventTypes[msgType]
	if !ok {
		return nil
	}
	var events []structs.Event
	for _, c := range changes {
		ev, ok := eventFromChange(c)
		if !ok {
			continue
		}
		ev.Type = typ
		if msgType == structs.ApplyPlanResultsRequestType && evalStatusChange(c) {
			// A plan's entry also carries its scheduler's verdict on the
			// eval, and follow-up evals; they are announced as the eval
			// writes they replace were.
			ev.Type = structs.TypeEvalUpdated
		}
		ev.Index = index
		events = append(events, ev)
	}
	return events
}

// evalStatusChange reports whether the change creates an eval or moves
// one to another status.
func evalStatusChange(c memdb.Change) bool {
	after, ok := c.After.(*structs.Evaluation)
	if !ok {
		return false
	}
	before, _ := c.Before.(*structs.Evaluation)
	return before == nil || before.Status != after.Status
}

func eventFromChange(c memdb.Change) (structs.Event, bool) {
	obj := c.After
	if c.Deleted() {
		obj = c.Before
	}
	switch o := obj.(type) {
	case *structs.Job:
		if c.Table != TableJobs {
			return structs.Event{}, false // job versions
		}
		return structs.Event{Topic: structs.TopicJob, Key: o.ID, Namespace: o.Namespace,
			Payload: &structs.JobEvent{Job: o, Deleted: c.Deleted()}}, true
	case *structs.Evaluation:
		if c.Deleted() {
			return structs.Event{}, false
		}
		return structs.Event{Topic: structs.TopicEvaluation, Key: o.ID, Namespace: o.Namespace,
			FilterKeys: []string{o.JobID, o.DeploymentID},
			Payload:    &structs.EvaluationEvent{Evaluation: o}}, true
	case *structs.Allocation:
		if c.Deleted() {
			return structs.Event{}, false
		}
		a := *o
		a.Job = nil
		ev := &structs.AllocationEvent{Allocation: &a}
		if a.ClientStatus == structs.AllocClientStatusComplete && a.ClientDescription == structs.AllocTimeoutReasonMaxRunDuration {
			ev.Timeout = true
			ev.TimeoutReason = a.ClientDescription
		}
		ev.TimeoutWarning = a.MaxRunWarningSent()
		return structs.Event{Topic: structs.TopicAllocation, Key: o.ID, Namespace: o.Namespace,
			FilterKeys: []string{o.JobID, ""}, Payload: ev}, true
	case *structs.Node:
		n := *o
		n.SecretID = ""
		return structs.Event{Topic: structs.TopicNode, Key: o.ID, Payload: &structs.NodeStreamEvent{Node: &n}}, true
	case *structs.NodePool:
		return structs.Event{Topic: structs.TopicNodePool, Key: o.Name, Payload: &structs.NodePoolEvent{NodePool: o}}, true
	case *structs.VariableEncrypted:
		meta := o.VariableMetadata.Copy()
		return structs.Event{Topic: structs.TopicVariable, Key: o.Path, Namespace: o.Namespace,
			Payload: &structs.VariableEvent{Variable: &meta, Deleted: c.Deleted()}}, true
	}
	return structs.Event{}, false
}
