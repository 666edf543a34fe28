package nomad

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/msgpackrpc"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// TestACL_EveryRPCHasARule fails for an RPC method registered without an
// entry in rpcRules: with ACLs on, such a method would be refused to
// everyone but management tokens.
func TestACL_EveryRPCHasARule(t *testing.T) {
	s := &Server{}
	errType := reflect.TypeFor[error]()
	var missing []string
	for name, endpoint := range s.endpoints() {
		typ := reflect.TypeOf(endpoint)
		for i := 0; i < typ.NumMethod(); i++ {
			m := typ.Method(i)
			if m.Type.NumIn() != 3 || m.Type.NumOut() != 1 || m.Type.Out(0) != errType {
				continue
			}
			if _, ok := rpcRules[name+"."+m.Name]; !ok {
				missing = append(missing, name+"."+m.Name)
			}
		}
	}
	sort.Strings(missing)
	must.Eq(t, []string(nil), missing, must.Sprint("RPC methods without an ACL rule in rpcRules"))
}

func aclServer(t *testing.T, cb func(*Config)) *Server {
	s := testServer(t, func(c *Config) {
		c.ACLEnabled = true
		if cb != nil {
			cb(c)
		}
	})
	waitForLeader(t, s)
	return s
}

func bootstrap(t *testing.T, s *Server) *structs.ACLToken {
	t.Helper()
	var reply structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &reply))
	must.Len(t, 1, reply.Tokens)
	return reply.Tokens[0]
}

func TestACL_BootstrapOnceThenResetFile(t *testing.T) {
	s := aclServer(t, func(c *Config) {
		c.DevMode = false
		c.DataDir = t.TempDir()
		c.BootstrapExpect = 1
	})
	root := bootstrap(t, s)
	must.Eq(t, structs.ACLManagementToken, root.Type)

	var reply structs.ACLTokenUpsertResponse
	err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &reply)
	done, err2 := s.State().ACLBootstrapIndex()
	must.NoError(t, err2)
	code, msg, ok := structs.CodeFromRPCCodedErr(err)
	must.True(t, ok, must.Sprint(err))
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, "ACL bootstrap already done (reset index: "+strconv.FormatUint(done, 10)+")", msg)

	// Two racing bootstraps both pass that check; the FSM refuses the
	// later one with an error the endpoint recognises as such.
	late := &structs.ACLTokenBootstrapRequest{Token: &structs.ACLToken{AccessorID: structs.GenerateUUID(),
		SecretID: structs.GenerateUUID(), Type: structs.ACLManagementToken, Global: true}}
	_, _, err = s.raftApply(structs.ACLTokenBootstrapRequestType, late)
	must.ErrorIs(t, err, state.ErrACLBootstrapDone)

	// A reset file with another index is refused, naming both.
	reset := filepath.Join(s.config.DataDir, "server", structs.ACLBootstrapResetIndexFile)
	must.NoError(t, os.WriteFile(reset, []byte(strconv.FormatUint(done+100, 10)), 0o600))
	err = s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &reply)
	code, msg, ok = structs.CodeFromRPCCodedErr(err)
	must.True(t, ok, must.Sprint(err))
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, "Invalid bootstrap reset index (specified "+strconv.FormatUint(done+100, 10)+", reset index: "+strconv.FormatUint(done, 10)+")", msg)

	// The operator writes the reset index named in the error.
	must.NoError(t, os.WriteFile(reset, []byte(strconv.FormatUint(done, 10)), 0o600))
	again := bootstrap(t, s)
	must.NotEq(t, root.SecretID, again.SecretID)
	_, err = os.Stat(reset)
	must.True(t, os.IsNotExist(err), must.Sprint("the reset file is used once"))
}

func TestACL_BootstrapSecretMustBeAUUID(t *testing.T) {
	s := aclServer(t, nil)
	var reply structs.ACLTokenUpsertResponse
	err := s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{BootstrapSecret: "badtoken"}, &reply)
	must.ErrorContains(t, err, "invalid acl token")
	_, err = s.State().ACLBootstrapIndex()
	must.NoError(t, err)
	idx, _ := s.State().ACLBootstrapIndex()
	must.Zero(t, idx)
}

