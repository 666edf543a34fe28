// Package acl parses Nomad's ACL policy language and answers whether a
// set of policies allows an operation. It has no state: the server
// resolves a token to its policies and asks an ACL built from them.
package acl

import (
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/gohcl"
	"github.com/hashicorp/hcl/v2/hclparse"
)

// Policy dispositions, as Nomad names them.
const (
	PolicyDeny  = "deny"
	PolicyRead  = "read"
	PolicyWrite = "write"
	PolicyScale = "scale"
	PolicyList  = "list"
)

// Namespace capabilities, as Nomad names them.
const (
	NamespaceCapabilityDeny                 = "deny"
	NamespaceCapabilityListJobs             = "list-jobs"
	NamespaceCapabilityParseJob             = "parse-job"
	NamespaceCapabilityReadJob              = "read-job"
	NamespaceCapabilitySubmitJob            = "submit-job"
	NamespaceCapabilityDispatchJob          = "dispatch-job"
	NamespaceCapabilityReadLogs             = "read-logs"
	NamespaceCapabilityReadFS               = "read-fs"
	NamespaceCapabilityAllocExec            = "alloc-exec"
	NamespaceCapabilityAllocNodeExec        = "alloc-node-exec"
	NamespaceCapabilityAllocLifecycle       = "alloc-lifecycle"
	NamespaceCapabilityCSIRegisterPlugin    = "csi-register-plugin"
	NamespaceCapabilityCSIWriteVolume       = "csi-write-volume"
	NamespaceCapabilityCSIReadVolume        = "csi-read-volume"
	NamespaceCapabilityCSIListVolume        = "csi-list-volume"
	NamespaceCapabilityCSIMountVolume       = "csi-mount-volume"
	NamespaceCapabilityHostVolumeCreate     = "host-volume-create"
	NamespaceCapabilityHostVolumeRegister   = "host-volume-register"
	NamespaceCapabilityHostVolumeRead       = "host-volume-read"
	NamespaceCapabilityHostVolumeWrite      = "host-volume-write"
	NamespaceCapabilityHostVolumeDelete     = "host-volume-delete"
	NamespaceCapabilityListScalingPolicies  = "list-scaling-policies"
	NamespaceCapabilityReadScalingPolicy    = "read-scaling-policy"
	NamespaceCapabilityReadJobScaling       = "read-job-scaling"
	NamespaceCapabilityScaleJob             = "scale-job"
	NamespaceCapabilitySubmitRecommendation = "submit-recommendation"
)

// Host volume capabilities (host_volume blocks).
const (
	HostVolumeCapabilityDeny           = "deny"
	HostVolumeCapabilityMountReadOnly  = "mount-readonly"
	HostVolumeCapabilityMountReadWrite = "mount-readwrite"
)

// Node pool capabilities (node_pool blocks), as Nomad names them.
const (
	NodePoolCapabilityDelete = "delete"
	NodePoolCapabilityDeny   = "deny"
	NodePoolCapabilityRead   = "read"
	NodePoolCapabilityWrite  = "write"
)

// expandNodePoolPolicy lists the capabilities a node_pool disposition
// grants: write is read, write and delete, as in Nomad.
func expandNodePoolPolicy(policy string) []string {
	switch policy {
	case PolicyDeny:
		return []string{NodePoolCapabilityDeny}
	case PolicyRead:
		return []string{NodePoolCapabilityRead}
	case PolicyWrite:
		return []string{NodePoolCapabilityDelete, NodePoolCapabilityRead, NodePoolCapabilityWrite}
	}
	return nil
}

// Variable capabilities (variables blocks inside a namespace).
const (
	VariablesCapabilityList    = "list"
	VariablesCapabilityRead    = "read"
	VariablesCapabilityWrite   = "write"
	VariablesCapabilityDestroy = "destroy"
	VariablesCapabilityDeny    = "deny"
)

var validNamespaceCapabilities = []string{
	NamespaceCapabilityDeny, NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
	NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob, NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS,
	NamespaceCapabilityAllocExec, NamespaceCapabilityAllocNodeExec, NamespaceCapabilityAllocLifecycle,
	NamespaceCapabilityCSIRegisterPlugin, NamespaceCapabilityCSIWriteVolume, NamespaceCapabilityCSIReadVolume,
	NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIMountVolume, NamespaceCapabilityHostVolumeCreate,
	NamespaceCapabilityHostVolumeRegister, NamespaceCapabilityHostVolumeRead, NamespaceCapabilityHostVolumeWrite,
	NamespaceCapabilityHostVolumeDelete, NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
	NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitRecommendation,
}

