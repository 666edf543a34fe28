package fsm

import "github.com/nomadq/nomadq/structs"

func (f *FSM) applyRootKeyUpsert(buf []byte, index uint64) any {
	req, err := decode[structs.RootKeyUpsertRequest](buf, structs.RootKeyUpsertRequestType)
	if err != nil {
		return err
	}
	if req.Rekey {
		return f.State().UpsertRootKeyRekey(index, req.RootKey)
	}
	return f.State().UpsertRootKey(index, req.RootKey)
}

func (f *FSM) applyRootKeyDelete(buf []byte, index uint64) any {
	req, err := decode[structs.RootKeyDeleteRequest](buf, structs.RootKeyDeleteRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteRootKey(index, req.KeyID)
}
