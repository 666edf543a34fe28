package nomad

import (
	"fmt"
	"net/http"
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

// nsCap requires capability op in the call's namespace. In the wildcard
// namespace ("*") some namespace must grant it, as in Nomad; listings
// then keep only the entries of namespaces that grant it themselves
// (namespaceFilter).
func nsCap(op string) rule {
	return func(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
		return allowIf(a.AllowNamespaceOperation(aclNamespaceOf(args), op))
	}
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
		if node == nil {
			if hb, ok := args.(*structs.NodeUpdateStatusRequest); ok {
				// A heartbeat from a node the servers do not know (their
				// state was restored from a snapshot without it): the 404
				// that tells the client to register again, as without
				// ACLs. Registration checks the node's secret anew.
				return errUnknownHeartbeatNode(hb.NodeID)
			}
			return structs.ErrPermissionDenied
		}
		if node.SecretID != r.RequestToken() {
			return structs.ErrPermissionDenied
		}
	}
	return nil
}

// unknownHeartbeatNode is nodeSecret's answer to a heartbeat from a node
// that is not in the state: authorizeRPC answers its 404 instead of the
// token resolution's error, so that the client registers again.
type unknownHeartbeatNode struct{ err error }

func (u unknownHeartbeatNode) Error() string { return u.err.Error() }