// expandNamespacePolicy lists the capabilities a namespace disposition
// grants, as Nomad documents them.
func expandNamespacePolicy(policy string) []string {
	read := []string{
		NamespaceCapabilityListJobs, NamespaceCapabilityParseJob, NamespaceCapabilityReadJob,
		NamespaceCapabilityCSIListVolume, NamespaceCapabilityCSIReadVolume, NamespaceCapabilityReadJobScaling,
		NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy, NamespaceCapabilityHostVolumeRead,
	}
	switch policy {
	case PolicyDeny:
		return []string{NamespaceCapabilityDeny}
	case PolicyRead:
		return read
	case PolicyWrite:
		return append(read,
			NamespaceCapabilityScaleJob, NamespaceCapabilitySubmitJob, NamespaceCapabilityDispatchJob,
			NamespaceCapabilityReadLogs, NamespaceCapabilityReadFS, NamespaceCapabilityAllocExec,
			NamespaceCapabilityAllocLifecycle, NamespaceCapabilityCSIMountVolume, NamespaceCapabilityCSIWriteVolume,
			NamespaceCapabilitySubmitRecommendation, NamespaceCapabilityHostVolumeCreate,
			NamespaceCapabilityHostVolumeWrite)
	case PolicyScale:
		return []string{NamespaceCapabilityListScalingPolicies, NamespaceCapabilityReadScalingPolicy,
			NamespaceCapabilityReadJobScaling, NamespaceCapabilityScaleJob}
	}
	return nil
}

// Policy is one parsed policy document.
type Policy struct {
	Namespaces  []*NamespacePolicy  `hcl:"namespace,block"`
	HostVolumes []*HostVolumePolicy `hcl:"host_volume,block"`
	NodePools   []*NodePoolPolicy   `hcl:"node_pool,block"`
	Node        *SimplePolicy       `hcl:"node,block"`
	Agent       *SimplePolicy       `hcl:"agent,block"`
	Operator    *SimplePolicy       `hcl:"operator,block"`
	Quota       *SimplePolicy       `hcl:"quota,block"`
	Plugin      *SimplePolicy       `hcl:"plugin,block"`
}

// NamespacePolicy is a namespace "name" { ... } block; the name may hold
// glob wildcards (*).
type NamespacePolicy struct {
	Name         string           `hcl:"name,label"`
	Policy       string           `hcl:"policy,optional"`
	Capabilities []string         `hcl:"capabilities,optional"`
	Variables    *VariablesPolicy `hcl:"variables,block"`
}

// VariablesPolicy is the variables block of a namespace.
type VariablesPolicy struct {
	Paths []*VariablesPathPolicy `hcl:"path,block"`
}

// VariablesPathPolicy grants capabilities on variables under a path glob.
type VariablesPathPolicy struct {
	Path         string   `hcl:"path,label"`
	Capabilities []string `hcl:"capabilities"`
}

// HostVolumePolicy is a host_volume "name" { ... } block.
type HostVolumePolicy struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

// NodePoolPolicy is a node_pool "name" { ... } block; the name may hold
// glob wildcards (*).
type NodePoolPolicy struct {
	Name         string   `hcl:"name,label"`
	Policy       string   `hcl:"policy,optional"`
	Capabilities []string `hcl:"capabilities,optional"`
}

// SimplePolicy is a block with one disposition (node, agent, operator,
// quota, plugin).
type SimplePolicy struct {
	Policy string `hcl:"policy"`
}

var validNamespaceName = regexp.MustCompile(`^[a-zA-Z0-9\-*]{1,128}$`)

// validNodePoolName is the name (or glob) of a node_pool block, as Nomad
// allows it.
var validNodePoolName = regexp.MustCompile(`^[a-zA-Z0-9-_*]{1,128}$`)

