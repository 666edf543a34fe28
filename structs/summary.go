package structs

import "maps"

// JobSummary counts a job's allocations per task group by client status.
type JobSummary struct {
	JobID     string
	Namespace string
	Summary   map[string]TaskGroupSummary
	Children  *JobChildrenSummary

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy of the summary.
func (s *JobSummary) Copy() *JobSummary {
	if s == nil {
		return nil
	}
	c := *s
	c.Summary = maps.Clone(s.Summary)
	if s.Children != nil {
		ch := *s.Children
		c.Children = &ch
	}
	return &c
}

// TaskGroupSummary counts one group's allocations.
type TaskGroupSummary struct {
	Queued   int
	Complete int
	Failed   int
	Running  int
	Starting int
	Lost     int
	Unknown  int

	// TimedOut is how many of the Complete allocs ended because they
	// reached the group's max_run_duration. Nomad has no such field;
	// its clients ignore it.
	TimedOut int
}

// JobChildrenSummary counts a periodic or parameterized job's children.
type JobChildrenSummary struct {
	Pending int64
	Running int64
	Dead    int64
}
