package structs

import "time"

// JobPlanRequest asks for a dry run of registering Job: what the scheduler
// would do, without changing any state.
type JobPlanRequest struct {
	Job            *Job
	Diff           bool
	PolicyOverride bool
	WriteRequest
}

// JobPlanResponse answers Job.Plan.
type JobPlanResponse struct {
	Annotations        *PlanAnnotations
	FailedTGAllocs     map[string]*AllocMetric
	JobModifyIndex     uint64
	CreatedEvals       []*Evaluation
	Diff               *JobDiff
	NextPeriodicLaunch time.Time
	Warnings           string
	WriteMeta
}

// PlanAnnotations explain a plan per task group.
type PlanAnnotations struct {
	DesiredTGUpdates map[string]*DesiredUpdates
	PreemptedAllocs  []*AllocListStub
}

// DesiredUpdates counts what a plan does to one task group.
type DesiredUpdates struct {
	Ignore            uint64
	Place             uint64
	Migrate           uint64
	Stop              uint64
	InPlaceUpdate     uint64
	DestructiveUpdate uint64
	Canary            uint64
	Preemptions       uint64
	Reconnect         uint64
	Disconnect        uint64
	RescheduleNow     uint64
	RescheduleLater   uint64
}

// Diff types, as Nomad names them.
const (
	DiffTypeNone    = "None"
	DiffTypeAdded   = "Added"
	DiffTypeDeleted = "Deleted"
	DiffTypeEdited  = "Edited"
)

// JobDiff is the difference between two versions of a job.
type JobDiff struct {
	Type       string
	ID         string
	Fields     []*FieldDiff
	Objects    []*ObjectDiff
	TaskGroups []*TaskGroupDiff
}

// TaskGroupDiff is the difference of one task group.
type TaskGroupDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
	Tasks   []*TaskDiff
	Updates map[string]uint64
}

// TaskDiff is the difference of one task.
type TaskDiff struct {
	Type        string
	Name        string
	Fields      []*FieldDiff
	Objects     []*ObjectDiff
	Annotations []string
}

// ObjectDiff is the difference of a nested object.
type ObjectDiff struct {
	Type    string
	Name    string
	Fields  []*FieldDiff
	Objects []*ObjectDiff
}

// FieldDiff is the difference of one field.
type FieldDiff struct {
	Type        string
	Name        string
	Old, New    string
	Annotations []string
}

// JobVersionsRequest lists a job's stored versions, newest first.
type JobVersionsRequest struct {
	JobID string
	Diffs bool
	QueryOptions
}

// JobVersionsResponse answers Job.Versions; with Diffs, Diffs[i] is the
// change from Versions[i+1] to Versions[i].
type JobVersionsResponse struct {
	Versions []*Job
	Diffs    []*JobDiff
	QueryMeta
}

// JobEvaluateRequest forces a new evaluation of a job.
type JobEvaluateRequest struct {
	JobID       string
	EvalOptions EvalOptions
	WriteRequest
}

// EvalOptions tune a forced evaluation.
type EvalOptions struct {
	ForceReschedule bool
}

// Search contexts.
const (
	SearchContextAll         = "all"
	SearchContextJobs        = "jobs"
	SearchContextEvals       = "evals"
	SearchContextAllocs      = "allocs"
	SearchContextNodes       = "nodes"
	SearchContextDeployments = "deployment"
	SearchContextNodePools   = "node_pools"
	SearchContextNamespaces  = "namespaces"
)

// SearchMaxResults caps the matches of each context, as Nomad's.
const SearchMaxResults = 20

// SearchRequest searches object IDs by prefix.
type SearchRequest struct {
	Prefix  string
	Context string
	QueryOptions
}

// SearchResponse answers Search.PrefixSearch: per context, the matching
// IDs, and whether the list was truncated.
type SearchResponse struct {
	Matches     map[string][]string
	Truncations map[string]bool
	QueryMeta
}
