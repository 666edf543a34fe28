package agent

import (
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/structs"
)

// httpRule decides whether a request to one route may proceed, before its
// handler runs. Routes whose handlers call server RPCs are checked there
// (byRPC); the rest are served by this agent alone and checked here.
type httpRule func(h *httpHandler, r *http.Request) error

// byRPC: the route's handler passes the caller's token to a server RPC,
// which checks it (nomad/acl_authorize.go).
func byRPC(*httpHandler, *http.Request) error { return nil }

// httpPublic: anyone (health, metrics, the JWKS).
func httpPublic(*httpHandler, *http.Request) error { return nil }

func needACL(check func(*acl.ACL) bool) httpRule {
	return func(h *httpHandler, r *http.Request) error {
		a, err := h.agent.resolveACL(authToken(r))
		if err != nil {
			return err
		}
		if !check(a) {
			return errPermissionDenied
		}
		return nil
	}
}

var (
	agentRead  = needACL((*acl.ACL).AllowAgentRead)
	agentWrite = needACL((*acl.ACL).AllowAgentWrite)
	nodeRead   = needACL((*acl.ACL).AllowNodeRead)
)

// readOrWrite applies read to GETs and write to everything else.
func readOrWrite(read, write httpRule) httpRule {
	return func(h *httpHandler, r *http.Request) error {
		if r.Method == http.MethodGet {
			return read(h, r)
		}
		return write(h, r)
	}
}

// nsFromQuery requires op in the request's namespace (query parameter,
// "default" when absent).
func nsFromQuery(op string) httpRule {
	return needACLReq(func(a *acl.ACL, r *http.Request) bool {
		ns := r.URL.Query().Get("namespace")
		if ns == "" {
			ns = structs.DefaultNamespace
		}
		return a.AllowNamespaceOperation(ns, op)
	})
}

func needACLReq(check func(*acl.ACL, *http.Request) bool) httpRule {
	return func(h *httpHandler, r *http.Request) error {
		a, err := h.agent.resolveACL(authToken(r))
		if err != nil {
			return err
		}
		if !check(a, r) {
			return errPermissionDenied
		}
		return nil
	}
}

// allocCap requires op in the namespace of the alloc the path names
// (after prefix). The alloc is read through the server with the caller's
// token, which itself needs read-job there.
func allocCap(prefix string, op func(rest string, r *http.Request) string) httpRule {
	return func(h *httpHandler, r *http.Request) error {
		a, err := h.agent.resolveACL(authToken(r))
		if err != nil {
			return err
		}
		if a.IsManagement() {
			return nil
		}
		id, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, prefix), "/")
		var args structs.AllocSpecificRequest
		args.AllocID = id
		args.AuthToken = authToken(r)
		args.Namespace = r.URL.Query().Get("namespace")
		var alloc structs.SingleAllocResponse
		if err := h.agent.rpc("Alloc.Get", &args, &alloc); err != nil {
			return rpcError(err)
		}
		if alloc.Alloc == nil {
			return codedErr(http.StatusNotFound, "Unknown allocation %q", id)
		}
		if !a.AllowNamespaceOperation(alloc.Alloc.Namespace, op(rest, r)) {
			return errPermissionDenied
		}
		return nil
	}
}

func fixedOp(op string) func(string, *http.Request) string {
	return func(string, *http.Request) string { return op }
}

// clientAllocOp is the capability of /v1/client/allocation/:id/<rest>.
func clientAllocOp(rest string, r *http.Request) string {
	switch {
	case strings.HasPrefix(rest, "exec"):
		return acl.NamespaceCapabilityAllocExec
	case strings.HasPrefix(rest, "stats"), strings.HasPrefix(rest, "checks"):
		return acl.NamespaceCapabilityReadJob
	}
	return acl.NamespaceCapabilityAllocLifecycle
}

// clientFSOp is the capability of /v1/client/fs/<kind>/:id.
func clientFSOp(kind string) func(string, *http.Request) string {
	if kind == "logs" {
		return fixedOp(acl.NamespaceCapabilityReadLogs)
	}
	return fixedOp(acl.NamespaceCapabilityReadFS)
}

// clientFSRule requires read-fs in the alloc's namespace for
// /v1/client/fs/<kind>/:id.
func clientFSRule(h *httpHandler, r *http.Request) error {
	kind, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/v1/client/fs/"), "/")
	return allocCap("/v1/client/fs/"+kind+"/", clientFSOp(kind))(h, r)
}

