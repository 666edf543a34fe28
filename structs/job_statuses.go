package structs

// JobStatusesRequest asks for the status of jobs with their allocs, as
// the UI's job index shows them; Jobs narrows it to some jobs.
type JobStatusesRequest struct {
	Jobs            []NamespacedID
	IncludeChildren bool
	QueryOptions
}

// JobStatusesResponse answers Job.Statuses.
type JobStatusesResponse struct {
	Jobs []JobStatusesJob
	QueryMeta
}

// JobStatusesJob is one job of a JobStatusesResponse.
type JobStatusesJob struct {
	NamespacedID
	Name             string
	Type             string
	NodePool         string
	Datacenters      []string
	Priority         int
	Version          uint64
	SubmitTime       int64
	ModifyIndex      uint64
	Allocs           []JobStatusesAlloc
	GroupCountSum    int
	ChildStatuses    []string
	ParentID         string
	LatestDeployment *JobStatusesLatestDeployment
	Stop             bool
	IsPack           bool
	Status           string
}

// JobStatusesAlloc is the part of an alloc a JobStatusesJob lists.
type JobStatusesAlloc struct {
	ID               string
	Group            string
	ClientStatus     string
	NodeID           string
	DeploymentStatus JobStatusesDeployment
	JobVersion       uint64
	FollowupEvalID   string
	HasPausedTask    bool
}

// JobStatusesDeployment is an alloc's deployment health.
type JobStatusesDeployment struct {
	Canary  bool
	Healthy *bool
}

// JobStatusesLatestDeployment is a job's latest deployment; nomadq has no
// deployments, so it is always nil.
type JobStatusesLatestDeployment struct {
	ID                string
	IsActive          bool
	JobVersion        uint64
	Status            string
	StatusDescription string
	AllAutoPromote    bool
	RequiresPromotion bool
}
