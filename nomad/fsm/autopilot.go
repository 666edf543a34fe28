package fsm

import "github.com/nomadq/nomadq/structs"

// applyAutopilotConfig writes the autopilot configuration; a
// check-and-set answers whether it applied.
func (f *FSM) applyAutopilotConfig(buf []byte, index uint64) any {
	req, err := decode[structs.AutopilotSetConfigRequest](buf, structs.AutopilotRequestType)
	if err != nil {
		return err
	}
	applied, err := f.State().AutopilotSetConfig(index, &req.Config, req.CAS, req.Config.ModifyIndex)
	if err != nil {
		return err
	}
	if req.CAS {
		return applied
	}
	return nil
}
