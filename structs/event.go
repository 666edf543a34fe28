package structs

// Topic names a family of events on the event stream, with Nomad's names.
type Topic string

// Event stream topics nomadq produces. Deployment is accepted for Nomad
// clients that subscribe to it; nomadq creates no deployments, so it never
// carries an event.
const (
	TopicDeployment Topic = "Deployment"
	TopicEvaluation Topic = "Evaluation"
	TopicAllocation Topic = "Allocation"
	TopicJob        Topic = "Job"
	TopicNode       Topic = "Node"
	TopicNodePool   Topic = "NodePool"
	TopicVariable   Topic = "Variable"
	TopicAll        Topic = "*"
)

// StreamTopics are the topics a subscription may name, in the order error
// messages list them.
var StreamTopics = []Topic{TopicJob, TopicAllocation, TopicEvaluation, TopicNode, TopicNodePool, TopicVariable, TopicDeployment}

// Event types, with Nomad's names. The type says which kind of write
// produced the event; the topic says which object it carries.
const (
	TypeNodeRegistration              = "NodeRegistration"
	TypeNodeDeregistration            = "NodeDeregistration"
	TypeNodeEligibilityUpdate         = "NodeEligibility"
	TypeNodeDrain                     = "NodeDrain"
	TypeNodeEvent                     = "NodeStreamEvent"
	TypeNodePoolUpserted              = "NodePoolUpserted"
	TypeNodePoolDeleted               = "NodePoolDeleted"
	TypeAllocationUpdated             = "AllocationUpdated"
	TypeAllocationUpdateDesiredStatus = "AllocationUpdateDesiredStatus"
	TypeEvalUpdated                   = "EvaluationUpdated"
	TypeJobRegistered                 = "JobRegistered"
	TypeJobDeregistered               = "JobDeregistered"
	TypeJobBatchDeregistered          = "JobBatchDeregistered"
	TypePlanResult                    = "PlanResult"
	TypeVariableUpdated               = "VariableUpdated"
)

// AllocTimeoutReasonMaxRunDuration is the ClientDescription of an
// allocation its client stopped at its max_run_duration deadline; the
// event stream marks such allocations with Timeout.
const AllocTimeoutReasonMaxRunDuration = "allocation exceeded max_run_duration"

// Events is what one committed Raft entry produced: its index and the
// events of the objects it changed.
type Events struct {
	Index  uint64
	Events []Event
}

// Event is one changed object on the event stream. Key is the object's ID
// (a variable's path, a node pool's name); FilterKeys are further keys a
// subscriber may select it by (an alloc's or eval's job and deployment).
// Namespace is empty for objects outside namespaces (nodes, node pools).
type Event struct {
	Topic      Topic
	Type       string
	Key        string
	Namespace  string
	FilterKeys []string
	Index      uint64
	Payload    any
}

// JobEvent is the payload of the Job topic. Deleted is true when the job
// was purged.
type JobEvent struct {
	Job     *Job
	Deleted bool
}

// EvaluationEvent is the payload of the Evaluation topic.
type EvaluationEvent struct {
	Evaluation *Evaluation
}

// AllocationEvent is the payload of the Allocation topic. The alloc comes
// without its Job. Timeout and TimeoutReason mark an alloc that its client
// stopped at the max_run_duration deadline; TimeoutWarning one whose
// max_run_duration_warning signal was sent.
type AllocationEvent struct {
	Allocation     *Allocation
	Timeout        bool   `codec:",omitempty"`
	TimeoutReason  string `codec:",omitempty"`
	TimeoutWarning bool   `codec:",omitempty"`
}

// NodeStreamEvent is the payload of the Node topic; the node's SecretID is
// blanked, as Nomad does.
type NodeStreamEvent struct {
	Node *Node
}

// NodePoolEvent is the payload of the NodePool topic.
type NodePoolEvent struct {
	NodePool *NodePool
}

// VariableEvent is the payload of the Variable topic: the variable's
// metadata, never its items.
type VariableEvent struct {
	Variable *VariableMetadata
	Deleted  bool `codec:",omitempty"`
}
