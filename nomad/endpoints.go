package nomad

// endpoints returns the RPC endpoints by service name.
func (s *Server) endpoints() map[string]any {
	return map[string]any{
		"Job":       &Job{srv: s},
		"Eval":      &Eval{srv: s},
		"Alloc":     &Alloc{srv: s},
		"Node":      &Node{srv: s},
		"Status":    &Status{srv: s},
		"Operator":  &Operator{srv: s},
		"Search":    &Search{srv: s},
		"Queue":     &QueueEndpoint{srv: s},
		"System":    &System{srv: s},
		"Keyring":   &Keyring{srv: s},
		"Namespace": &Namespace{srv: s},
		"NodePool":  &NodePool{srv: s},
		"Region":    &Region{srv: s},
		"ACL":       &ACL{srv: s},
		"Scaling":   &Scaling{srv: s},
		"Variables": &Variables{srv: s},

		"ServiceRegistration": &ServiceRegistration{srv: s},
	}
}
