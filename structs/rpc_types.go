package structs

import "time"

// RequestRegion returns the region a write is addressed to.
func (w WriteRequest) RequestRegion() string { return w.Region }

// IsRead is false: a write always goes to the leader.
func (w WriteRequest) IsRead() bool { return false }

// AllowStaleRead is false for writes.
func (w WriteRequest) AllowStaleRead() bool { return false }

// RequestRegion returns the region a read is addressed to.
func (q QueryOptions) RequestRegion() string { return q.Region }

// IsRead is true for queries.
func (q QueryOptions) IsRead() bool { return true }

// AllowStaleRead reports whether a follower may answer from its own state.
func (q QueryOptions) AllowStaleRead() bool { return q.AllowStale }

// Blocking-query bounds, as Nomad's.
const (
	MaxBlockingRPCQueryTime     = 300 * time.Second
	DefaultBlockingRPCQueryTime = 300 * time.Second
)

// GenericRequest is a read with no arguments.
type GenericRequest struct {
	QueryOptions
}

// GenericResponse is a write's answer.
type GenericResponse struct {
	WriteMeta
}

// JobRegisterResponse answers Job.Register.
type JobRegisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	Warnings        string
	QueryMeta
}

// JobDeregisterResponse answers Job.Deregister.
type JobDeregisterResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	JobModifyIndex  uint64
	QueryMeta
}

// JobSpecificRequest reads one job.
type JobSpecificRequest struct {
	JobID string
	All   bool
	QueryOptions
}

// SingleJobResponse answers Job.Get; Job is nil when not found.
type SingleJobResponse struct {
	Job *Job
	QueryMeta
}

// JobListRequest lists jobs.
type JobListRequest struct {
	QueryOptions
}

// JobListResponse answers Job.List.
type JobListResponse struct {
	Jobs []*JobListStub
	QueryMeta
}

// JobListStub is the list view of a job.
type JobListStub struct {
	ID                string
	ParentID          string
	Name              string
	Namespace         string
	Datacenters       []string
	NodePool          string
	Type              string
	Priority          int
	Periodic          bool
	ParameterizedJob  bool
	Stop              bool
	Status            string
	StatusDescription string
	JobSummary        *JobSummary
	Meta              map[string]string
	Version           uint64
	SubmitTime        int64
	CreateIndex       uint64
	ModifyIndex       uint64
	JobModifyIndex    uint64
}

// Stub returns the list view of the job with its summary.
func (j *Job) Stub(summary *JobSummary) *JobListStub {
	return &JobListStub{
		ID:                j.ID,
		ParentID:          j.ParentID,
		Name:              j.Name,
		Namespace:         j.Namespace,
		Datacenters:       j.Datacenters,
		NodePool:          j.NodePool,
		Type:              j.Type,
		Priority:          j.Priority,
		Periodic:          j.IsPeriodic(),
		ParameterizedJob:  j.IsParameterized(),
		Stop:              j.Stop,
		Status:            j.Status,
		StatusDescription: j.StatusDescription,
		JobSummary:        summary,
		Meta:              j.Meta,
		Version:           j.Version,
		SubmitTime:        j.SubmitTime,
		CreateIndex:       j.CreateIndex,
		ModifyIndex:       j.ModifyIndex,
		JobModifyIndex:    j.JobModifyIndex,
	}
}

// JobAllocationsResponse answers Job.Allocations.
type JobAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// JobEvaluationsResponse answers Job.Evaluations.
type JobEvaluationsResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// JobSummaryResponse answers Job.Summary.
type JobSummaryResponse struct {
	JobSummary *JobSummary
	QueryMeta
}

// EvalSpecificRequest reads one evaluation.
type EvalSpecificRequest struct {
	EvalID string
	QueryOptions
}

// SingleEvalResponse answers Eval.GetEval; Eval is nil when not found.
type SingleEvalResponse struct {
	Eval *Evaluation
	QueryMeta
}