func TestACL_DisabledRefusesACLCalls(t *testing.T) {
	s := testServer(t, nil)
	waitForLeader(t, s)
	var reply structs.ACLTokenUpsertResponse
	code, msg, ok := structs.CodeFromRPCCodedErr(s.RPC("ACL.Bootstrap", &structs.ACLTokenBootstrapRequest{}, &reply))
	must.True(t, ok)
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, "ACL support disabled", msg)
}

// TestACL_EnforcedOnRPC: a token's policies decide what it may call, in
// process and over the network RPC port alike.
func TestACL_EnforcedOnRPC(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)

	var gen structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies:     []*structs.ACLPolicy{{Name: "reader", Rules: `namespace "default" { policy = "read" }`}},
		WriteRequest: structs.WriteRequest{AuthToken: root.SecretID},
	}, &gen))
	var tokens structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{
		Tokens:       []*structs.ACLToken{{Name: "r", Type: structs.ACLClientToken, Policies: []string{"reader"}}},
		WriteRequest: structs.WriteRequest{AuthToken: root.SecretID},
	}, &tokens))
	reader := tokens.Tokens[0]

	list := func(secret, ns string) error {
		var reply structs.JobListResponse
		return s.RPC("Job.List", &structs.JobListRequest{QueryOptions: structs.QueryOptions{AuthToken: secret, Namespace: ns}}, &reply)
	}
	must.ErrorContains(t, list("", "default"), "Permission denied")
	must.NoError(t, list(reader.SecretID, "default"))
	must.ErrorContains(t, list(reader.SecretID, "other"), "Permission denied")
	must.ErrorContains(t, list(structs.GenerateUUID(), "default"), "ACL token not found")

	job := mockJob("web")
	var reg structs.JobRegisterResponse
	err := s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: structs.WriteRequest{AuthToken: reader.SecretID}}, &reg)
	must.ErrorContains(t, err, "Permission denied")
	got, err := s.State().JobByID(nil, "default", "web")
	must.NoError(t, err)
	must.Nil(t, got, must.Sprint("a refused write must not reach state"))
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: mockJob("web"), WriteRequest: structs.WriteRequest{AuthToken: root.SecretID}}, &reg))

	// Over the network RPC port, the same check applies.
	pool := msgpackrpc.NewPool(time.Minute)
	t.Cleanup(func() { pool.Shutdown() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var reply structs.JobListResponse
	err = pool.Call(ctx, s.RPCAddr().String(), "Job.List", &structs.JobListRequest{}, &reply)
	must.ErrorContains(t, err, "Permission denied")
	must.NoError(t, pool.Call(ctx, s.RPCAddr().String(), "Job.List", &structs.JobListRequest{QueryOptions: structs.QueryOptions{AuthToken: reader.SecretID}}, &reply))
	must.Len(t, 1, reply.Jobs)

	// An expired or deleted token stops working at once.
	must.NoError(t, s.RPC("ACL.DeleteTokens", &structs.ACLTokenDeleteRequest{AccessorIDs: []string{reader.AccessorID},
		WriteRequest: structs.WriteRequest{AuthToken: root.SecretID}}, &gen))
	must.ErrorContains(t, list(reader.SecretID, "default"), "ACL token not found")
}

func TestACL_AnonymousPolicy(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)
	list := func() error {
		var reply structs.JobListResponse
		return s.RPC("Job.List", &structs.JobListRequest{}, &reply)
	}
	must.ErrorContains(t, list(), "Permission denied")
	var gen structs.GenericResponse
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies:     []*structs.ACLPolicy{{Name: structs.AnonymousACLPolicy, Rules: `namespace "*" { policy = "read" }`}},
		WriteRequest: structs.WriteRequest{AuthToken: root.SecretID},
	}, &gen))
	must.NoError(t, list())
}

