package nomad

import (
	"fmt"
	"net/rpc"
	"slices"
	"strings"
	"sync"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// authorizer is what an RPC's arguments show of the caller: its token and
// the namespace the call acts in. Every request type embeds QueryOptions
// or WriteRequest, which provide both.
type authorizer interface {
	RequestToken() string
	RequestNamespace() string
}

// rule decides whether the caller (its ACL and token, nil for anonymous)
// may make one call with args.
type rule func(s *Server, a *acl.ACL, token *structs.ACLToken, args any) error

func allowIf(ok bool) error {
	if ok {
		return nil
	}
	return structs.ErrPermissionDenied
}

// public: anyone, token or not (status, the public keyring, bootstrap).
func public(*Server, *acl.ACL, *structs.ACLToken, any) error { return nil }

// ruleSelfChecked: the endpoint checks the caller itself (it lists only
// what the token may see, or allows a token to read itself).
func ruleSelfChecked(*Server, *acl.ACL, *structs.ACLToken, any) error { return nil }

func management(_ *Server, a *acl.ACL, _ *structs.ACLToken, _ any) error {
	return allowIf(a.IsManagement())
}

// aclNamespaceOf is the namespace a call acts in; for job writes it is the
// job's own namespace, so a token cannot write into another namespace by
// naming it only in the body.
func aclNamespaceOf(args any) string {
	ns := structs.DefaultNamespace
	if r, ok := args.(authorizer); ok {
		ns = r.RequestNamespace()
	}
	var job *structs.Job
	switch req := args.(type) {
	case *structs.JobRegisterRequest:
		job = req.Job
	case *structs.JobPlanRequest:
		job = req.Job
	}
	if job != nil && job.Namespace != "" {
		ns = job.Namespace
	}
	return ns
}

// nsCap requires capability op in the call's namespace. A wildcard
// namespace ("*") needs the capability through a policy for every
// namespace ("*"), since the answer is not filtered per namespace.
func nsCap(op string) rule {
	return func(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
		return allowIf(a.AllowNamespaceOperation(aclNamespaceOf(args), op))
	}
}

// nsAny requires any capability in the call's namespace.
func nsAny(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	return allowIf(a.AllowNamespace(aclNamespaceOf(args)))
}

func nodeRead(_ *Server, a *acl.ACL, _ *structs.ACLToken, _ any) error {
	return allowIf(a.AllowNodeRead())
}
func nodeWrite(_ *Server, a *acl.ACL, _ *structs.ACLToken, _ any) error {
	return allowIf(a.AllowNodeWrite())
}
func operatorRead(_ *Server, a *acl.ACL, _ *structs.ACLToken, _ any) error {
	return allowIf(a.AllowOperatorRead())
}
func operatorWrite(_ *Server, a *acl.ACL, _ *structs.ACLToken, _ any) error {
	return allowIf(a.AllowOperatorWrite())
}

// anyToken: a valid token of any kind.
func anyToken(_ *Server, _ *acl.ACL, token *structs.ACLToken, _ any) error {
	return allowIf(token != nil)
}

// nodeSecret: a client calling for its own node, authenticated by the
// node's secret as its token (or a management token).
func nodeSecret(s *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	if a.IsManagement() {
		return nil
	}
	r, ok := args.(authorizer)
	if !ok || r.RequestToken() == "" {
		return structs.ErrPermissionDenied
	}
	st := s.State()
	ids, err := nodeIDsOf(st, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return structs.ErrPermissionDenied
	}
	for _, id := range ids {
		node, err := st.NodeByID(nil, id)
		if err != nil {
			return err
		}
		if node == nil || node.SecretID != r.RequestToken() {
			return structs.ErrPermissionDenied
		}
	}
	return nil
}

// nodeIDsOf lists the nodes a client call acts for: the node it names,
// or the nodes of the allocs it reads or updates.
func nodeIDsOf(st *state.StateStore, args any) ([]string, error) {
	var ids []string
	add := func(id string) {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch req := args.(type) {
	case *structs.NodeSpecificRequest:
		add(req.NodeID)
	case *structs.NodeUpdateStatusRequest:
		add(req.NodeID)
	case *structs.AllocUpdateRequest:
		for _, a := range req.Alloc {
			if a != nil {
				add(a.NodeID)
			}
		}
	case *structs.AllocsGetRequest:
		for _, id := range req.AllocIDs {
			a, err := st.AllocByID(nil, id)
			if err != nil {
				return nil, err
			}
			if a != nil {
				add(a.NodeID)
			}
		}
	}
	return ids, nil
}

// either passes when any of the rules passes.
func either(rules ...rule) rule {
	return func(s *Server, a *acl.ACL, token *structs.ACLToken, args any) error {
		var err error
		for _, r := range rules {
			if err = r(s, a, token, args); err == nil {
				return nil
			}
		}
		return err
	}
}

// rpcRules is the capability each RPC needs, as Nomad checks it. A method
// missing here is refused to everyone but management tokens, and a test
// fails for every registered method without a rule.
var rpcRules = map[string]rule{
	"Status.Leader": public, "Status.Peers": public, "Status.Members": public, "Status.RaftStats": public,
	"Region.List": public, "Keyring.ListPublic": public,

	"Job.Register": nsCap(acl.NamespaceCapabilitySubmitJob), "Job.Deregister": nsCap(acl.NamespaceCapabilitySubmitJob),
	"Job.Get": nsCap(acl.NamespaceCapabilityReadJob), "Job.List": nsCap(acl.NamespaceCapabilityListJobs),
	"Job.Allocations": nsCap(acl.NamespaceCapabilityReadJob), "Job.Evaluations": nsCap(acl.NamespaceCapabilityReadJob),
	"Job.Summary": nsCap(acl.NamespaceCapabilityReadJob), "Job.Dispatch": nsCap(acl.NamespaceCapabilityDispatchJob),
	"Job.Revert": nsCap(acl.NamespaceCapabilitySubmitJob), "Job.Stable": nsCap(acl.NamespaceCapabilitySubmitJob),
	"Job.Scale":            either(nsCap(acl.NamespaceCapabilityScaleJob), nsCap(acl.NamespaceCapabilitySubmitJob)),
	"Job.ScaleStatus":      either(nsCap(acl.NamespaceCapabilityReadJobScaling), nsCap(acl.NamespaceCapabilityReadJob)),
	"Job.GetJobSubmission": nsCap(acl.NamespaceCapabilityReadJob), "Job.Plan": nsCap(acl.NamespaceCapabilitySubmitJob),
	"Job.Versions": nsCap(acl.NamespaceCapabilityReadJob), "Job.Evaluate": nsCap(acl.NamespaceCapabilitySubmitJob),
	"Job.Statuses": nsCap(acl.NamespaceCapabilityReadJob), "Job.PeriodicForce": nsCap(acl.NamespaceCapabilityDispatchJob),

	"Eval.Get": nsCap(acl.NamespaceCapabilityReadJob), "Eval.List": nsCap(acl.NamespaceCapabilityReadJob),
	"Eval.Allocations": nsCap(acl.NamespaceCapabilityReadJob), "Eval.Delete": management,

	"Alloc.Get": nsCap(acl.NamespaceCapabilityReadJob), "Alloc.List": nsCap(acl.NamespaceCapabilityReadJob),
	"Alloc.GetAllocs": either(nodeSecret, nsCap(acl.NamespaceCapabilityReadJob)),
	// Alloc.Stop checks alloc-lifecycle in the alloc's own namespace.
	"Alloc.Stop": ruleSelfChecked,

	// A new node registers with the secret it made up; a known node must
	// present its secret, which Node.Register checks itself.
	"Node.Register": public, "Node.UpdateStatus": nodeSecret, "Node.GetClientAllocs": either(nodeSecret, nodeRead),
	"Node.UpdateAlloc": nodeSecret, "Node.Get": either(nodeSecret, nodeRead), "Node.List": nodeRead,
	"Node.UpdateDrain": nodeWrite, "Node.UpdateEligibility": nodeWrite, "Node.Evaluate": nodeWrite,
	"Node.Deregister": nodeWrite,
	// GetAllocs keeps only the allocations of namespaces the token may
	// read jobs in.
	"Node.GetAllocs": nodeRead,

	"Operator.AutopilotGetConfiguration": operatorRead, "Operator.AutopilotSetConfiguration": operatorWrite,
	"Operator.ServerHealth": operatorRead, "Operator.SchedulerGetConfiguration": operatorRead,
	"Operator.SchedulerSetConfiguration": operatorWrite, "Operator.RaftGetConfiguration": operatorRead,
	"Operator.RaftRemovePeerByID": operatorWrite,
	"Scaling.ListPolicies":        nsCap(acl.NamespaceCapabilityListScalingPolicies),
	// Reading one policy by ID: its namespace is unknown before the read,
	// so the caller needs the capability in the namespace it names.
	"Scaling.GetPolicy": nsCap(acl.NamespaceCapabilityReadScalingPolicy),
	// A snapshot holds every secret in the cluster: management only.
	"Operator.SnapshotSave": management, "Operator.SnapshotRestore": management,

	"Search.PrefixSearch": nsAny, "Search.FuzzySearch": nsAny,
	"Queue.List": nsCap(acl.NamespaceCapabilityReadJob), "Queue.Status": nsCap(acl.NamespaceCapabilityReadJob),
	// Holding, releasing or topping a queued job changes everyone's line.
	"Queue.Control":         operatorWrite,
	"System.GarbageCollect": management, "System.ReconcileJobSummaries": management,
	"Keyring.Rotate": management, "Keyring.List": management, "Keyring.Delete": management,

	"Namespace.ListNamespaces": ruleSelfChecked, "Namespace.GetNamespace": nsAnyNamed,
	"Namespace.UpsertNamespaces": management, "Namespace.DeleteNamespaces": management,

	"NodePool.List": nodeRead, "NodePool.GetNodePool": nodeRead, "NodePool.ListNodes": nodeRead,
	"NodePool.ListJobs":        either(nodeRead, nsCap(acl.NamespaceCapabilityListJobs)),
	"NodePool.UpsertNodePools": management, "NodePool.DeleteNodePools": management,

	"ACL.Bootstrap": public, "ACL.ResolveToken": public, "ACL.ExchangeOneTimeToken": public,
	"ACL.UpsertPolicies": management, "ACL.DeletePolicies": management,
	"ACL.ListPolicies": ruleSelfChecked, "ACL.GetPolicy": ruleSelfChecked,
	"ACL.UpsertTokens": management, "ACL.DeleteTokens": management, "ACL.ListTokens": management,
	"ACL.GetToken": ruleSelfChecked, "ACL.UpsertOneTimeToken": anyToken,
	"ACL.UpsertRoles": management, "ACL.DeleteRolesByID": management, "ACL.ListRoles": management,
	"ACL.GetRoleByID": management, "ACL.GetRoleByName": management,
	// Auth methods are listed to anyone (a login screen offers them);
	// reading one in full and every change need management, as in Nomad.
	// Login is anonymous: the JWT it carries is the credential.
	"ACL.ListAuthMethods": public, "ACL.GetAuthMethod": management,
	"ACL.UpsertAuthMethods": management, "ACL.DeleteAuthMethods": management,
	"ACL.ListBindingRules": management, "ACL.GetBindingRule": management,
	"ACL.UpsertBindingRules": management, "ACL.DeleteBindingRules": management,
	"ACL.Login": public,
}

// nsAnyNamed: any capability in the namespace the call names (reading a
// namespace object).
func nsAnyNamed(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	if req, ok := args.(*structs.NamespaceSpecificRequest); ok {
		return allowIf(a.AllowNamespace(req.Name))
	}
	return structs.ErrPermissionDenied
}

// ResolveACL returns the ACL of a secret: Management when ACLs are off,
// the anonymous policy's (or nothing) for "", an error for an unknown or
// expired secret.
func (s *Server) ResolveACL(secret string) (*acl.ACL, *structs.ACLToken, error) {
	if !s.config.ACLEnabled || secret != "" && secret == s.leaderACL {
		return acl.Management, nil, nil
	}
	st := s.State()
	token, err := s.tokenForSecret(st, secret)
	if err != nil {
		return nil, nil, err
	}
	if token != nil && token.Type == structs.ACLManagementToken {
		return acl.Management, token, nil
	}
	names, err := tokenPolicyNames(st, token)
	if err != nil {
		return nil, nil, err
	}
	a, err := s.aclCache.compile(st, names)
	return a, token, err
}

// aclCache keeps compiled ACLs by the policies (and their versions) they
// were built from, so a request does not parse policy text.
type aclCache struct {
	mu      sync.Mutex
	entries map[string]*acl.ACL
}

const aclCacheSize = 512

func (c *aclCache) compile(st *state.StateStore, names []string) (*acl.ACL, error) {
	var policies []*structs.ACLPolicy
	var key strings.Builder
	slices.Sort(names)
	for _, n := range slices.Compact(names) {
		p, err := st.ACLPolicyByName(nil, n)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue // a token may name a policy that does not exist (yet)
		}
		policies = append(policies, p)
		fmt.Fprintf(&key, "%s@%d;", p.Name, p.ModifyIndex)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if a, ok := c.entries[key.String()]; ok {
		return a, nil
	}
	parsed := make([]*acl.Policy, 0, len(policies))
	for _, p := range policies {
		pp, err := acl.Parse(p.Rules)
		if err != nil {
			return nil, fmt.Errorf("stored ACL policy %q does not parse: %w", p.Name, err)
		}
		parsed = append(parsed, pp)
	}
	a := acl.New(parsed)
	if c.entries == nil || len(c.entries) >= aclCacheSize {
		c.entries = map[string]*acl.ACL{}
	}
	c.entries[key.String()] = a
	return a, nil
}

// authorizeRPC applies method's rule to a decoded request.
func (s *Server) authorizeRPC(method string, args any) error {
	if !s.config.ACLEnabled {
		return nil
	}
	r, ok := args.(authorizer)
	secret := ""
	if ok {
		secret = r.RequestToken()
	}
	rl, known := rpcRules[method]
	if rl == nil {
		rl = management
	}
	if !known {
		s.logger.Warn("RPC without an ACL rule; only management tokens may call it", "method", method)
	}
	a, token, err := s.ResolveACL(secret)
	if err != nil {
		// A secret that is no ACL token (a node's secret, or none that
		// exists): only a rule that needs no ACL can pass it (public
		// calls, a node acting for itself); any other answers the
		// resolution's error.
		if rl(s, acl.DenyAll, nil, args) == nil {
			return nil
		}
		return err
	}
	return rl(s, a, token, args)
}

// authCodec checks each request's ACL after decoding it; a refused call
// never reaches its endpoint, and its caller gets the error.
type authCodec struct {
	rpc.ServerCodec
	srv    *Server
	method string
}

func (c *authCodec) ReadRequestHeader(r *rpc.Request) error {
	if err := c.ServerCodec.ReadRequestHeader(r); err != nil {
		return err
	}
	c.method = r.ServiceMethod
	return nil
}

func (c *authCodec) ReadRequestBody(body any) error {
	if err := c.ServerCodec.ReadRequestBody(body); err != nil || body == nil {
		return err
	}
	return c.srv.authorizeRPC(c.method, body)
}
