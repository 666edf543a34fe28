package fsm

import "github.com/nomadq/nomadq/structs"

func (f *FSM) applyNamespaceUpsert(buf []byte, index uint64) any {
	req, err := decode[structs.NamespaceUpsertRequest](buf, structs.NamespaceUpsertRequestType)
	if err != nil {
		return err
	}
	return f.State().UpsertNamespaces(index, req.Namespaces)
}

func (f *FSM) applyNamespaceDelete(buf []byte, index uint64) any {
	req, err := decode[structs.NamespaceDeleteRequest](buf, structs.NamespaceDeleteRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteNamespaces(index, req.Namespaces)
}

func (f *FSM) applyNodePoolUpsert(buf []byte, index uint64) any {
	req, err := decode[structs.NodePoolUpsertRequest](buf, structs.NodePoolUpsertRequestType)
	if err != nil {
		return err
	}
	return f.State().UpsertNodePools(index, req.NodePools)
}

func (f *FSM) applyNodePoolDelete(buf []byte, index uint64) any {
	req, err := decode[structs.NodePoolDeleteRequest](buf, structs.NodePoolDeleteRequestType)
	if err != nil {
		return err
	}
	return f.State().DeleteNodePools(index, req.Names)
}
