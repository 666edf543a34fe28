package taskrunner

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// maxEvents is how many events a task state keeps, as in Nomad.
const maxEvents = 10

// NewEvent returns an event of type typ stamped now, with Nomad's display
// message for it filled in by SetDisplayMessage when it is recorded.
func NewEvent(typ string) *structs.TaskEvent {
	return &structs.TaskEvent{Type: typ, Time: time.Now().UnixNano(), Details: map[string]string{}}
}

// SetDisplayMessage fills in an event's DisplayMessage the way Nomad
// words it, unless one is already set.
func SetDisplayMessage(e *structs.TaskEvent) {
	if e.DisplayMessage != "" {
		return
	}
	var d string
	switch e.Type {
	case structs.TaskSetup:
		d = e.Message
	case structs.TaskStarted:
		d = "Task started by client"
	case structs.TaskReceived:
		d = "Task received by client"
	case structs.TaskFailedValidation:
		d = "Validation of task failed"
		if e.ValidationError != "" {
			d = e.ValidationError
		}
	case structs.TaskSetupFailure:
		d = "Task setup failed"
		if e.SetupError != "" {
			d = e.SetupError
		}
	case structs.TaskDriverFailure:
		d = "Failed to start task"
		if e.DriverError != "" {
			d = e.DriverError
		}
	case structs.TaskTerminated:
		d = fmt.Sprintf("Exit Code: %d", e.ExitCode)
		if e.Signal != 0 {
			d += fmt.Sprintf(", Signal: %d", e.Signal)
		}
		if e.Message != "" {
			d += fmt.Sprintf(", Exit Message: %q", e.Message)
		}
	case structs.TaskKilling:
		switch {
		case e.KillReason != "":
			d = "Killing task: " + e.KillReason
		case e.KillTimeout != 0:
			d = fmt.Sprintf("Sent interrupt. Waiting %v before force killing", e.KillTimeout)
		default:
			d = "Sent interrupt"
		}
	case structs.TaskKilled:
		d = "Task successfully killed"
		if e.KillError != "" {
			d = e.KillError
		}
	case structs.TaskRestartSignal:
		d = "Task signaled to restart"
		if e.RestartReason != "" {
			d = e.RestartReason
		}
	case structs.TaskSignaling:
		switch {
		case e.TaskSignal == "" && e.TaskSignalReason == "":
			d = "Task being sent a signal"
		case e.TaskSignal == "":
			d = e.TaskSignalReason
		case e.TaskSignalReason == "":
			d = "Task being sent signal " + e.TaskSignal
		default:
			d = "Task being sent signal " + e.TaskSignal + ": " + e.TaskSignalReason
		}
	case structs.TaskRestarting:
		in := fmt.Sprintf("Task restarting in %v", time.Duration(e.StartDelay))
		if e.RestartReason != "" && e.RestartReason != ReasonWithinPolicy {
			d = e.RestartReason + " - " + in
		} else {
			d = in
		}
	case structs.TaskNotRestarting:
		d = "Task exceeded restart policy"
		if e.RestartReason != "" {
			d = e.RestartReason
		}
	case structs.TaskDownloadingArtifacts:
		d = "Client is downloading artifacts"
	case structs.TaskArtifactDownloadFailed:
		d = "Failed to download artifacts"
		if e.DownloadError != "" {
			d = e.DownloadError
		}
	case structs.TaskDriverMessage:
		d = e.DriverMessage
	case structs.TaskSiblingFailed:
		d = fmt.Sprintf("Task's sibling %q failed", e.FailedSibling)
	case structs.TaskLeaderDead:
		d = "Leader Task in Group dead"
	case structs.TaskMainDead:
		d = "Main tasks in the group died"
	default:
		d = e.Message
	}
	e.DisplayMessage = d
}

// driverEvent is a driver's message as Nomad records it: a "Driver"
// event whose DriverMessage is the message and whose details are the
// driver's annotations (the image, for a pull).
func driverEvent(message string, details map[string]string) *structs.TaskEvent {
	e := NewEvent(structs.TaskDriverMessage)
	e.DriverMessage = message
	for k, v := range details {
		e.Details[k] = v
	}
	return e
}

// appendEvent records e on ts, keeping the newest maxEvents.
func appendEvent(ts *structs.TaskState, e *structs.TaskEvent) {
	SetDisplayMessage(e)
	if len(ts.Events) >= maxEvents {
		ts.Events = append(ts.Events[:0], ts.Events[len(ts.Events)-maxEvents+1:]...)
	}
	ts.Events = append(ts.Events, e)
	if e.FailsTask {
		ts.Failed = true
	}
}
