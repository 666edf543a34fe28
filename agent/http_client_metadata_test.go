package agent

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// Node metadata is read and changed on the client, through a server agent
// that forwards to it, and reaches the servers' view of the node.
func TestClientMetadata_ThroughServer(t *testing.T) {
	srv, c := lifecycleAgents(t)
	var nodeID string
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		nodes, _, err := c.Nodes().List(nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != "ready" {
			return fmt.Errorf("nodes: %v", nodes)
		}
		nodeID = nodes[0].ID
		return nil
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))

	code, body := httpGet(t, srv.HTTPAddr()+"/v1/client/metadata")
	must.Eq(t, http.StatusBadRequest, code)
	must.StrContains(t, body, "No local Node and node_id not provided")

	v := "db"
	resp, err := c.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{NodeID: nodeID, Meta: map[string]*string{"role": &v}}, nil)
	must.NoError(t, err)
	must.Eq(t, "db", resp.Meta["role"])
	read, err := c.Nodes().Meta().Read(nodeID, nil)
	must.NoError(t, err)
	must.Eq(t, "db", *read.Dynamic["role"])
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		n, _, err := c.Nodes().Info(nodeID, nil)
		if err != nil {
			return err
		}
		if n.Meta["role"] != "db" {
			return fmt.Errorf("node meta %v", n.Meta)
		}
		return nil
	}), wait.Timeout(20*time.Second), wait.Gap(50*time.Millisecond)))

	for _, tc := range []struct {
		name, query string
		meta        map[string]*string
		code        int
		want        string
	}{
		{"bad key, answered by the node", "node_id=" + nodeID, map[string]*string{"no way": &v}, http.StatusBadRequest, `"no way" is invalid`},
		{"nothing to apply", "node_id=" + nodeID, map[string]*string{}, http.StatusBadRequest, "missing required Meta object"},
		{"short node ID", "node_id=abc", map[string]*string{"a": &v}, http.StatusBadRequest, `node_id "abc" is not a full node ID`},
		{"unknown node", "node_id=00000000-0000-0000-0000-000000000000", map[string]*string{"a": &v}, http.StatusNotFound, "Unknown node"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := httpPut(t, srv.HTTPAddr()+"/v1/client/metadata?"+tc.query, map[string]any{"Meta": tc.meta})
			must.Eq(t, tc.code, code, must.Sprint(body))
			must.StrContains(t, body, tc.want)
		})
	}
}