// EvalListRequest lists evaluations.
type EvalListRequest struct {
	// FilterJobID and FilterEvalStatus keep only the evaluations of that
	// job and with that status (the `job` and `status` query parameters
	// that `nomad eval list -job/-status` sends).
	FilterJobID      string
	FilterEvalStatus string
	QueryOptions
}

// EvalListResponse answers Eval.List.
type EvalListResponse struct {
	Evaluations []*Evaluation
	QueryMeta
}

// EvalAllocationsResponse answers Eval.Allocations.
type EvalAllocationsResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// AllocSpecificRequest reads one allocation.
type AllocSpecificRequest struct {
	AllocID string
	QueryOptions
}

// SingleAllocResponse answers Alloc.GetAlloc; Alloc is nil when not found.
type SingleAllocResponse struct {
	Alloc *Allocation
	QueryMeta
}

// AllocsGetRequest reads several allocations by ID.
type AllocsGetRequest struct {
	AllocIDs []string
	QueryOptions
}

// AllocsGetResponse answers Alloc.GetAllocs.
type AllocsGetResponse struct {
	Allocs []*Allocation
	QueryMeta
}

// AllocListRequest lists allocations.
type AllocListRequest struct {
	// Resources adds each alloc's AllocatedResources to its stub
	// (?resources=true).
	Resources bool
	QueryOptions
}

// AllocListResponse answers Alloc.List.
type AllocListResponse struct {
	Allocations []*AllocListStub
	QueryMeta
}

// AllocListStub is the list view of an allocation.
type AllocListStub struct {
	ID                 string
	EvalID             string
	Name               string
	Namespace          string
	NodeID             string
	NodeName           string
	JobID              string
	JobType            string
	JobVersion         uint64
	TaskGroup          string
	DesiredStatus      string
	DesiredDescription string
	ClientStatus       string
	ClientDescription  string
	TaskStates         map[string]*TaskState
	FollowupEvalID     string
	RescheduleTracker  *RescheduleTracker
	CreateIndex        uint64
	ModifyIndex        uint64
	CreateTime         int64
	ModifyTime         int64
	// AllocatedResources is only set when the listing asks for it.
	AllocatedResources *AllocatedResources
}

// Stub returns the list view of the allocation.
func (a *Allocation) Stub() *AllocListStub {
	s := &AllocListStub{
		ID:                 a.ID,
		EvalID:             a.EvalID,
		Name:               a.Name,
		Namespace:          a.Namespace,
		NodeID:             a.NodeID,
		NodeName:           a.NodeName,
		JobID:              a.JobID,
		TaskGroup:          a.TaskGroup,
		DesiredStatus:      a.DesiredStatus,
		DesiredDescription: a.DesiredDescription,
		ClientStatus:       a.ClientStatus,
		ClientDescription:  a.ClientDescription,
		TaskStates:         a.TaskStates,
		FollowupEvalID:     a.FollowupEvalID,
		RescheduleTracker:  a.RescheduleTracker,
		CreateIndex:        a.CreateIndex,
		ModifyIndex:        a.ModifyIndex,
		CreateTime:         a.CreateTime,
		ModifyTime:         a.ModifyTime,
	}
	if a.Job != nil {
		s.JobType = a.Job.Type
		s.JobVersion = a.Job.Version
	}
	return s
}

// NodeUpdateResponse answers Node.Register and Node.UpdateStatus.
type NodeUpdateResponse struct {
	HeartbeatTTL    time.Duration
	EvalIDs         []string
	EvalCreateIndex uint64
	NodeModifyIndex uint64
	LeaderRPCAddr   string
	NumNodes        int32
	Servers         []*NodeServerInfo
	QueryMeta
}

// NodeServerInfo tells a client about a server it may use.
type NodeServerInfo struct {
	RPCAdvertiseAddr string
	Datacenter       string
}

// NodeSpecificRequest reads or acts on one node; SecretID authenticates
// the node's own client.
type NodeSpecificRequest struct {
	NodeID   string
	SecretID string
	QueryOptions
}

