package nomad

// syncEvalBrokerPause makes the leader's eval broker and blocked evals
// follow the scheduler configuration's PauseEvalBroker, as Nomad does: a
// paused broker hands no evals to workers (evals written meanwhile wait in
// state), and resuming puts every pending and blocked eval back. Nothing
// happens on a server that is not the leader.
func (s *Server) syncEvalBrokerPause() error {
	s.leaderLock.Lock()
	defer s.leaderLock.Unlock()
	if s.leaderCancel == nil {
		return nil
	}
	return s.syncEvalBrokerPauseLocked()
}

// syncEvalBrokerPauseLocked is syncEvalBrokerPause with leaderLock held
// by a caller that knows it leads.
func (s *Server) syncEvalBrokerPauseLocked() error {
	_, cfg, err := s.State().SchedulerConfig()
	if err != nil {
		return err
	}
	enable := cfg == nil || !cfg.PauseEvalBroker
	if enable == s.evalBroker.Enabled() && enable == s.blockedEvals.Enabled() {
		return nil
	}
	s.logger.Info("eval broker status modified", "paused", !enable)
	s.evalBroker.SetEnabled(enable)
	s.blockedEvals.SetEnabled(enable)
	if !enable {
		return nil
	}
	return s.restoreEvals()
}
