package state

import (
	"net/http"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestRefusalCodes: a write the store refuses because of the request
// comes back through Raft with the HTTP status that says so (400 for a
// request the object's state refuses, 404 for an unknown object), and
// with its message unchanged once the code is read off. The HTTP layer
// reads nothing else: an uncoded refusal would be a 500.
func TestRefusalCodes(t *testing.T) {
	node := mockNode()
	keyID := newID()
	cases := []struct {
		name  string
		write func(s *StateStore) error
		code  int
		msg   string
	}{
		{"delete default namespace", func(s *StateStore) error {
			return s.DeleteNamespaces(10, []string{structs.DefaultNamespace})
		}, http.StatusBadRequest, "can not delete default namespace"},
		{"delete unknown namespace", func(s *StateStore) error {
			return s.DeleteNamespaces(10, []string{"missing"})
		}, http.StatusNotFound, `namespace "missing" not found`},
		{"delete namespace in use", func(s *StateStore) error {
			return s.DeleteNamespaces(10, []string{"prod"})
		}, http.StatusBadRequest, `namespace "prod" has non-terminal jobs (1 jobs: web)`},
		{"job in unknown namespace", func(s *StateStore) error {
			j := mockJob("lost")
			j.Namespace = "nowhere"
			return s.UpsertJob(10, j)
		}, http.StatusBadRequest, `job "lost" is in nonexistent namespace "nowhere"`},
		{"job in unknown node pool", func(s *StateStore) error {
			j := mockJob("lost")
			j.NodePool = "nopool"
			return s.UpsertJob(10, j)
		}, http.StatusBadRequest, `job "lost" is in nonexistent node pool "nopool"`},
		{"modify built-in pool", func(s *StateStore) error {
			return s.UpsertNodePools(10, []*structs.NodePool{{Name: structs.DefaultNodePool}})
		}, http.StatusBadRequest, `modifying node pool "default" is not allowed`},
		{"delete built-in pool", func(s *StateStore) error {
			return s.DeleteNodePools(10, []string{structs.AllNodePools})
		}, http.StatusBadRequest, `deleting built-in node pool "all" is not allowed`},
		{"delete unknown pool", func(s *StateStore) error {
			return s.DeleteNodePools(10, []string{"missing"})
		}, http.StatusNotFound, `node pool "missing" not found`},
		{"delete pool in use", func(s *StateStore) error {
			return s.DeleteNodePools(10, []string{"gpu"})
		}, http.StatusBadRequest, `node pool "gpu" has nodes (1 nodes)`},
		{"bad node status", func(s *StateStore) error {
			return s.UpdateNodeStatus(10, node.ID, "sleepy", 0, nil)
		}, http.StatusBadRequest, `update status of node "` + node.ID + `": status "sleepy" is not allowed: must be one of "initializing", "ready", "down", "disconnected"`},
		{"bad node eligibility", func(s *StateStore) error {
			return s.UpdateNodeEligibility(10, node.ID, "maybe", 0, nil)
		}, http.StatusBadRequest, `update eligibility of node "` + node.ID + `": eligibility "maybe" is not allowed: must be "eligible" or "ineligible"`},
		{"delete unknown ACL policy", func(s *StateStore) error {
			return s.DeleteACLPolicies(10, []string{"nope"})
		}, http.StatusNotFound, `ACL policy "nope" not found`},
		{"delete unknown ACL token", func(s *StateStore) error {
			return s.DeleteACLTokens(10, []string{"nope"})
		}, http.StatusNotFound, "ACL token nope not found"},
		{"delete unknown ACL role", func(s *StateStore) error {
			return s.DeleteACLRolesByID(10, []string{"nope"})
		}, http.StatusNotFound, "ACL role not found"},
		{"delete unknown auth method", func(s *StateStore) error {
			return s.DeleteACLAuthMethods(10, []string{"nope"})
		}, http.StatusNotFound, `ACL auth method "nope" not found`},
		{"binding rule of unknown auth method", func(s *StateStore) error {
			return s.UpsertACLBindingRules(10, []*structs.ACLBindingRule{{ID: newID(), AuthMethod: "nope"}})
		}, http.StatusNotFound, `ACL binding rule insert failed: ACL auth method "nope" not found`},
		{"delete unknown binding rule", func(s *StateStore) error {
			return s.DeleteACLBindingRules(10, []string{"nope"})
		}, http.StatusNotFound, "ACL binding rule nope not found"},
		{"delete unknown root key", func(s *StateStore) error {
			return s.DeleteRootKey(10, keyID)
		}, http.StatusNotFound, `root key "` + keyID + `" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			must.NoError(t, s.UpsertNamespaces(1, []*structs.Namespace{{Name: "prod"}}))
			web := mockJob("web")
			web.Namespace = "prod"
			must.NoError(t, s.UpsertJob(2, web))
			must.NoError(t, s.UpsertNodePools(3, []*structs.NodePool{{Name: "gpu"}}))
			n := node.Copy()
			n.NodePool = "gpu"
			must.NoError(t, s.UpsertNode(4, n))
			before := dumpState(t, &s.reader)

			code, msg, ok := structs.CodeFromRPCCodedErr(tc.write(s))
			must.True(t, ok)
			must.Eq(t, tc.code, code)
			must.Eq(t, tc.msg, msg)
			must.Eq(t, before, dumpState(t, &s.reader))
		})
	}
}
