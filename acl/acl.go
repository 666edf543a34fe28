package acl

import (
	"slices"
	"strings"

	glob "github.com/ryanuber/go-glob"
)

// ACL is the union of a token's policies, ready to answer checks. The
// zero value denies everything; Management allows everything.
type ACL struct {
	management bool

	// namespaces maps a namespace name or glob to its capabilities.
	namespaces map[string]capabilitySet
	// variables maps a namespace name or glob to path globs and their
	// capabilities.
	variables   map[string]map[string]capabilitySet
	hostVolumes map[string]capabilitySet
	// nodePools maps a node pool name or glob to its capabilities.
	nodePools map[string]capabilitySet

	node, agent, operator, quota, plugin string
}

type capabilitySet map[string]struct{}

func (c capabilitySet) add(caps ...string) {
	for _, cap := range caps {
		c[cap] = struct{}{}
	}
}

func (c capabilitySet) has(cap string) bool {
	_, ok := c[cap]
	return ok
}

// Management is the ACL of a management token.
var Management = &ACL{management: true}

// DenyAll is the ACL of nobody.
var DenyAll = &ACL{}

// New merges policies into one ACL: capabilities add up, and a deny
// anywhere wins over any grant of the same thing.
func New(policies []*Policy) *ACL {
	a := &ACL{
		namespaces:  map[string]capabilitySet{},
		variables:   map[string]map[string]capabilitySet{},
		hostVolumes: map[string]capabilitySet{},
		nodePools:   map[string]capabilitySet{},
	}
	for _, p := range policies {
		for _, ns := range p.Namespaces {
			caps := a.namespaces[ns.Name]
			if caps == nil {
				caps = capabilitySet{}
				a.namespaces[ns.Name] = caps
			}
			caps.add(expandNamespacePolicy(ns.Policy)...)
			caps.add(ns.Capabilities...)
			if ns.Variables != nil {
				paths := a.variables[ns.Name]
				if paths == nil {
					paths = map[string]capabilitySet{}
					a.variables[ns.Name] = paths
				}
				for _, vp := range ns.Variables.Paths {
					set := paths[vp.Path]
					if set == nil {
						set = capabilitySet{}
						paths[vp.Path] = set
					}
					set.add(vp.Capabilities...)
				}
			}
		}
		for _, hv := range p.HostVolumes {
			caps := a.hostVolumes[hv.Name]
			if caps == nil {
				caps = capabilitySet{}
				a.hostVolumes[hv.Name] = caps
			}
			switch hv.Policy {
			case PolicyDeny:
				caps.add(HostVolumeCapabilityDeny)
			case PolicyRead:
				caps.add(HostVolumeCapabilityMountReadOnly)
			case PolicyWrite:
				caps.add(HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite)
			}
			caps.add(hv.Capabilities...)
		}
		for _, np := range p.NodePools {
			caps := a.nodePools[np.Name]
			if caps == nil {
				caps = capabilitySet{}
				a.nodePools[np.Name] = caps
			}
			caps.add(expandNodePoolPolicy(np.Policy)...)
			caps.add(np.Capabilities...)
		}
		merge := func(into *string, p *SimplePolicy) {
			if p != nil {
				*into = maxPrivilege(*into, p.Policy)
			}
		}
		merge(&a.node, p.Node)
		merge(&a.agent, p.Agent)
		merge(&a.operator, p.Operator)
		merge(&a.quota, p.Quota)
		merge(&a.plugin, p.Plugin)
	}
	return a
}

