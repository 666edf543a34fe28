package structs

import "maps"

// Raft message types of job history and scaling, numbered as Nomad's.
const (
	JobStabilityRequestType         MessageType = 18
	ScalingEventRegisterRequestType MessageType = 38
)

func init() {
	messageTypeNames[JobStabilityRequestType] = "JobStabilityRequestType"
	messageTypeNames[ScalingEventRegisterRequestType] = "ScalingEventRegisterRequestType"
}

// JobTrackedScalingEvents is how many scaling events are kept per task
// group, newest first.
const JobTrackedScalingEvents = 20

// Keys of a scaling request's Target.
const (
	ScalingTargetNamespace = "Namespace"
	ScalingTargetJob       = "Job"
	ScalingTargetGroup     = "Group"
)

// JobSubmission is the source a job was registered from, kept per job
// version so that `nomad job inspect` and the UI can show what the user
// wrote.
type JobSubmission struct {
	Source        string
	Format        string
	VariableFlags map[string]string
	Variables     string

	// Set by the server: the job version the source belongs to.
	Namespace      string
	JobID          string
	Version        uint64
	JobModifyIndex uint64
}

// Copy returns a deep copy; nil stays nil.
func (s *JobSubmission) Copy() *JobSubmission {
	if s == nil {
		return nil
	}
	c := *s
	c.VariableFlags = maps.Clone(s.VariableFlags)
	return &c
}

// JobSubmissionRequest asks for the source of one job version.
type JobSubmissionRequest struct {
	JobID   string
	Version uint64
	QueryOptions
}

// JobSubmissionResponse answers Job.GetJobSubmission; Submission is nil
// when none was stored.
type JobSubmissionResponse struct {
	Submission *JobSubmission
	QueryMeta
}

// JobRevertRequest registers a stored version of a job again.
type JobRevertRequest struct {
	JobID      string
	JobVersion uint64

	// EnforcePriorVersion, when set, makes the revert fail unless the
	// job's current version is this one.
	EnforcePriorVersion *uint64
	WriteRequest
}

// JobStabilityRequest marks a job version stable or not; it is also the
// Raft message of that change.
type JobStabilityRequest struct {
	JobID      string
	JobVersion uint64
	Stable     bool
	WriteRequest
}

// JobStabilityResponse answers Job.Stable.
type JobStabilityResponse struct {
	WriteMeta
}

// JobScaleRequest changes the count of one task group of a job, or only
// records a scaling event when Count is nil.
type JobScaleRequest struct {
	JobID          string
	Target         map[string]string
	Count          *int64
	Message        string
	Error          bool
	Meta           map[string]any
	PolicyOverride bool

	// JobModifyIndex, when not zero, makes the scale fail unless the
	// job's JobModifyIndex is this one.
	JobModifyIndex uint64
	WriteRequest
}

// ScalingEvent is one entry of a task group's scaling history.
type ScalingEvent struct {
	Time          int64 // Unix nanoseconds
	Count         *int64
	PreviousCount int64
	Message       string
	Error         bool
	Meta          map[string]any
	EvalID        *string
	CreateIndex   uint64
}

// ScalingEventRequest records a scaling event; it is the Raft message of
// ScalingEventRegisterRequestType.
type ScalingEventRequest struct {
	Namespace    string
	JobID        string
	TaskGroup    string
	ScalingEvent *ScalingEvent
}

// JobScalingEvents is the scaling history of a job, by task group.
type JobScalingEvents struct {
	Namespace     string
	JobID         string
	ScalingEvents map[string][]*ScalingEvent
	ModifyIndex   uint64
}

// JobScaleStatusRequest asks for a job's scaling status.
type JobScaleStatusRequest struct {
	JobID string
	QueryOptions
}

// JobScaleStatusResponse answers Job.ScaleStatus; JobScaleStatus is nil
// when the job does not exist.
type JobScaleStatusResponse struct {
	JobScaleStatus *JobScaleStatus
	QueryMeta
}

// JobScaleStatus is the desired and actual counts of a job's groups with
// their scaling history.
type JobScaleStatus struct {
	JobID          string
	Namespace      string
	JobCreateIndex uint64
	JobModifyIndex uint64
	JobStopped     bool
	TaskGroups     map[string]*TaskGroupScaleStatus
}

// TaskGroupScaleStatus is one group's part of a JobScaleStatus.
type TaskGroupScaleStatus struct {
	Desired   int
	Placed    int
	Running   int
	Healthy   int
	Unhealthy int
	Events    []*ScalingEvent
}

// ReconcileJobSummariesRequest recomputes every job summary from the
// allocs and child jobs in state; it is the Raft message of
// ReconcileJobSummariesRequestType.
type ReconcileJobSummariesRequest struct {
	WriteRequest
}
