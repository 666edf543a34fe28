package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/internal/mock"
	"github.com/nomadq/nomadq/structs"
)

// serviceFixture is an ACL server with two registered nodes, each running
// one alloc of job "web".
type serviceFixture struct {
	s            *Server
	root         string
	nodeA, nodeB *structs.Node
	allocA       *structs.Allocation
	allocB       *structs.Allocation
}

func newServiceFixture(t *testing.T) *serviceFixture {
	s := aclServer(t, func(c *Config) {
		c.NumSchedulers = 0
		c.MinHeartbeatTTL = 10 * time.Minute
	})
	f := &serviceFixture{s: s, root: bootstrap(t, s).SecretID}
	f.nodeA, f.nodeB = mockNode(structs.GenerateUUID()), mockNode(structs.GenerateUUID())
	for _, n := range []*structs.Node{f.nodeA, f.nodeB} {
		var nr structs.NodeUpdateResponse
		must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: n}, &nr))
	}
	job := mockJob("web")
	latest, err := s.State().LatestIndex()
	must.NoError(t, err)
	must.NoError(t, s.State().UpsertJob(latest+1, job))
	f.allocA, f.allocB = mock.Alloc(job, f.nodeA, ""), mock.Alloc(job, f.nodeB, "")
	f.allocA.ClientStatus, f.allocB.ClientStatus = structs.AllocClientStatusRunning, structs.AllocClientStatusRunning
	must.NoError(t, s.State().UpsertAllocs(latest+2, []*structs.Allocation{f.allocA, f.allocB}))
	return f
}

func regOf(alloc *structs.Allocation, name string, port int) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{
		ID:          fmt.Sprintf("_nomad-task-%s-group-web-%s-http", alloc.ID, name),
		ServiceName: name, Namespace: alloc.Namespace, NodeID: alloc.NodeID, Datacenter: "dc1",
		JobID: alloc.JobID, AllocID: alloc.ID, Tags: []string{"v1"}, Address: "10.0.0.1", Port: port,
	}
}

func (f *serviceFixture) upsert(secret string, regs ...*structs.ServiceRegistration) error {
	req := &structs.ServiceRegistrationUpsertRequest{Services: regs}
	req.AuthToken = secret
	return f.s.RPC(structs.ServiceRegistrationUpsertRPCMethod, req, &structs.ServiceRegistrationUpsertResponse{})
}

func (f *serviceFixture) get(secret, ns, name, choose string) ([]*structs.ServiceRegistration, error) {
	req := &structs.ServiceRegistrationByNameRequest{ServiceName: name, Choose: choose}
	req.AuthToken, req.Namespace = secret, ns
	var reply structs.ServiceRegistrationByNameResponse
	err := f.s.RPC(structs.ServiceRegistrationGetServiceRPCMethod, req, &reply)
	return reply.Services, err
}

// tokenWith stores a client token whose one policy is rules.
func (f *serviceFixture) tokenWith(t *testing.T, name, rules string) string {
	t.Helper()
	preq := &structs.ACLPolicyUpsertRequest{Policies: []*structs.ACLPolicy{{Name: name, Rules: rules}}}
	preq.AuthToken = f.root
	must.NoError(t, f.s.RPC("ACL.UpsertPolicies", preq, &structs.GenericResponse{}))
	treq := &structs.ACLTokenUpsertRequest{Tokens: []*structs.ACLToken{{Name: name, Type: structs.ACLClientToken, Policies: []string{name}}}}
	treq.AuthToken = f.root
	var treply structs.ACLTokenUpsertResponse
	must.NoError(t, f.s.RPC("ACL.UpsertTokens", treq, &treply))
	return treply.Tokens[0].SecretID
}

func TestServiceRegistration_ClientsWriteTheirOwn(t *testing.T) {
	f := newServiceFixture(t)
	must.NoError(t, f.upsert(f.nodeA.SecretID, regOf(f.allocA, "web", 8080)))
	must.NoError(t, f.upsert(f.nodeB.SecretID, regOf(f.allocB, "web", 9090)))

	// A node cannot register another node's services, nor can a token
	// without management or no token.
	must.ErrorContains(t, f.upsert(f.nodeB.SecretID, regOf(f.allocA, "web", 8081)), "403")
	reader := f.tokenWith(t, "reader", `namespace "default" { policy = "read" }`)
	must.ErrorContains(t, f.upsert(reader, regOf(f.allocA, "web", 8081)), "403")
	must.ErrorContains(t, f.upsert("", regOf(f.allocA, "web", 8081)), "403")
	bad := regOf(f.allocA, "", 1)
	must.ErrorContains(t, f.upsert(f.nodeA.SecretID, bad), "service registration 0: missing service name")

	// Reading: a node's secret, a read-job token; not a token without it.
	got, err := f.get(f.nodeB.SecretID, "default", "web", "")
	must.NoError(t, err)
	must.Len(t, 2, got)
	got, err = f.get(reader, "default", "web", "")
	must.NoError(t, err)
	must.Len(t, 2, got)
	nodeOnly := f.tokenWith(t, "nodes", `node { policy = "read" }`)
	_, err = f.get(nodeOnly, "default", "web", "")
	must.ErrorContains(t, err, "403")

	var list structs.ServiceRegistrationListResponse
	lreq := &structs.ServiceRegistrationListRequest{}
	lreq.AuthToken, lreq.Namespace = nodeOnly, "*"
	must.NoError(t, f.s.RPC(structs.ServiceRegistrationListRPCMethod, lreq, &list))
	must.SliceEmpty(t, list.Services, must.Sprint("a listing of every namespace shows none the token may not read"))
	lreq.AuthToken = reader
	must.NoError(t, f.s.RPC(structs.ServiceRegistrationListRPCMethod, lreq, &list))
	must.Eq(t, []*structs.ServiceRegistrationListStub{{Namespace: "default", Services: []*structs.ServiceRegistrationStub{{ServiceName: "web", Tags: []string{"v1"}}}}}, list.Services)

	// Deleting: the owning node, or submit-job; not another node.
	del := func(secret, id string) error {
		req := &structs.ServiceRegistrationDeleteByIDRequest{ID: id}
		req.AuthToken, req.Namespace = secret, "default"
		return f.s.RPC(structs.ServiceRegistrationDeleteByIDRPCMethod, req, &structs.ServiceRegistrationDeleteByIDResponse{})
	}
	must.ErrorContains(t, del(f.nodeB.SecretID, regOf(f.allocA, "web", 0).ID), "403")
	must.ErrorContains(t, del(reader, regOf(f.allocA, "web", 0).ID), "403")
	must.NoError(t, del(f.nodeA.SecretID, regOf(f.allocA, "web", 0).ID))
	writer := f.tokenWith(t, "writer", `namespace "default" { policy = "write" }`)
	must.NoError(t, del(writer, regOf(f.allocB, "web", 0).ID))
	must.ErrorContains(t, del(writer, regOf(f.allocB, "web", 0).ID), "not found")
	got, err = f.get(reader, "default", "web", "")
	must.NoError(t, err)
	must.SliceEmpty(t, got)
}