func TestACL_TokenValidation(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)
	w := structs.WriteRequest{AuthToken: root.SecretID}
	cases := []struct {
		name  string
		token *structs.ACLToken
		want  string
	}{
		{"client without policies", &structs.ACLToken{Type: structs.ACLClientToken}, "client token missing policies or roles"},
		{"management with policies", &structs.ACLToken{Type: structs.ACLManagementToken, Policies: []string{"x"}}, "management token cannot be associated"},
		{"bad type", &structs.ACLToken{Type: "admin", Policies: []string{"x"}}, `token type must be client or management, not "admin"`},
		{"ttl too short", &structs.ACLToken{Type: structs.ACLClientToken, Policies: []string{"x"}, ExpirationTTL: time.Second}, "expiration time cannot be less than"},
		{"unknown role", &structs.ACLToken{Type: structs.ACLClientToken, Roles: []*structs.ACLTokenRoleLink{{Name: "nope"}}}, "cannot find role nope"},
		{"upload management", &structs.ACLToken{AccessorID: structs.GenerateUUID(), SecretID: structs.GenerateUUID(), Type: structs.ACLManagementToken}, "cannot upload management tokens"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var reply structs.ACLTokenUpsertResponse
			err := s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{tc.token}, WriteRequest: w}, &reply)
			must.ErrorContains(t, err, tc.want)
		})
	}
	tokens, err := s.State().ACLTokens(nil, "", false)
	must.NoError(t, err)
	must.Len(t, 1, tokens, must.Sprint("only the bootstrap token: refused writes store nothing"))
}

func TestACL_NamespaceListIsFiltered(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)
	w := structs.WriteRequest{AuthToken: root.SecretID}
	var gen structs.GenericResponse
	must.NoError(t, s.RPC("Namespace.UpsertNamespaces", &structs.NamespaceUpsertRequest{
		Namespaces: []*structs.Namespace{{Name: "team-a"}, {Name: "team-b"}}, WriteRequest: w}, &gen))
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{{Name: "a", Rules: `namespace "team-a" { policy = "read" }`}}, WriteRequest: w}, &gen))
	var tokens structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{
		Tokens: []*structs.ACLToken{{Type: structs.ACLClientToken, Policies: []string{"a"}}}, WriteRequest: w}, &tokens))

	names := func(secret string) []string {
		var reply structs.NamespaceListResponse
		must.NoError(t, s.RPC("Namespace.ListNamespaces", &structs.NamespaceListRequest{QueryOptions: structs.QueryOptions{AuthToken: secret}}, &reply))
		var out []string
		for _, ns := range reply.Namespaces {
			out = append(out, ns.Name)
		}
		return out
	}
	must.Eq(t, []string{"default", "team-a", "team-b"}, names(root.SecretID))
	must.Eq(t, []string{"team-a"}, names(tokens.Tokens[0].SecretID))
	must.Nil(t, names(""))
}

// A policy attached to a job's workload identities would grant nothing
// here: it is refused and nothing is stored.
func TestACL_JobACLRefused(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)
	var gen structs.GenericResponse
	err := s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{{Name: "wid", Rules: `namespace "default" { policy = "read" }`,
			JobACL: &structs.JobACL{Namespace: "default", JobID: "web"}}},
		WriteRequest: structs.WriteRequest{AuthToken: root.SecretID},
	}, &gen)
	must.ErrorContains(t, err, `field "JobACL" is not supported by nomadq`)
	policies, err := s.State().ACLPolicies(nil, "")
	must.NoError(t, err)
	must.SliceEmpty(t, policies)
}

