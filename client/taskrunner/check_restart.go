package taskrunner

// RestartFor restarts the running task for reason, recorded on its
// Restart Signaled event (a failing check's check_restart); like a user's
// restart it counts in Restarts but not against the restart policy.
func (tr *TaskRunner) RestartFor(reason string) error { return tr.restartFor(reason) }