func errUnknownHeartbeatNode(id string) error {
	return unknownHeartbeatNode{err: structs.NewErrRPCCodedf(http.StatusNotFound, "node %s not found", id)}
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

// allOf passes when every rule passes.
func allOf(rules ...rule) rule {
	return func(s *Server, a *acl.ACL, token *structs.ACLToken, args any) error {
		for _, r := range rules {
			if err := r(s, a, token, args); err != nil {
				return err
			}
		}
		return nil
	}
}

// poolCap requires capability op on every node pool the call names.
func poolCap(op string) rule {
	return func(_ *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
		var names []string
		switch req := args.(type) {
		case *structs.NodePoolSpecificRequest:
			names = []string{req.Name}
		case *structs.NodePoolUpsertRequest:
			for _, p := range req.NodePools {
				if p != nil {
					names = append(names, p.Name)
				}
			}
		case *structs.NodePoolDeleteRequest:
			names = req.Names
		default:
			return structs.ErrPermissionDenied
		}
		if len(names) == 0 {
			// Nothing named: the endpoint refuses the request itself,
			// but only to a token that may do op somewhere.
			return allowIf(a.IsManagement())
		}
		for _, name := range names {
			if !a.AllowNodePoolOperation(name, op) {
				return structs.ErrPermissionDenied
			}
		}
		return nil
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
	"Node.GetClientAllocsBatch": nodeSecrets,
	"Node.UpdateAlloc":          nodeSecret, "Node.Get": either(nodeSecret, nodeRead), "Node.List": nodeRead,
	"Node.UpdateDrain": nodeWrite, "Node.UpdateEligibility": nodeWrite, "Node.Evaluate": nodeWrite,
	"Node.Deregister": nodeWrite,
	// GetAllocs keeps only the allocations of namespaces the token may
	// read jobs in.
	"Node.GetAllocs": nodeRead,

	"Operator.AutopilotGetConfiguration": operatorRead, "Operator.AutopilotSetConfiguration": operatorWrite,
	"Operator.ServerHealth": operatorRead, "Operator.SchedulerGetConfiguration": operatorRead,
	"Operator.SchedulerSetConfiguration": operatorWrite, "Operator.RaftGetConfiguration": operatorRead,
	"Operator.RaftRemovePeerByID": operatorWrite,
	"Scaling.ListPolicies":        scalingListRule,
	// Reading one policy by ID: its namespace is unknown before the read,
	// so the caller needs the capability in the namespace it names.
	"Scaling.GetPolicy": nsCap(acl.NamespaceCapabilityReadScalingPolicy),
	// A snapshot holds every secret in the cluster: management only.
	"Operator.SnapshotSave": management, "Operator.SnapshotRestore": management,

	// Search keeps the contexts and results the token may see, and
	// refuses a context asked for by name that it may not search.
	"Search.PrefixSearch": ruleSelfChecked, "Search.FuzzySearch": ruleSelfChecked,
	"Queue.List": nsCap(acl.NamespaceCapabilityReadJob), "Queue.Status": nsCap(acl.NamespaceCapabilityReadJob),
	// Holding, releasing or topping a queued job changes everyone's line.
	"Queue.Control": operatorWrite,
	// Usage shows the namespaces the token may read jobs in; a reset
	// changes everyone's line.
	"Queue.Usage": nsCap(acl.NamespaceCapabilityReadJob), "Queue.ResetUsage": operatorWrite,
	"System.GarbageCollect": management, "System.ReconcileJobSummaries": management,
	"Keyring.Rotate": management, "Keyring.List": management, "Keyring.Delete": management,

	"Namespace.ListNamespaces": ruleSelfChecked, "Namespace.GetNamespace": nsAnyNamed,
	"Namespace.UpsertNamespaces": management, "Namespace.DeleteNamespaces": management,

	// Node pools as Nomad checks them: node_pool capabilities per pool;
	// the listing keeps the pools the token may read.
	"NodePool.List": ruleSelfChecked, "NodePool.GetNodePool": poolCap(acl.NodePoolCapabilityRead),
	"NodePool.ListNodes":       allOf(nodeRead, poolCap(acl.NodePoolCapabilityRead)),
	"NodePool.ListJobs":        poolCap(acl.NodePoolCapabilityRead),
	"NodePool.UpsertNodePools": poolCap(acl.NodePoolCapabilityWrite), "NodePool.DeleteNodePools": poolCap(acl.NodePoolCapabilityDelete),

	"ACL.Bootstrap": public, "ACL.ResolveToken": public, "ACL.ExchangeOneTimeToken": public,
	"ACL.UpsertPolicies": management, "ACL.DeletePolicies": management,
	"ACL.ListPolicies": ruleSelfChecked, "ACL.GetPolicy": ruleSelfChecked,
	"ACL.UpsertTokens": management, "ACL.DeleteTokens": management, "ACL.ListTokens": management,
	"ACL.GetToken": ruleSelfChecked, "ACL.UpsertOneTimeToken": anyToken,
	// Role reads show a non-management token only the roles it links.
	"ACL.UpsertRoles": management, "ACL.DeleteRolesByID": management, "ACL.ListRoles": ruleSelfChecked,
	"ACL.GetRoleByID": ruleSelfChecked, "ACL.GetRoleByName": ruleSelfChecked,
	// Auth methods are listed to anyone (a login screen offers them);
	// reading one in full and every change need management, as in Nomad.
	// Login is anonymous: the JWT it carries is the credential.
	"ACL.ListAuthMethods": public, "ACL.GetAuthMethod": management,
	"ACL.UpsertAuthMethods": management, "ACL.DeleteAuthMethods": management,
	"ACL.ListBindingRules": management, "ACL.GetBindingRule": management,
	"ACL.UpsertBindingRules": management, "ACL.DeleteBindingRules": management,
	"ACL.Login": public,
	// A token that may write nodes may introduce new ones, as in Nomad.
	"ACL.CreateClientIntroductionToken": nodeWrite,
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
		switch rerr := rl(s, acl.DenyAll, nil, args); {
		case rerr == nil:
			return nil
		case isUnknownHeartbeatNode(rerr):
			return rerr.(unknownHeartbeatNode).err
		}
		return err
	}
	rerr := rl(s, a, token, args)
	if isUnknownHeartbeatNode(rerr) {
		return rerr.(unknownHeartbeatNode).err
	}
	return rerr
}

func isUnknownHeartbeatNode(err error) bool {
	_, ok := err.(unknownHeartbeatNode)
	return ok
}

// forwardedRPCs are the methods whose endpoint begins with s.forward: a
// call may be answered by another server (the leader) than the one that
// received it. They are authorized by forward on the server that answers
// (authorizeHere), not on receipt, so a call is checked once, against the
// state it is answered from: the leader's for writes and consistent
// reads, which holds a token's creation or deletion as soon as the call
// that made it returned, so a revoked token is refused at once through
// every server; this server's own for a stale read, which it answers
// from its state as a whole. TestACL_ForwardedRPCsAuthorizeInForward
// keeps this list equal to the endpoints that call forward.
var forwardedRPCs = map[string]bool{
	"ACL.Bootstrap": true, "ACL.DeleteAuthMethods": true, "ACL.DeleteBindingRules": true, "ACL.GetAuthMethod": true,
	"ACL.GetBindingRule": true, "ACL.ListAuthMethods": true, "ACL.ListBindingRules": true, "ACL.Login": true,
	"ACL.UpsertAuthMethods": true, "ACL.UpsertBindingRules": true, "ACL.DeletePolicies": true, "ACL.DeleteRolesByID": true, "ACL.DeleteTokens": true,
	"ACL.ExchangeOneTimeToken": true, "ACL.GetPolicy": true, "ACL.GetRoleByID": true, "ACL.GetRoleByName": true,
	"ACL.GetToken": true, "ACL.ListPolicies": true, "ACL.ListRoles": true, "ACL.ListTokens": true,
	"ACL.CreateClientIntroductionToken": true, "ACL.UpsertOneTimeToken": true, "ACL.UpsertPolicies": true, "ACL.UpsertRoles": true,
	"ACL.UpsertTokens": true, "Alloc.Get": true, "Alloc.GetAllocs": true, "Alloc.List": true, "Alloc.Stop": true,
	"Eval.Allocations": true, "Eval.Delete": true, "Eval.Get": true, "Eval.List": true, "Job.Allocations": true,
	"Job.Deregister": true, "Job.Dispatch": true, "Job.Evaluate": true, "Job.Evaluations": true, "Job.Get": true,
	"Job.GetJobSubmission": true, "Job.List": true, "Job.PeriodicForce": true, "Job.Plan": true,
	"Job.Register": true, "Job.Revert": true, "Job.Scale": true, "Job.ScaleStatus": true, "Job.Stable": true,
	"Job.Statuses": true, "Job.Summary": true, "Job.Versions": true, "Keyring.Delete": true,
	"Keyring.List": true, "Keyring.ListPublic": true, "Keyring.Rotate": true, "Namespace.DeleteNamespaces": true,
	"Namespace.GetNamespace": true, "Namespace.ListNamespaces": true, "Namespace.UpsertNamespaces": true,
	"Node.Deregister": true, "Node.Evaluate": true, "Node.Get": true, "Node.GetAllocs": true,
	"Node.GetClientAllocs": true, "Node.GetClientAllocsBatch": true, "Node.List": true, "Node.Register": true, "Node.UpdateAlloc": true,
	"Node.UpdateDrain": true, "Node.UpdateEligibility": true, "Node.UpdateStatus": true,
	"NodePool.DeleteNodePools": true, "NodePool.GetNodePool": true, "NodePool.List": true,
	"NodePool.ListJobs": true, "NodePool.ListNodes": true, "NodePool.UpsertNodePools": true,
	"Operator.AutopilotGetConfiguration": true, "Operator.AutopilotSetConfiguration": true,
	"Operator.RaftGetConfiguration": true, "Operator.RaftRemovePeerByID": true,
	"Operator.SchedulerGetConfiguration": true, "Operator.SchedulerSetConfiguration": true,
	"Operator.ServerHealth": true, "Operator.SnapshotRestore": true, "Operator.SnapshotSave": true,
	"Queue.Control": true, "Queue.List": true, "Queue.Status": true, "Scaling.GetPolicy": true,
	"Queue.Usage": true, "Queue.ResetUsage": true,
	"Scaling.ListPolicies": true, "Search.FuzzySearch": true, "Search.PrefixSearch": true,
	"System.GarbageCollect": true, "System.ReconcileJobSummaries": true, "Variables.Apply": true,
	"Variables.List": true, "Variables.Read": true, "Variables.RenewLock": true,
}

// authCodec checks each request's ACL after decoding it; a refused call
// never reaches its endpoint, and its caller gets the error. Forwarded
// methods are checked by forward instead (forwardedRPCs).
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
	if forwardedRPCs[c.method] {
		return nil
	}
	return c.srv.authorizeRPC(c.method, body)
}

// namespaceFilter is the check a listing applies to each entry's
// namespace: it passes where the caller (by its secret) holds any of
// ops. A listing over every namespace ("*") passes its rule when some
// namespace grants the capability, as in Nomad, and keeps through this
// only the entries the token may see.
func (s *Server) namespaceFilter(secret string, ops ...string) (func(ns string) bool, error) {
	a, _, err := s.ResolveACL(secret)
	if err != nil {
		return nil, err
	}
	return a.AllowNamespaceOperationFunc(ops...), nil
}

// namespaced is an object read by ID that lives in one namespace.
type namespaced interface {
	comparable
	GetNamespace() string
}

// visible is obj when the caller (allow, from namespaceFilter) may see
// its namespace, and the zero value (nil) otherwise: a read by ID is
// authorized against the object's own namespace, not the one the request
// names, and answers an object the caller may not read as if it did not
// exist, so a refusal does not tell that it does.
func visible[T namespaced](obj T, allow func(ns string) bool) T {
	var none T
	if obj == none || !allow(obj.GetNamespace()) {
		return none
	}
	return obj
}
