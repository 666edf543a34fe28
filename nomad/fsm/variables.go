package fsm

import "github.com/nomadq/nomadq/structs"

// applyVariable performs a variable write; a conflict is an answer, not
// an error, and comes back to the endpoint as the response.
func (f *FSM) applyVariable(buf []byte, index uint64) any {
	req, err := decode[structs.VarApplyStateRequest](buf, structs.VarApplyStateRequestType)
	if err != nil {
		return err
	}
	resp, err := f.State().ApplyVariable(index, req.Op, req.Var)
	if err != nil {
		return err
	}
	return resp
}