// maxPrivilege combines two dispositions: deny wins, then the broader grant.
func maxPrivilege(a, b string) string {
	rank := map[string]int{"": 0, PolicyList: 1, PolicyRead: 2, PolicyWrite: 3}
	if a == PolicyDeny || b == PolicyDeny {
		return PolicyDeny
	}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// IsManagement reports whether this is a management ACL.
func (a *ACL) IsManagement() bool { return a.management }

// matchRule finds the rules for name: an exact name, else the closest
// glob (the one whose literal part covers most of the name), as Nomad
// picks it.
func matchRule[T any](rules map[string]T, name string) (T, bool) {
	if r, ok := rules[name]; ok {
		return r, true
	}
	var best T
	bestPattern, bestLen := "", -1
	for pattern, r := range rules {
		if !strings.Contains(pattern, "*") || !glob.Glob(pattern, name) {
			continue
		}
		// Ties go to the lexically smaller pattern, so the choice does
		// not depend on map order.
		literal := len(strings.ReplaceAll(pattern, "*", ""))
		if literal > bestLen || literal == bestLen && pattern < bestPattern {
			best, bestPattern, bestLen = r, pattern, literal
		}
	}
	return best, bestLen >= 0
}

// AllowNamespaceOperation reports whether the ACL grants capability op in
// namespace ns.
func (a *ACL) AllowNamespaceOperation(ns, op string) bool {
	if a.management {
		return true
	}
	if ns == AllNamespaces && a.anyNamespaceAllows(func(c capabilitySet) bool { return c.has(op) }) {
		return true
	}
	caps, ok := matchRule(a.namespaces, ns)
	if !ok || caps.has(NamespaceCapabilityDeny) {
		return false
	}
	return caps.has(op)
}

// AllNamespaces is the namespace name that asks for every namespace. A
// check in it passes, as in Nomad, when the ACL grants the capability in
// some namespace; the listing must then keep only the entries of the
// namespaces that pass on their own name.
const AllNamespaces = "*"

// anyNamespaceAllows reports whether some namespace rule, not denied,
// passes ok.
func (a *ACL) anyNamespaceAllows(ok func(capabilitySet) bool) bool {
	for _, caps := range a.namespaces {
		if !caps.has(NamespaceCapabilityDeny) && ok(caps) {
			return true
		}
	}
	return false
}

// AllowNamespaceOperationFunc returns a check of a namespace name that
// passes when any of ops is granted there: the filter a listing over
// every namespace applies to each entry.
func (a *ACL) AllowNamespaceOperationFunc(ops ...string) func(ns string) bool {
	return func(ns string) bool {
		for _, op := range ops {
			if a.AllowNamespaceOperation(ns, op) {
				return true
			}
		}
		return false
	}
}

// AllowNamespace reports whether the ACL grants anything in namespace ns.
func (a *ACL) AllowNamespace(ns string) bool {
	if a.management {
		return true
	}
	if ns == AllNamespaces && a.anyNamespaceAllows(func(c capabilitySet) bool { return len(c) > 0 }) {
		return true
	}
	caps, ok := matchRule(a.namespaces, ns)
	if !ok || caps.has(NamespaceCapabilityDeny) {
		return false
	}
	return len(caps) > 0
}

// AllowVariableOperation reports whether the ACL grants op on the
// variable at path in namespace ns.
func (a *ACL) AllowVariableOperation(ns, path, op string) bool {
	if a.management {
		return true
	}
	paths, ok := matchRule(a.variables, ns)
	if !ok {
		return false
	}
	caps, ok := matchRule(paths, path)
	if !ok {
		// "*" as a path glob matches everything, including "".
		caps, ok = paths["*"]
	}
	if !ok || caps.has(VariablesCapabilityDeny) {
		return false
	}
	if op == VariablesCapabilityList && caps.has(VariablesCapabilityRead) {
		return true
	}
	return caps.has(op)
}

// AllowVariableSearch reports whether the ACL grants any capability other
// than deny on some variable path of namespace ns (what following the
// Variable topic of the event stream needs).
func (a *ACL) AllowVariableSearch(ns string) bool {
	if a.management {
		return true
	}
	paths, ok := matchRule(a.variables, ns)
	if !ok {
		return false
	}
	for _, caps := range paths {
		if len(caps) > 0 && !caps.has(VariablesCapabilityDeny) {
			return true
		}
	}
	return false
}

// AllowHostVolumeOperation reports whether the ACL grants op on the host
// volume name.
func (a *ACL) AllowHostVolumeOperation(name, op string) bool {
	if a.management {
		return true
	}
	caps, ok := matchRule(a.hostVolumes, name)
	if !ok || caps.has(HostVolumeCapabilityDeny) {
		return false
	}
	return caps.has(op)
}

// AllowNodePoolOperation reports whether the ACL grants op (read, write,
// delete) on the node pool name: the rules of its exact name, else of the
// closest glob; a deny there refuses everything.
func (a *ACL) AllowNodePoolOperation(name, op string) bool {
	if a.management {
		return true
	}
	caps, ok := matchRule(a.nodePools, name)
	if !ok || caps.has(NodePoolCapabilityDeny) {
		return false
	}
	return caps.has(op)
}

// AllowNodePool reports whether the ACL grants anything on the node pool
// name (search results list such pools).
func (a *ACL) AllowNodePool(name string) bool {
	if a.management {
		return true
	}
	caps, ok := matchRule(a.nodePools, name)
	return ok && len(caps) > 0 && !caps.has(NodePoolCapabilityDeny)
}

// AllowNodePoolSearch reports whether some node pool rule grants
// anything: only then may the token search node pools.
func (a *ACL) AllowNodePoolSearch() bool {
	if a.management {
		return true
	}
	for _, caps := range a.nodePools {
		if len(caps) > 0 && !caps.has(NodePoolCapabilityDeny) {
			return true
		}
	}
	return false
}

func allows(disposition, want string) bool {
	switch want {
	case PolicyRead:
		return disposition == PolicyRead || disposition == PolicyWrite
	case PolicyWrite:
		return disposition == PolicyWrite
	case PolicyList:
		return disposition == PolicyList || disposition == PolicyRead || disposition == PolicyWrite
	}
	return false
}

// AllowNodeRead reports node read access.
func (a *ACL) AllowNodeRead() bool { return a.management || allows(a.node, PolicyRead) }

// AllowNodeWrite reports node write access.
func (a *ACL) AllowNodeWrite() bool { return a.management || allows(a.node, PolicyWrite) }

// AllowAgentRead reports agent read access.
func (a *ACL) AllowAgentRead() bool { return a.management || allows(a.agent, PolicyRead) }

// AllowAgentWrite reports agent write access.
func (a *ACL) AllowAgentWrite() bool { return a.management || allows(a.agent, PolicyWrite) }

// AllowOperatorRead reports operator read access.
func (a *ACL) AllowOperatorRead() bool { return a.management || allows(a.operator, PolicyRead) }

// AllowOperatorWrite reports operator write access.
func (a *ACL) AllowOperatorWrite() bool { return a.management || allows(a.operator, PolicyWrite) }

// AllowQuotaRead reports quota read access.
func (a *ACL) AllowQuotaRead() bool { return a.management || allows(a.quota, PolicyRead) }

// AllowPluginRead reports CSI plugin read access.
func (a *ACL) AllowPluginRead() bool { return a.management || allows(a.plugin, PolicyRead) }

// AllowPluginList reports CSI plugin list access.
func (a *ACL) AllowPluginList() bool { return a.management || allows(a.plugin, PolicyList) }

// NamespaceCapabilities lists, sorted, what the ACL grants in namespace
// ns (for error messages and tests).
func (a *ACL) NamespaceCapabilities(ns string) []string {
	if a.management {
		return slices.Clone(validNamespaceCapabilities)
	}
	caps, _ := matchRule(a.namespaces, ns)
	var out []string
	for c := range caps {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}
