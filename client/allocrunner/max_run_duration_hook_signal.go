package allocrunner

// SignalTasks sends signal to every running task of the alloc through its
// task runner's signal path (see Runner.SignalTasks); a task that is not
// running, or whose driver cannot signal, is skipped.
func (ar *AllocRunner) SignalTasks(signal, reason string) int {
	n := 0
	for _, tr := range ar.order {
		if !tr.Started() || tr.IsDead() {
			continue
		}
		if err := tr.SignalFor(signal, reason); err != nil {
			ar.logger.Debug("signal task", "task", tr.Task().Name, "signal", signal, "error", err)
			continue
		}
		n++
	}
	return n
}
