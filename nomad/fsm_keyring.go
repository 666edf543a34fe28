package nomad

import "github.com/nomadq/nomadq/structs"

func (f *nomadFSM) applyRootKeyUpsert(buf []byte, index uint64) any {
	req, err := decode[structs.RootKeyUpsertRequest](buf, structs.RootKeyUpsertRequestType)
	if err != nil {
		return err
	}
	return f.State().UpsertRootKey(index, req.RootKey)
}

func (f *nomadFSM) applyRootKeyDelete(buf []byte, index uint64) any {
	req, err := decode[structs.RootKeyDeleteRequest](buf, structs.RootKeyDeleteRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteRootKey(index, req.KeyID)
}
