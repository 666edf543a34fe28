package nomad

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/acl"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// ServiceRegistration is the RPC endpoint of Nomad's built-in service
// catalog. Clients register and deregister their allocs' nomad-provider
// services with their node secret; the HTTP API and the CLI read the
// catalog and delete single registrations.
type ServiceRegistration struct {
	srv *Server
}

// The ACL rules of the service catalog, as Nomad checks them: a client
// writes only registrations of its own node; reads need read-job in the
// namespace, or a node's secret, or a task's workload identity (templates
// read services through them); a delete needs submit-job or the node the
// registration is on.
func init() {
	rpcRules[structs.ServiceRegistrationUpsertRPCMethod] = serviceUpsertRule
	rpcRules[structs.ServiceRegistrationDeleteByIDRPCMethod] = either(nsCap(acl.NamespaceCapabilitySubmitJob), serviceDeleteByNodeRule)
	rpcRules[structs.ServiceRegistrationListRPCMethod] = serviceReadRule
	rpcRules[structs.ServiceRegistrationGetServiceRPCMethod] = serviceReadRule
	for _, m := range []string{
		structs.ServiceRegistrationUpsertRPCMethod, structs.ServiceRegistrationDeleteByIDRPCMethod,
		structs.ServiceRegistrationListRPCMethod, structs.ServiceRegistrationGetServiceRPCMethod,
	} {
		forwardedRPCs[m] = true
	}
}

// callerNode returns the node whose secret the call carries, or nil.
func callerNode(s *Server, args any) (*structs.Node, error) {
	r, ok := args.(authorizer)
	if !ok || r.RequestToken() == "" {
		return nil, nil
	}
	return s.State().NodeBySecretID(nil, r.RequestToken())
}

func serviceUpsertRule(s *Server, a *acl.ACL, _ *structs.ACLToken, args any) error {
	if a.IsManagement() {
		return nil
	}
	req, ok := args.(*structs.ServiceRegistrationUpsertRequest)
	if !ok {
		return structs.ErrPermissionDenied
	}
	node, err := callerNode(s, args)
	if err != nil || node == nil {
		return structs.ErrPermissionDenied
	}
	for _, reg := range req.Services {
		if reg != nil && reg.NodeID != node.ID {
			return structs.ErrPermissionDenied
		}
	}
	return nil
}

// serviceDeleteByNodeRule lets a client remove the registrations of its
// own node (an unknown one: it finds nothing to remove).
func serviceDeleteByNodeRule(s *Server, _ *acl.ACL, _ *structs.ACLToken, args any) error {
	req, ok := args.(*structs.ServiceRegistrationDeleteByIDRequest)
	if !ok {
		return structs.ErrPermissionDenied
	}
	node, err := callerNode(s, args)
	if err != nil || node == nil {
		return structs.ErrPermissionDenied
	}
	reg, err := s.State().ServiceRegistrationByID(nil, req.RequestNamespace(), req.ID)
	if err != nil {
		return err
	}
	return allowIf(reg == nil || reg.NodeID == node.ID)
}

func serviceReadRule(s *Server, _ *acl.ACL, _ *structs.ACLToken, args any) error {
	r, ok := args.(authorizer)
	if !ok {
		return structs.ErrPermissionDenied
	}
	allow, err := s.serviceReadFilter(r.RequestToken())
	if err != nil {
		return structs.ErrPermissionDenied
	}
	// A listing over every namespace keeps those the caller may read,
	// and is empty, not refused, when there are none (as in Nomad).
	if _, list := args.(*structs.ServiceRegistrationListRequest); list && r.RequestNamespace() == "*" {
		return nil
	}
	return allowIf(allow(r.RequestNamespace()))
}

// serviceReadFilter reports in which namespaces the holder of secret may
// read services: those where its ACL grants read-job, or every one for a
// client node's secret and a task's workload identity.
func (s *Server) serviceReadFilter(secret string) (func(ns string) bool, error) {
	a, _, err := s.ResolveACL(secret)
	if err == nil {
		return a.AllowNamespaceOperationFunc(acl.NamespaceCapabilityReadJob), nil
	}
	if secret != "" {
		if node, nerr := s.State().NodeBySecretID(nil, secret); nerr == nil && node != nil {
			return func(string) bool { return true }, nil
		}
		if _, werr := s.resolveWorkloadIdentity(secret); werr == nil {
			return func(string) bool { return true }, nil
		}
	}
	return nil, err
}

