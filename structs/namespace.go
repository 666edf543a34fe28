package structs

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// Raft message types of namespaces, with Nomad's numbers.
const (
	NamespaceUpsertRequestType MessageType = 64
	NamespaceDeleteRequestType MessageType = 65
)

// maxNamespaceDescriptionLength is Nomad's limit on a namespace
// description.
const maxNamespaceDescriptionLength = 256

// validNamespaceName is the name rule Nomad applies to namespaces.
var validNamespaceName = regexp.MustCompile("^[a-zA-Z0-9-]{1,128}$")

// Namespace groups jobs (and their evals and allocs) under one name. The
// built-in "default" namespace always exists.
type Namespace struct {
	Name        string
	Description string

	// Quota, NodePoolConfiguration, VaultConfiguration,
	// ConsulConfiguration and the extra claims are Nomad Enterprise
	// features; a namespace that sets them is refused by name.
	Quota                 string
	Capabilities          *NamespaceCapabilities
	NodePoolConfiguration *NamespaceNodePoolConfiguration
	VaultConfiguration    *NamespaceDefaultAllowedDenied
	ConsulConfiguration   *NamespaceDefaultAllowedDenied
	RequiredExtraClaims   map[string]string
	OptionalExtraClaims   map[string]string

	// Meta is free-form; the batch queue reads its weights from it.
	Meta map[string]string

	CreateIndex uint64
	ModifyIndex uint64
}

// NamespaceCapabilities restricts the task drivers and group network
// modes the jobs of a namespace may use. An empty Enabled list allows
// everything not Disabled.
type NamespaceCapabilities struct {
	EnabledTaskDrivers   []string
	DisabledTaskDrivers  []string
	EnabledNetworkModes  []string
	DisabledNetworkModes []string
}

// NamespaceNodePoolConfiguration is the wire shape of a namespace's node
// pool governance (refused: an Enterprise feature).
type NamespaceNodePoolConfiguration struct {
	Default string
	Allowed []string
	Denied  []string
}

// NamespaceDefaultAllowedDenied is the wire shape of a namespace's Vault
// or Consul cluster choice (refused: an Enterprise feature).
type NamespaceDefaultAllowedDenied struct {
	Default string
	Allowed []string
	Denied  []string
}

// DefaultNamespaceDescription is the description of the built-in default
// namespace.
const DefaultNamespaceDescription = "Default shared namespace"

// BuiltinNamespace returns the built-in default namespace.
func BuiltinNamespace() *Namespace {
	return &Namespace{Name: DefaultNamespace, Description: DefaultNamespaceDescription, Meta: map[string]string{}, CreateIndex: 1, ModifyIndex: 1}
}

// Validate checks a namespace to be stored: its name and description,
// and that it sets nothing this server cannot honour.
func (n *Namespace) Validate() error {
	var errs MultiError
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(format, a...)) }
	if !validNamespaceName.MatchString(n.Name) {
		add("invalid name %q. Must match regex %s", n.Name, validNamespaceName)
	}
	if len(n.Description) > maxNamespaceDescriptionLength {
		add("description longer than %d", maxNamespaceDescriptionLength)
	}
	if n.Quota != "" {
		add("Quota %q is not supported: resource quotas are a Nomad Enterprise feature; leave Quota empty", n.Quota)
	}
	if n.NodePoolConfiguration != nil {
		add("NodePoolConfiguration (node_pool_config) is not supported: node pool governance is a Nomad Enterprise feature; leave it unset")
	}
	if n.VaultConfiguration != nil {
		add("VaultConfiguration (vault) is not supported: multi-cluster Vault is a Nomad Enterprise feature; leave it unset")
	}
	if n.ConsulConfiguration != nil {
		add("ConsulConfiguration (consul) is not supported: multi-cluster Consul is a Nomad Enterprise feature; leave it unset")
	}
	if len(n.RequiredExtraClaims) > 0 || len(n.OptionalExtraClaims) > 0 {
		add("RequiredExtraClaims and OptionalExtraClaims are not supported: this server issues no claims from namespace rules; leave them empty")
	}
	if _, err := BatchQueueShareOf(n.Meta); err != nil {
		errs.Add(err)
	}
	return errs.ErrorOrNil()
}