// Parse reads a policy in HCL or JSON and validates every disposition and
// capability. Errors name the block and the value.
func Parse(rules string) (*Policy, error) {
	if strings.TrimSpace(rules) == "" {
		return nil, fmt.Errorf("policy rules are empty")
	}
	parser := hclparse.NewParser()
	var file *hcl.File
	var diags hcl.Diagnostics
	if strings.HasPrefix(strings.TrimSpace(rules), "{") {
		file, diags = parser.ParseJSON([]byte(rules), "policy.json")
	} else {
		file, diags = parser.ParseHCL([]byte(rules), "policy.hcl")
	}
	if diags.HasErrors() {
		return nil, fmt.Errorf("failed to parse ACL policy: %s", diags.Error())
	}
	p := &Policy{}
	if diags := gohcl.DecodeBody(file.Body, nil, p); diags.HasErrors() {
		return nil, fmt.Errorf("failed to parse ACL policy: %s", diags.Error())
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	// Rules that are only comments (or an empty JSON object) grant
	// nothing, as empty rules would: refused alike, so that a policy
	// file left all commented out is not stored as if it said something.
	if reflect.DeepEqual(p, &Policy{}) {
		return nil, fmt.Errorf("policy rules are empty: they hold no namespace, host_volume, node_pool, node, agent, operator, quota or plugin block")
	}
	return p, nil
}

func (p *Policy) validate() error {
	for _, ns := range p.Namespaces {
		if !validNamespaceName.MatchString(ns.Name) {
			return fmt.Errorf("invalid namespace name %q in policy: names are 1-128 letters, digits, '-' or '*'", ns.Name)
		}
		if ns.Policy != "" && !slices.Contains([]string{PolicyDeny, PolicyRead, PolicyWrite, PolicyScale}, ns.Policy) {
			return fmt.Errorf("invalid namespace policy %q for namespace %q: allowed are deny, read, write, scale", ns.Policy, ns.Name)
		}
		for _, c := range ns.Capabilities {
			if !slices.Contains(validNamespaceCapabilities, c) {
				return fmt.Errorf("invalid namespace capability %q for namespace %q", c, ns.Name)
			}
		}
		if ns.Variables != nil {
			for _, vp := range ns.Variables.Paths {
				if vp.Path == "" {
					return fmt.Errorf("invalid variable path in namespace %q: path is empty", ns.Name)
				}
				for _, c := range vp.Capabilities {
					if !slices.Contains([]string{VariablesCapabilityList, VariablesCapabilityRead, VariablesCapabilityWrite, VariablesCapabilityDestroy, VariablesCapabilityDeny}, c) {
						return fmt.Errorf("invalid variable capability %q for path %q in namespace %q", c, vp.Path, ns.Name)
					}
				}
			}
		}
	}
	for _, hv := range p.HostVolumes {
		if hv.Policy != "" && !slices.Contains([]string{PolicyDeny, PolicyRead, PolicyWrite}, hv.Policy) {
			return fmt.Errorf("invalid host volume policy %q for host volume %q: allowed are deny, read, write", hv.Policy, hv.Name)
		}
		for _, c := range hv.Capabilities {
			if !slices.Contains([]string{HostVolumeCapabilityDeny, HostVolumeCapabilityMountReadOnly, HostVolumeCapabilityMountReadWrite}, c) {
				return fmt.Errorf("invalid host volume capability %q for host volume %q", c, hv.Name)
			}
		}
	}
	for _, np := range p.NodePools {
		if !validNodePoolName.MatchString(np.Name) {
			return fmt.Errorf("invalid node pool name %q in policy: names are 1-128 letters, digits, '-', '_' or '*'", np.Name)
		}
		if np.Policy != "" && !slices.Contains([]string{PolicyDeny, PolicyRead, PolicyWrite}, np.Policy) {
			return fmt.Errorf("invalid node pool policy %q for node pool %q: allowed are deny, read, write", np.Policy, np.Name)
		}
		for _, c := range np.Capabilities {
			if !slices.Contains([]string{NodePoolCapabilityDelete, NodePoolCapabilityDeny, NodePoolCapabilityRead, NodePoolCapabilityWrite}, c) {
				return fmt.Errorf("invalid node pool capability %q for node pool %q: allowed are delete, deny, read, write", c, np.Name)
			}
		}
	}
	simple := []struct {
		name    string
		p       *SimplePolicy
		allowed []string
	}{
		{"node", p.Node, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"agent", p.Agent, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"operator", p.Operator, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"quota", p.Quota, []string{PolicyDeny, PolicyRead, PolicyWrite}},
		{"plugin", p.Plugin, []string{PolicyDeny, PolicyRead, PolicyList}},
	}
	for _, s := range simple {
		if s.p != nil && !slices.Contains(s.allowed, s.p.Policy) {
			return fmt.Errorf("invalid %s policy %q: allowed are %s", s.name, s.p.Policy, strings.Join(s.allowed, ", "))
		}
	}
	return nil
}