// Upsert stores the services a client registered for its allocs.
func (e *ServiceRegistration) Upsert(args *structs.ServiceRegistrationUpsertRequest, reply *structs.ServiceRegistrationUpsertResponse) error {
	if done, err := e.srv.forward("ServiceRegistration.Upsert", args.WriteRequest, args, reply); done {
		return err
	}
	if len(args.Services) == 0 {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "no services to register")
	}
	for i, reg := range args.Services {
		if err := validRegistration(reg); err != nil {
			return structs.NewErrRPCCodedf(http.StatusBadRequest, "service registration %d: %v", i, err)
		}
	}
	_, index, err := e.srv.raftApply(structs.ServiceRegistrationUpsertRequestType, args)
	if err != nil {
		return err
	}
	reply.Index = index
	return nil
}

// validRegistration checks what the catalog keys and answers by.
func validRegistration(reg *structs.ServiceRegistration) error {
	switch {
	case reg == nil:
		return errors.New("registration is null")
	case reg.ID == "":
		return errors.New("missing ID")
	case reg.ServiceName == "":
		return errors.New("missing service name")
	case reg.Namespace == "":
		return errors.New("missing namespace")
	case reg.NodeID == "":
		return errors.New("missing node ID")
	case reg.JobID == "":
		return errors.New("missing job ID")
	case reg.AllocID == "":
		return errors.New("missing alloc ID")
	case reg.Port < 0 || reg.Port > structs.MaxPort:
		return errors.New("port out of range")
	}
	return nil
}

// DeleteByID removes one registration of the request's namespace: a
// client's when its alloc's service stops, or an operator's (nomad
// service delete) for one a lost client left behind.
func (e *ServiceRegistration) DeleteByID(args *structs.ServiceRegistrationDeleteByIDRequest, reply *structs.ServiceRegistrationDeleteByIDResponse) error {
	if done, err := e.srv.forward("ServiceRegistration.DeleteByID", args.WriteRequest, args, reply); done {
		return err
	}
	if args.ID == "" {
		return structs.NewErrRPCCoded(http.StatusBadRequest, "missing service registration ID")
	}
	reg, err := e.srv.State().ServiceRegistrationByID(nil, args.RequestNamespace(), args.ID)
	if err != nil {
		return err
	}
	if reg == nil {
		return structs.NewErrRPCCodedf(http.StatusNotFound, "service registration %q not found in namespace %q", args.ID, args.RequestNamespace())
	}
	_, index, err := e.srv.raftApply(structs.ServiceRegistrationDeleteByIDRequestType, args)
	if err != nil {
		return codeNotFound(err)
	}
	reply.Index = index
	return nil
}

// List returns the service names of the request's namespace ("*": every
// namespace the caller may read) with the union of their instances' tags,
// one entry per namespace (the query's Filter applies to those), only
// the names that start with the query's Prefix when it has one. It is a
// blocking query.
func (e *ServiceRegistration) List(args *structs.ServiceRegistrationListRequest, reply *structs.ServiceRegistrationListResponse) error {
	if done, err := e.srv.forward("ServiceRegistration.List", args.QueryOptions, args, reply); done {
		return err
	}
	allow, err := e.srv.serviceReadFilter(args.AuthToken)
	if err != nil {
		return structs.ErrPermissionDenied
	}
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	ns := args.RequestNamespace()
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		regs, err := st.ServiceRegistrationsByNamespace(ws, ns)
		if err != nil {
			return 0, err
		}
		if args.Prefix != "" {
			regs = slices.DeleteFunc(slices.Clone(regs), func(r *structs.ServiceRegistration) bool { return !strings.HasPrefix(r.ServiceName, args.Prefix) })
		}
		stubs, err := structs.KeepMatching(filter, listStubs(regs, allow), func(s *structs.ServiceRegistrationListStub) any { return s })
		if err != nil {
			return 0, err
		}
		reply.Services = stubs
		// At least 1, as Nomad answers: a caller that blocks on the index
		// it got must not spin while the table was never written.
		return maxIndex(st, state.TableServiceRegistrations)
	})
}