// Copy returns a deep copy of the namespace.
func (n *Namespace) Copy() *Namespace {
	if n == nil {
		return nil
	}
	c := *n
	c.Meta = maps.Clone(n.Meta)
	c.RequiredExtraClaims = maps.Clone(n.RequiredExtraClaims)
	c.OptionalExtraClaims = maps.Clone(n.OptionalExtraClaims)
	if n.Capabilities != nil {
		cc := *n.Capabilities
		cc.EnabledTaskDrivers = slices.Clone(cc.EnabledTaskDrivers)
		cc.DisabledTaskDrivers = slices.Clone(cc.DisabledTaskDrivers)
		cc.EnabledNetworkModes = slices.Clone(cc.EnabledNetworkModes)
		cc.DisabledNetworkModes = slices.Clone(cc.DisabledNetworkModes)
		c.Capabilities = &cc
	}
	return &c
}

// AllowsDriver reports whether the namespace's capabilities let a task
// use driver.
func (n *Namespace) AllowsDriver(driver string) bool {
	if n.Capabilities == nil {
		return true
	}
	return allowedBy(n.Capabilities.EnabledTaskDrivers, n.Capabilities.DisabledTaskDrivers, driver)
}

// AllowsNetworkMode reports whether the namespace's capabilities let a
// group use network mode (empty: "host").
func (n *Namespace) AllowsNetworkMode(mode string) bool {
	if n.Capabilities == nil {
		return true
	}
	return allowedBy(n.Capabilities.EnabledNetworkModes, n.Capabilities.DisabledNetworkModes, mode)
}

func allowedBy(enabled, disabled []string, v string) bool {
	ok := len(enabled) == 0 || slices.Contains(enabled, v)
	return ok && !slices.Contains(disabled, v)
}

// CheckCapabilities returns the error Nomad gives for a job that uses task
// drivers or group network modes its namespace does not allow.
func (n *Namespace) CheckCapabilities(j *Job) error {
	var drivers, modes []string
	for _, tg := range j.TaskGroups {
		for _, t := range tg.Tasks {
			if !n.AllowsDriver(t.Driver) {
				drivers = append(drivers, t.Driver)
			}
		}
		for _, nw := range tg.Networks {
			mode := nw.Mode
			if mode == "" {
				mode = "host"
			}
			if !n.AllowsNetworkMode(mode) {
				modes = append(modes, mode)
			}
		}
	}
	switch {
	case len(drivers) == 1:
		return NewBadRequestf("used task driver %q is not allowed in namespace %q", drivers[0], n.Name)
	case len(drivers) > 1:
		return NewBadRequestf("used task drivers %q are not allowed in namespace %q", drivers, n.Name)
	case len(modes) == 1:
		return NewBadRequestf("used group network mode %q is not allowed in namespace %q", modes[0], n.Name)
	case len(modes) > 1:
		return NewBadRequestf("used group network modes %q are not allowed in namespace %q", modes, n.Name)
	}
	return nil
}

// NamespaceUpsertRequest creates or replaces namespaces.
type NamespaceUpsertRequest struct {
	Namespaces []*Namespace
	WriteRequest
}

// NamespaceDeleteRequest deletes namespaces by name.
type NamespaceDeleteRequest struct {
	Namespaces []string
	WriteRequest
}

// NamespaceListRequest lists namespaces (Prefix filters by name).
type NamespaceListRequest struct {
	QueryOptions
}

// NamespaceListResponse answers Namespace.ListNamespaces.
type NamespaceListResponse struct {
	Namespaces []*Namespace
	QueryMeta
}

// NamespaceSpecificRequest reads one namespace.
type NamespaceSpecificRequest struct {
	Name string
	QueryOptions
}

// SingleNamespaceResponse answers Namespace.GetNamespace; Namespace is nil
// when it does not exist.
type SingleNamespaceResponse struct {
	Namespace *Namespace
	QueryMeta
}