// With ACLs on, a heartbeat from a node the servers do not know (their
// state was restored from a snapshot without it) answers the 404 that
// makes the client register again, not "ACL token not found" for ever;
// a known node's heartbeat with a wrong secret is still refused.
func TestACL_HeartbeatFromUnknownNodeIsNotFound(t *testing.T) {
	s := aclServer(t, nil)
	bootstrap(t, s)
	node := mock.Node(structs.GenerateUUID())
	heartbeat := func(id, secret string) error {
		var reply structs.NodeUpdateResponse
		return s.RPC("Node.UpdateStatus", &structs.NodeUpdateStatusRequest{
			NodeID: id, Status: structs.NodeStatusReady,
			WriteRequest: structs.WriteRequest{Region: "global", AuthToken: secret},
		}, &reply)
	}
	err := heartbeat(node.ID, node.SecretID)
	must.Error(t, err)
	code, _, _ := structs.CodeFromRPCCodedErr(err)
	must.Eq(t, 404, code, must.Sprintf("error: %v", err))
	must.StrContains(t, err.Error(), "node "+node.ID+" not found")

	var reg structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: node, WriteRequest: structs.WriteRequest{Region: "global", AuthToken: node.SecretID}}, &reg))
	must.NoError(t, heartbeat(node.ID, node.SecretID))
	must.ErrorContains(t, heartbeat(node.ID, structs.GenerateUUID()), "ACL token not found")
}

// Node pools are authorized per pool by node_pool rules, as in Nomad: the
// listing keeps the pools the token may read, a read of another pool is
// refused, and writes and deletes need write and delete on every pool
// named.
func TestACL_NodePoolRules(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)
	w := structs.WriteRequest{AuthToken: root.SecretID}
	var gen structs.GenericResponse
	must.NoError(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "gpu"}, {Name: "cpu"}}, WriteRequest: w}, &gen))
	must.NoError(t, s.RPC("ACL.UpsertPolicies", &structs.ACLPolicyUpsertRequest{
		Policies: []*structs.ACLPolicy{
			{Name: "gpu-read", Rules: `node_pool "gpu" { policy = "read" }`},
			{Name: "cpu-write", Rules: `node_pool "cpu" { policy = "write" }`},
		}, WriteRequest: w}, &gen))
	var tok structs.ACLTokenUpsertResponse
	must.NoError(t, s.RPC("ACL.UpsertTokens", &structs.ACLTokenUpsertRequest{
		Tokens: []*structs.ACLToken{{Type: structs.ACLClientToken, Policies: []string{"gpu-read", "cpu-write"}}}, WriteRequest: w}, &tok))
	secret := tok.Tokens[0].SecretID

	var list structs.NodePoolListResponse
	must.NoError(t, s.RPC("NodePool.List", &structs.NodePoolListRequest{QueryOptions: structs.QueryOptions{AuthToken: secret}}, &list))
	var names []string
	for _, p := range list.NodePools {
		names = append(names, p.Name)
	}
	must.Eq(t, []string{"cpu", "gpu"}, names)

	get := func(name string) error {
		var reply structs.SingleNodePoolResponse
		return s.RPC("NodePool.GetNodePool", &structs.NodePoolSpecificRequest{Name: name, QueryOptions: structs.QueryOptions{AuthToken: secret}}, &reply)
	}
	must.NoError(t, get("gpu"))
	must.ErrorContains(t, get("default"), "Permission denied")

	tw := structs.WriteRequest{AuthToken: secret}
	must.ErrorContains(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "gpu", Description: "mine"}}, WriteRequest: tw}, &gen), "Permission denied")
	must.NoError(t, s.RPC("NodePool.UpsertNodePools", &structs.NodePoolUpsertRequest{
		NodePools: []*structs.NodePool{{Name: "cpu", Description: "mine"}}, WriteRequest: tw}, &gen))
	must.ErrorContains(t, s.RPC("NodePool.DeleteNodePools", &structs.NodePoolDeleteRequest{Names: []string{"cpu", "gpu"}, WriteRequest: tw}, &gen), "Permission denied")
	must.NoError(t, s.RPC("NodePool.DeleteNodePools", &structs.NodePoolDeleteRequest{Names: []string{"cpu"}, WriteRequest: tw}, &gen))
}