// SingleNodeResponse answers Node.GetNode; Node is nil when not found.
type SingleNodeResponse struct {
	Node *Node
	QueryMeta
}

// NodeListRequest lists nodes.
type NodeListRequest struct {
	QueryOptions
}

// NodeListResponse answers Node.List.
type NodeListResponse struct {
	Nodes []*NodeListStub
	QueryMeta
}

// NodeListStub is the list view of a node.
type NodeListStub struct {
	ID                    string
	Datacenter            string
	Name                  string
	NodeClass             string
	NodePool              string
	Version               string
	Drain                 bool
	SchedulingEligibility string
	Status                string
	StatusDescription     string
	Attributes            map[string]string
	Drivers               map[string]*DriverInfo
	LastDrain             *DrainMetadata
	CreateIndex           uint64
	ModifyIndex           uint64
}

// Stub returns the list view of the node.
func (n *Node) Stub() *NodeListStub {
	return &NodeListStub{
		ID:                    n.ID,
		Datacenter:            n.Datacenter,
		Name:                  n.Name,
		NodeClass:             n.NodeClass,
		NodePool:              n.NodePool,
		Version:               n.Attributes["nomad.version"],
		Drain:                 n.DrainStrategy != nil,
		SchedulingEligibility: n.SchedulingEligibility,
		LastDrain:             n.LastDrain,
		Status:                n.Status,
		StatusDescription:     n.StatusDescription,
		Attributes:            n.Attributes,
		Drivers:               n.Drivers,
		CreateIndex:           n.CreateIndex,
		ModifyIndex:           n.ModifyIndex,
	}
}

// NodeClientAllocsResponse answers Node.GetClientAllocs: the node's
// allocations with the index at which each last changed, so the client
// fetches only what moved.
type NodeClientAllocsResponse struct {
	Allocs map[string]uint64
	QueryMeta
}

// ServerMember is one server as serf sees it.
type ServerMember struct {
	Name        string
	Addr        string
	Port        uint16
	Tags        map[string]string
	Status      string
	ProtocolMin uint8
	ProtocolMax uint8
	ProtocolCur uint8
	DelegateMin uint8
	DelegateMax uint8
	DelegateCur uint8
}

// ServerMembersResponse answers Status.Members.
type ServerMembersResponse struct {
	ServerName   string
	ServerRegion string
	ServerDC     string
	Members      []*ServerMember
}

// SchedulerConfigurationResponse answers Operator.SchedulerGetConfiguration.
type SchedulerConfigurationResponse struct {
	SchedulerConfig *SchedulerConfiguration
	QueryMeta
}

// SchedulerSetConfigurationResponse answers
// Operator.SchedulerSetConfiguration; Updated is false when a CAS failed.
type SchedulerSetConfigurationResponse struct {
	Updated bool
	WriteMeta
}

// RequestNamespace is the namespace a write acts in ("default" when unset).
func (w WriteRequest) RequestNamespace() string {
	if w.Namespace == "" {
		return DefaultNamespace
	}
	return w.Namespace
}

// RequestToken is the caller's ACL secret.
func (w WriteRequest) RequestToken() string { return w.AuthToken }

// RequestNamespace is the namespace a read looks in ("default" when unset).
func (q QueryOptions) RequestNamespace() string {
	if q.Namespace == "" {
		return DefaultNamespace
	}
	return q.Namespace
}

// RequestToken is the caller's ACL secret.
func (q QueryOptions) RequestToken() string { return q.AuthToken }

// AllocStopRequest asks for one allocation to be stopped and placed again.
type AllocStopRequest struct {
	AllocID         string
	NoShutdownDelay bool
	Reschedule      bool
	WriteRequest
}

// AllocStopResponse answers Alloc.Stop with the eval that replaces the
// allocation.
type AllocStopResponse struct {
	EvalID string
	WriteMeta
}