// httpRules maps each route (as registered) to its check. A route without
// an entry is refused when ACLs are on, and a test fails for it.
func httpRules() map[string]httpRule {
	rules := map[string]httpRule{
		"/v1/metrics": httpPublic, "/v1/agent/health": httpPublic, "/.well-known/jwks.json": httpPublic,
		"/v1/agent/self": agentRead, "/v1/agent/members": nodeRead, "/v1/agent/servers": readOrWrite(agentRead, agentWrite),
		"/v1/agent/join": agentWrite, "/v1/agent/force-leave": agentWrite, "/v1/agent/schedulers": agentRead,
		"/v1/agent/schedulers/config": readOrWrite(agentRead, agentWrite), "/v1/agent/host": agentRead,
		"/v1/agent/monitor": agentRead, "/v1/agent/pprof/": agentWrite,
		// Nomad asks agent write even to list the gossip keys.
		"/v1/agent/keyring/":     agentWrite,
		"/v1/client/stats":       nodeRead,
		"/v1/client/metadata":    readOrWrite(nodeRead, needACL((*acl.ACL).AllowNodeWrite)),
		"/v1/client/allocation/": allocCap("/v1/client/allocation/", clientAllocOp),
		"/v1/client/fs/logs/":    allocCap("/v1/client/fs/logs/", clientFSOp("logs")),
		"/v1/client/fs/":         clientFSRule,
		"/v1/validate/job":       nsFromQuery(acl.NamespaceCapabilityReadJob),
		"/v1/jobs/parse":         nsFromQuery(acl.NamespaceCapabilityParseJob),
		"/v1/event/stream":       eventStreamRule,
		// nomadq has no deployments: the listing is always empty, but
		// only to a token that may read jobs in the namespace (some
		// namespace for "*"), as Nomad answers.
		"/v1/deployments": nsFromQuery(acl.NamespaceCapabilityReadJob),
		"/v1/deployment/": nsFromQuery(acl.NamespaceCapabilityReadJob),
		// OIDC login is refused to everyone alike, before any token
		// matters. Minting a client introduction token needs node
		// write, which the RPC checks.
		"/v1/acl/oidc/":     httpPublic,
		"/v1/acl/identity/": byRPC,
	}
	for _, p := range []string{
		"/v1/jobs", "/v1/jobs/statuses", "/v1/job/", "/v1/evaluations", "/v1/evaluations/count", "/v1/evaluation/",
		"/v1/allocations", "/v1/allocation/", "/v1/nodes", "/v1/node/pools", "/v1/node/pool/", "/v1/node/",
		"/v1/namespaces", "/v1/namespace", "/v1/namespace/",
		"/v1/operator/raft/", "/v1/operator/autopilot/configuration", "/v1/operator/snapshot", "/v1/operator/autopilot/health",
		"/v1/search/fuzzy", "/v1/search", "/v1/status/leader", "/v1/status/peers", "/v1/regions",
		"/v1/operator/scheduler/configuration", "/v1/operator/keyring/", "/v1/system/gc",
		"/v1/system/reconcile/summaries", "/v1/queue", "/v1/queue/jobs", "/v1/queue/job/", "/v1/queue/usage", "/v1/queue/usage/reset",
		"/v1/scaling/policies", "/v1/scaling/policy/",
		"/v1/acl/bootstrap", "/v1/acl/policies", "/v1/acl/policy/", "/v1/acl/tokens", "/v1/acl/token",
		"/v1/acl/token/", "/v1/acl/roles", "/v1/acl/role", "/v1/acl/role/",
		"/v1/acl/auth-methods", "/v1/acl/auth-method", "/v1/acl/auth-method/", "/v1/acl/binding-rules",
		"/v1/acl/binding-rule", "/v1/acl/binding-rule/", "/v1/acl/login",
		"/v1/vars", "/v1/var/",
		"/v1/services", "/v1/service/",
	} {
		rules[p] = byRPC
	}
	return rules
}

// authorizeHTTP checks a request against its route's rule when ACLs are on.
func (h *httpHandler) authorizeHTTP(route string, r *http.Request) error {
	if !h.agent.config.ACL.Enabled {
		return nil
	}
	rule, ok := h.rules[route]
	if !ok {
		h.logger.Warn("route without an ACL rule; only management tokens may call it", "route", route)
		return needACL((*acl.ACL).IsManagement)(h, r)
	}
	return rule(h, r)
}

// resolvedACL is a cached resolution of a secret.
type resolvedACL struct {
	acl     *acl.ACL
	expires time.Time
}

// aclResolver caches, on agents without a server, what a secret resolved
// to, for the acl block's token_ttl.
type aclResolver struct {
	mu      sync.Mutex
	entries map[string]resolvedACL
}

// resolveACL returns the ACL of a secret: from the in-process server's
// state, or through the servers (cached for acl.token_ttl).
func (a *Agent) resolveACL(secret string) (*acl.ACL, error) {
	if !a.config.ACL.Enabled {
		return acl.Management, nil
	}
	if a.server != nil {
		out, _, err := a.server.ResolveACL(secret)
		if err != nil {
			return nil, rpcError(err)
		}
		return out, nil
	}
	now := time.Now()
	a.aclResolver.mu.Lock()
	if e, ok := a.aclResolver.entries[secret]; ok && now.Before(e.expires) {
		a.aclResolver.mu.Unlock()
		return e.acl, nil
	}
	a.aclResolver.mu.Unlock()
	args := structs.ResolveACLTokenRequest{SecretID: secret}
	args.AuthToken = secret
	var reply structs.ResolveACLTokenResponse
	if err := a.rpc("ACL.ResolveToken", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	var out *acl.ACL
	if reply.Token != nil && reply.Token.Type == structs.ACLManagementToken {
		out = acl.Management
	} else {
		policies := make([]*acl.Policy, 0, len(reply.Policies))
		for _, p := range reply.Policies {
			parsed, err := acl.Parse(p.Rules)
			if err != nil {
				return nil, err
			}
			policies = append(policies, parsed)
		}
		out = acl.New(policies)
	}
	a.aclResolver.mu.Lock()
	if a.aclResolver.entries == nil || len(a.aclResolver.entries) > 1024 {
		a.aclResolver.entries = map[string]resolvedACL{}
	}
	a.aclResolver.entries[secret] = resolvedACL{acl: out, expires: now.Add(a.config.ACL.CacheTTL())}
	a.aclResolver.mu.Unlock()
	return out, nil
}
