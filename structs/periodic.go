package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// PeriodicLaunchRequestType stores a periodic child job, its eval and the
// parent's launch record in one Raft entry. Nomad has no such message (it
// derives the launch from the child's ID inside its register apply); the
// number is chosen above Nomad's range so that it cannot collide.
const PeriodicLaunchRequestType MessageType = 120

func init() {
	messageTypeNames[PeriodicLaunchRequestType] = "PeriodicLaunchRequestType"
}

// Child job ID infixes, as Nomad names its derived jobs.
const (
	PeriodicLaunchSuffix = "/periodic-"
	DispatchLaunchSuffix = "/dispatch-"
)

// DispatchPayloadSizeLimit is the largest payload a dispatch accepts.
const DispatchPayloadSizeLimit = 16 * 1024

// PeriodicLaunch records when a periodic job last launched a child. It
// is persisted so that a new leader resumes the schedule instead of
// replaying missed launches.
type PeriodicLaunch struct {
	ID          string
	Namespace   string
	Launch      int64 // unix nanoseconds
	CreateIndex uint64
	ModifyIndex uint64
}

// PeriodicLaunchRequest is the Raft message of one periodic launch.
type PeriodicLaunchRequest struct {
	Job    *Job
	Eval   *Evaluation
	Launch *PeriodicLaunch
	WriteRequest
}

// PeriodicForceRequest asks the leader to launch a periodic job now.
type PeriodicForceRequest struct {
	JobID string
	WriteRequest
}

// PeriodicForceResponse answers Periodic.Force.
type PeriodicForceResponse struct {
	EvalID          string
	EvalCreateIndex uint64
	WriteMeta
}

// JobDispatchRequest dispatches a child of a parameterized job.
type JobDispatchRequest struct {
	JobID            string
	Payload          []byte
	Meta             map[string]string
	IdempotencyToken string
	WriteRequest
}

// JobDispatchResponse answers Job.Dispatch.
type JobDispatchResponse struct {
	DispatchedJobID string
	EvalID          string
	EvalCreateIndex uint64
	JobCreateIndex  uint64
	WriteMeta
}

// PeriodicChildID is the ID of the child a periodic job launches at the
// given unix time.
func PeriodicChildID(parentID string, unix int64) string {
	return parentID + PeriodicLaunchSuffix + strconv.FormatInt(unix, 10)
}

// PeriodicChildLaunch returns the unix launch time encoded in a periodic
// child's ID.
func PeriodicChildLaunch(childID string) (int64, error) {
	i := strings.LastIndex(childID, PeriodicLaunchSuffix)
	if i < 0 {
		return 0, fmt.Errorf("job %q is not a periodic child", childID)
	}
	return strconv.ParseInt(childID[i+len(PeriodicLaunchSuffix):], 10, 64)
}
