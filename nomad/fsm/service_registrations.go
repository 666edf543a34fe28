package fsm

import "github.com/nomadq/nomadq/structs"

// applyServiceRegistrationUpsert stores the services a client registered.
func (f *FSM) applyServiceRegistrationUpsert(buf []byte, index uint64) any {
	req, err := decode[structs.ServiceRegistrationUpsertRequest](buf, structs.ServiceRegistrationUpsertRequestType)
	if err != nil {
		return err
	}
	return f.State().UpsertServiceRegistrations(index, req.Services)
}

// applyServiceRegistrationDeleteByID removes one registration of the
// request's namespace.
func (f *FSM) applyServiceRegistrationDeleteByID(buf []byte, index uint64) any {
	req, err := decode[structs.ServiceRegistrationDeleteByIDRequest](buf, structs.ServiceRegistrationDeleteByIDRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteServiceRegistrationByID(index, req.RequestNamespace(), req.ID)
}

// applyServiceRegistrationDeleteByNodeID removes every registration of a
// node that went down or was deregistered.
func (f *FSM) applyServiceRegistrationDeleteByNodeID(buf []byte, index uint64) any {
	req, err := decode[structs.ServiceRegistrationDeleteByNodeIDRequest](buf, structs.ServiceRegistrationDeleteByNodeIDRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteServiceRegistrationsByNodeID(index, req.NodeID)
}