func TestServiceRegistration_Choose(t *testing.T) {
	f := newServiceFixture(t)
	var regs []*structs.ServiceRegistration
	for i := range 5 {
		r := regOf(f.allocA, fmt.Sprintf("web-%d", i), 8000+i)
		r.ServiceName = "web"
		regs = append(regs, r)
	}
	must.NoError(t, f.upsert(f.nodeA.SecretID, regs...))

	one, err := f.get(f.root, "default", "web", "2|alloc-1")
	must.NoError(t, err)
	must.Len(t, 2, one)
	again, err := f.get(f.root, "default", "web", "2|alloc-1")
	must.NoError(t, err)
	must.Eq(t, one, again, must.Sprint("the same key picks the same instances"))
	// Different keys spread over the instances.
	firsts := map[int]bool{}
	for i := range 20 {
		got, err := f.get(f.root, "default", "web", fmt.Sprintf("1|alloc-%d", i))
		must.NoError(t, err)
		must.Len(t, 1, got)
		firsts[got[0].Port] = true
	}
	must.Greater(t, 1, len(firsts))
	all, err := f.get(f.root, "default", "web", "9|k")
	must.NoError(t, err)
	must.Len(t, 5, all, must.Sprint("asking for more than there are returns them all"))

	for _, bad := range []string{"x|k", "2", "2|", "-1|k"} {
		_, err := f.get(f.root, "default", "web", bad)
		must.ErrorContains(t, err, "Parameter for choose must be in form '<number>|<key>'", must.Sprint(bad))
	}
}

func TestServiceRegistration_GoneWhenNodeDown(t *testing.T) {
	f := newServiceFixture(t)
	must.NoError(t, f.upsert(f.nodeA.SecretID, regOf(f.allocA, "web", 8080)))
	must.NoError(t, f.upsert(f.nodeB.SecretID, regOf(f.allocB, "web", 9090)))

	req := &structs.NodeUpdateStatusRequest{NodeID: f.nodeA.ID, Status: structs.NodeStatusDown}
	req.AuthToken = f.root
	must.NoError(t, f.s.RPC("Node.UpdateStatus", req, &structs.NodeUpdateResponse{}))
	got, err := f.get(f.root, "default", "web", "")
	must.NoError(t, err)
	must.Len(t, 1, got)
	must.Eq(t, f.nodeB.ID, got[0].NodeID)

	dreq := &structs.NodeEvaluateRequest{NodeID: f.nodeB.ID}
	dreq.AuthToken = f.root
	must.NoError(t, f.s.RPC("Node.Deregister", dreq, &structs.NodeEvalResponse{}))
	got, err = f.get(f.root, "default", "web", "")
	must.NoError(t, err)
	must.SliceEmpty(t, got)
}

func TestServiceRegistration_BlockingRead(t *testing.T) {
	f := newServiceFixture(t)
	req := &structs.ServiceRegistrationByNameRequest{ServiceName: "web"}
	req.AuthToken, req.Namespace = f.root, "default"
	var first structs.ServiceRegistrationByNameResponse
	must.NoError(t, f.s.RPC(structs.ServiceRegistrationGetServiceRPCMethod, req, &first))
	must.SliceEmpty(t, first.Services)
	must.Positive(t, first.Index, must.Sprint("an index to block on even before the first registration"))

	got := make(chan structs.ServiceRegistrationByNameResponse, 1)
	go func() {
		blocking := *req
		blocking.MinQueryIndex = first.Index
		blocking.MaxQueryTime = int64(30 * time.Second)
		var reply structs.ServiceRegistrationByNameResponse
		_ = f.s.RPC(structs.ServiceRegistrationGetServiceRPCMethod, &blocking, &reply)
		got <- reply
	}()
	must.NoError(t, f.upsert(f.nodeA.SecretID, regOf(f.allocA, "web", 8080)))
	select {
	case reply := <-got:
		must.Len(t, 1, reply.Services)
		must.Greater(t, first.Index, reply.Index)
	case <-time.After(30 * time.Second):
		t.Fatal("the blocking read did not wake on the registration")
	}
}
