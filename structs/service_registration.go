package structs

import (
	"slices"
	"time"
)

// Raft messages of Nomad's built-in service discovery (service blocks with
// provider = "nomad"); Nomad's numbers.
const (
	ServiceRegistrationUpsertRequestType         MessageType = 47
	ServiceRegistrationDeleteByIDRequestType     MessageType = 48
	ServiceRegistrationDeleteByNodeIDRequestType MessageType = 49
)

func init() {
	messageTypeNames[ServiceRegistrationUpsertRequestType] = "ServiceRegistrationUpsertRequestType"
	messageTypeNames[ServiceRegistrationDeleteByIDRequestType] = "ServiceRegistrationDeleteByIDRequestType"
	messageTypeNames[ServiceRegistrationDeleteByNodeIDRequestType] = "ServiceRegistrationDeleteByNodeIDRequestType"
}

// RPC methods of service discovery, with Nomad's names. Clients call
// Upsert when an alloc's services start and DeleteByID when they stop; the
// HTTP API calls the rest.
const (
	ServiceRegistrationUpsertRPCMethod     = "ServiceRegistration.Upsert"
	ServiceRegistrationDeleteByIDRPCMethod = "ServiceRegistration.DeleteByID"
	ServiceRegistrationListRPCMethod       = "ServiceRegistration.List"
	ServiceRegistrationGetServiceRPCMethod = "ServiceRegistration.GetService"
)

// ServiceRegistration is one running instance of a nomad-provider service:
// an alloc's service at an address and port. The fields and their JSON
// names are those of Nomad's /v1/service/:name answer.
type ServiceRegistration struct {
	// ID is "_nomad-task-<allocID>-<group|task>-<service name>-<port label>"
	// as Nomad builds it (group services use "group-<group name>").
	ID          string
	ServiceName string
	Namespace   string
	NodeID      string
	Datacenter  string
	JobID       string
	AllocID     string
	Tags        []string
	Address     string
	Port        int

	CreateIndex uint64
	ModifyIndex uint64
}

// Copy returns a deep copy of the registration.
func (s *ServiceRegistration) Copy() *ServiceRegistration {
	if s == nil {
		return nil
	}
	c := *s
	c.Tags = slices.Clone(s.Tags)
	return &c
}

// ServiceRegistrationUpsertRequest registers (or updates) services; sent
// by a client node with its node secret.
type ServiceRegistrationUpsertRequest struct {
	Services []*ServiceRegistration
	WriteRequest
}

// ServiceRegistrationUpsertResponse answers an upsert.
type ServiceRegistrationUpsertResponse struct {
	WriteMeta
}

// ServiceRegistrationDeleteByIDRequest removes one registration by ID in
// the request's namespace.
type ServiceRegistrationDeleteByIDRequest struct {
	ID string
	WriteRequest
}

// ServiceRegistrationDeleteByIDResponse answers a delete by ID.
type ServiceRegistrationDeleteByIDResponse struct {
	WriteMeta
}

// ServiceRegistrationDeleteByNodeIDRequest removes every registration of a
// node (the node went down or was deregistered); written by the leader.
type ServiceRegistrationDeleteByNodeIDRequest struct {
	NodeID string
	WriteRequest
}

// ServiceRegistrationListRequest lists service names per namespace
// (Namespace "*" for every namespace the token may read).
type ServiceRegistrationListRequest struct {
	QueryOptions
}

// ServiceRegistrationListResponse answers a list.
type ServiceRegistrationListResponse struct {
	Services []*ServiceRegistrationListStub
	QueryMeta
}

// ServiceRegistrationListStub is one namespace's services in a list, as
// Nomad's GET /v1/services returns them.
type ServiceRegistrationListStub struct {
	Namespace string
	Services  []*ServiceRegistrationStub
}

// ServiceRegistrationStub is one service name and the union of its tags.
type ServiceRegistrationStub struct {
	ServiceName string
	Tags        []string
}

// ServiceRegistrationByNameRequest reads the registrations of one service
// name in the request's namespace. Choose is Nomad's "choose" parameter
// ("N|key": N instances picked by rendezvous hashing on key).
//
// Tag, when set, keeps the instances that carry it. The query's Filter
// and Tag apply before Choose, so that the picks come from the matching
// instances.
type ServiceRegistrationByNameRequest struct {
	ServiceName string
	Choose      string
	Tag         string
	QueryOptions
}

// ServiceRegistrationByNameResponse answers a read by name.
type ServiceRegistrationByNameResponse struct {
	Services []*ServiceRegistration
	QueryMeta
}

// ServiceCheck is a health check of a service (Nomad's check block). For
// nomad-provider services the client runs http, tcp and script checks.
type ServiceCheck struct {
	Name          string
	Type          string // http, tcp, script (grpc only with consul: refused)
	Command       string
	Args          []string
	Path          string
	Protocol      string
	PortLabel     string
	Expose        bool
	AddressMode   string
	Interval      time.Duration
	Timeout       time.Duration
	InitialStatus string
	Header        map[string][]string
	Method        string
	Body          string
	TaskName      string
	OnUpdate      string
	CheckRestart  *CheckRestart

	SuccessBeforePassing   int
	FailuresBeforeCritical int
	FailuresBeforeWarning  int
	TLSSkipVerify          bool
	TLSServerName          string
}

// CheckRestart restarts a task after Limit consecutive failures of a
// check, not counting failures during Grace after the task (re)starts.
type CheckRestart struct {
	Limit          int
	Grace          time.Duration
	IgnoreWarnings bool
}

// Service check types.
const (
	ServiceCheckHTTP   = "http"
	ServiceCheckTCP    = "tcp"
	ServiceCheckScript = "script"
	ServiceCheckGRPC   = "grpc"
)

// Copy returns a deep copy of the check.
func (c *ServiceCheck) Copy() *ServiceCheck {
	if c == nil {
		return nil
	}
	o := *c
	o.Args = slices.Clone(c.Args)
	if c.Header != nil {
		o.Header = make(map[string][]string, len(c.Header))
		for k, v := range c.Header {
			o.Header[k] = slices.Clone(v)
		}
	}
	if c.CheckRestart != nil {
		cr := *c.CheckRestart
		o.CheckRestart = &cr
	}
	return &o
}

// CheckQueryResult is the latest result of one check of an alloc, in the
// shape of Nomad's GET /v1/client/allocation/:id/checks (a map from check
// ID to this).
type CheckQueryResult struct {
	ID         string
	Mode       string // "healthiness" or "readiness"
	Status     string // "success", "failure", "pending"
	StatusCode int    `json:",omitempty"`
	Output     string
	Timestamp  int64 // unix seconds
	Group      string
	Task       string `json:",omitempty"`
	Service    string
	Check      string
}