// listStubs groups registrations by namespace and service name, ordered
// by both, each with the sorted union of its instances' tags.
func listStubs(regs []*structs.ServiceRegistration, allow func(ns string) bool) []*structs.ServiceRegistrationListStub {
	out := []*structs.ServiceRegistrationListStub{}
	byNS := map[string]map[string][]string{}
	for _, r := range regs {
		if !allow(r.Namespace) {
			continue
		}
		svcs := byNS[r.Namespace]
		if svcs == nil {
			svcs = map[string][]string{}
			byNS[r.Namespace] = svcs
		}
		tags, seen := svcs[r.ServiceName]
		if !seen {
			tags = []string{}
		}
		svcs[r.ServiceName] = append(tags, r.Tags...)
	}
	for _, ns := range sortedKeys(byNS) {
		stub := &structs.ServiceRegistrationListStub{Namespace: ns}
		for _, name := range sortedKeys(byNS[ns]) {
			tags := byNS[ns][name]
			slices.Sort(tags)
			stub.Services = append(stub.Services, &structs.ServiceRegistrationStub{ServiceName: name, Tags: slices.Compact(tags)})
		}
		out = append(out, stub)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// GetService returns the instances of one service in the request's
// namespace, all of them or, with Choose ("N|key"), N picked by
// rendezvous hashing on key. It is a blocking query.
func (e *ServiceRegistration) GetService(args *structs.ServiceRegistrationByNameRequest, reply *structs.ServiceRegistrationByNameResponse) error {
	if done, err := e.srv.forward("ServiceRegistration.GetService", args.QueryOptions, args, reply); done {
		return err
	}
	filter, err := structs.NewFilter(args.Filter)
	if err != nil {
		return err
	}
	var n int
	var key string
	if args.Choose != "" {
		var err error
		if n, key, err = parseChoose(args.Choose); err != nil {
			return structs.NewErrRPCCodedf(http.StatusBadRequest, "failed to choose services: %v", err)
		}
	}
	return e.srv.blockingRPC(&args.QueryOptions, &reply.QueryMeta, func(ws memdb.WatchSet, st *state.StateStore) (uint64, error) {
		regs, err := st.ServiceRegistrationsByName(ws, args.RequestNamespace(), args.ServiceName)
		if err != nil {
			return 0, err
		}
		if args.Tag != "" {
			regs = slices.DeleteFunc(slices.Clone(regs), func(r *structs.ServiceRegistration) bool { return !slices.Contains(r.Tags, args.Tag) })
		}
		if regs, err = structs.KeepMatching(filter, regs, func(r *structs.ServiceRegistration) any { return r }); err != nil {
			return 0, err
		}
		if args.Choose != "" {
			regs = chooseServices(regs, n, key)
		}
		reply.Services = make([]*structs.ServiceRegistration, len(regs))
		for i, r := range regs {
			reply.Services[i] = r.Copy()
		}
		return maxIndex(st, state.TableServiceRegistrations)
	})
}

// errMalformedChoose is Nomad's answer to a bad choose parameter.
var errMalformedChoose = errors.New("Parameter for choose must be in form '<number>|<key>'")

func parseChoose(param string) (int, string, error) {
	count, key, ok := strings.Cut(param, "|")
	if !ok || key == "" {
		return 0, "", errMalformedChoose
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 0 {
		return 0, "", errMalformedChoose
	}
	return n, key, nil
}

// chooseServices picks n instances by rendezvous hashing: each instance
// is ranked by a hash of itself and key, so that one caller (key, in
// practice its alloc ID) keeps getting the same instances while the set
// stays the same, and different callers spread over all of them. The
// hash is Nomad's, so the picks are the ones Nomad makes.
func chooseServices(regs []*structs.ServiceRegistration, n int, key string) []*structs.ServiceRegistration {
	type ranked struct {
		hash string
		reg  *structs.ServiceRegistration
	}
	all := make([]ranked, len(regs))
	for i, r := range regs {
		all[i] = ranked{hash: rendezvousHash(r, key), reg: r}
	}
	slices.SortStableFunc(all, func(a, b ranked) int { return strings.Compare(a.hash, b.hash) })
	n = min(n, len(all))
	out := make([]*structs.ServiceRegistration, n)
	for i := range n {
		out[i] = all[i].reg
	}
	return out
}

func rendezvousHash(r *structs.ServiceRegistration, key string) string {
	h := sha256.New()
	var port [8]byte
	binary.BigEndian.PutUint64(port[:], uint64(r.Port))
	h.Write(port[:])
	for _, s := range []string{r.AllocID, r.ID, r.Namespace, r.Address, r.ServiceName} {
		h.Write([]byte(s))
	}
	for _, t := range r.Tags {
		h.Write([]byte(t))
	}
	h.Write([]byte(key))
	return hex.EncodeToString(h.Sum(nil))
}

// deleteNodeServices removes the registrations of a node that went down or
// was purged, as Nomad's node endpoint does: its clients' allocs may run
// on, unreachable, and must not be handed out.
func (s *Server) deleteNodeServices(nodeID string) error {
	regs, err := s.State().ServiceRegistrationsByNodeID(nil, nodeID)
	if err != nil || len(regs) == 0 {
		return err
	}
	_, _, err = s.raftApply(structs.ServiceRegistrationDeleteByNodeIDRequestType, &structs.ServiceRegistrationDeleteByNodeIDRequest{NodeID: nodeID})
	return err
}
