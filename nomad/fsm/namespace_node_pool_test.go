package fsm

import (
	"bytes"
	"io"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestFSM_NamespacesAndNodePools(t *testing.T) {
	f := testFSM(t)
	mustApply(t, f, 1, structs.NamespaceUpsertRequestType, &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "prod", Meta: map[string]string{"batch_queue_weight": "2"}}, {Name: "tmp"}},
	})
	mustApply(t, f, 2, structs.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "gpu", Description: "GPU nodes"}, {Name: "tmp"}},
	})
	mustApply(t, f, 3, structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"tmp"}})
	mustApply(t, f, 4, structs.NodePoolDeleteRequestType, &structs.NodePoolDeleteRequest{Names: []string{"tmp"}})

	// A refused write comes back as the FSM's answer and changes nothing.
	err, _ := apply(t, f, 5, structs.NamespaceDeleteRequestType, &structs.NamespaceDeleteRequest{Namespaces: []string{"default"}}).(error)
	must.ErrorContains(t, err, "can not delete default namespace")
	err, _ = apply(t, f, 6, structs.NodePoolUpsertRequestType, &structs.NodePoolUpsertRequest{NodePools: []*structs.NodePool{{Name: "all"}}}).(error)
	must.ErrorContains(t, err, `modifying node pool "all" is not allowed`)

	snap, snapErr := f.Snapshot()
	must.NoError(t, snapErr)
	var sink memSink
	must.NoError(t, snap.Persist(&sink))
	restored := testFSM(t)
	must.NoError(t, restored.Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))

	for _, fsm := range []*FSM{f, restored} {
		nss, err := fsm.State().NamespacesByNamePrefix(nil, "")
		must.NoError(t, err)
		must.SliceLen(t, 2, nss)
		must.Eq(t, "default", nss[0].Name)
		must.Eq(t, "prod", nss[1].Name)
		must.Eq(t, map[string]string{"batch_queue_weight": "2"}, nss[1].Meta)
		must.Eq(t, 1, nss[1].CreateIndex)

		pools, err := fsm.State().NodePoolsByNamePrefix(nil, "")
		must.NoError(t, err)
		var names []string
		for _, p := range pools {
			names = append(names, p.Name)
		}
		must.Eq(t, []string{"all", "default", "gpu"}, names)
		must.Eq(t, "GPU nodes", pools[2].Description)
	}
	latest, err := restored.State().LatestIndex()
	must.NoError(t, err)
	must.Eq(t, 4, latest)
}
