package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	ctdep "github.com/hashicorp/consul-template/dependency"

	"github.com/nomadq/nomadq/structs"
)

// ServiceSource reads the servers' catalog of nomad-provider services
// for the nomadService and nomadServices template functions. Both calls
// are blocking queries, as VariableSource's are.
type ServiceSource interface {
	// ReadService returns the registrations of the service q.Name and
	// the index of the answer.
	ReadService(ctx context.Context, q ServiceQuery) ([]*structs.ServiceRegistration, uint64, error)
	// ListServices returns the service names and tags of q.Namespace and
	// the index of the answer.
	ListServices(ctx context.Context, q ServiceQuery) ([]*structs.ServiceRegistrationListStub, uint64, error)
}

// ServiceQuery is one read or list of services.
type ServiceQuery struct {
	// Token authenticates the read: the secret of the node that runs
	// the task.
	Token     string
	Namespace string
	Name      string
	// Choose is "N|key": N registrations picked by rendezvous hashing.
	Choose   string
	MinIndex uint64
	MaxWait  time.Duration
}

// serviceSource is the client's ServiceSource: its variable source
// reads services too. Nil when it does not.
func serviceSource(v VariableSource) ServiceSource {
	s, _ := v.(ServiceSource)
	return s
}

// nodeSecret is the secret of the node, which the servers accept for
// reads of the service catalog.
func nodeSecret(n *structs.Node) string {
	if n == nil {
		return ""
	}
	return n.SecretID
}

// errNomadServiceUnwired is the render error of nomadService on a client
// without a ServiceSource.
var errNomadServiceUnwired = errors.New("this client reads no Nomad services")

// svcDep marks a varDep that is a read (or, with list, a listing) of the
// service catalog; path is the service's name.
type svcDep struct {
	src    ServiceSource
	token  string
	list   bool
	choose string
}

func (s *svcDep) key(d varDep) string {
	return fmt.Sprintf("svc\x00%v\x00%s\x00%s\x00%s", s.list, d.namespace, d.path, s.choose)
}

// String names the dependency as consul-template does.
func (s *svcDep) String(d varDep) string {
	if s.list {
		return "nomad.services"
	}
	name := d.path
	if s.choose != "" {
		name += ":" + s.choose
	}
	return fmt.Sprintf("nomad.service(%s)", name)
}

func (s *svcDep) query(d varDep, minIndex uint64, wait time.Duration) ServiceQuery {
	return ServiceQuery{Token: s.token, Namespace: d.namespace, Name: d.path, Choose: s.choose, MinIndex: minIndex, MaxWait: wait}
}

// poll asks the servers for the dependency's index, blocking until it
// passes minIndex or wait is over.
func (s *svcDep) poll(ctx context.Context, d varDep, minIndex uint64, wait time.Duration) (uint64, error) {
	if s.list {
		_, idx, err := s.src.ListServices(ctx, s.query(d, minIndex, wait))
		return idx, err
	}
	_, idx, err := s.src.ReadService(ctx, s.query(d, minIndex, wait))
	return idx, err
}

// serviceReads caches the service answers of one render pass.
type serviceReads struct {
	src   ServiceSource
	token string
	reads map[string][]*structs.ServiceRegistration
	lists map[string][]*structs.ServiceRegistrationListStub
}

// useServices lets the pass read services from src with token.
func (r *varReads) useServices(src ServiceSource, token string) {
	r.services = &serviceReads{src: src, token: token,
		reads: map[string][]*structs.ServiceRegistration{}, lists: map[string][]*structs.ServiceRegistrationListStub{}}
}

// nomadServiceRe is consul-template's "[tag.]name[@region]".
var nomadServiceRe = regexp.MustCompile(`\A((?P<tag>[[:word:]=:\.\-\_]+)\.)?(?P<name>[[:word:]\-\_]+)(@(?P<region>[[:word:]\.\-\_]+))?\z`)

func (r *varReads) checkRegion(name, spec, region string) error {
	if region != "" && region != r.region {
		return fmt.Errorf("function %s: %q names region %q; nomadq templates read services of their own region (%q) only", name, spec, region, r.region)
	}
	return nil
}

func (r *varReads) service(spec, choose string) ([]*ctdep.NomadService, error) {
	if r.services == nil || r.services.src == nil {
		return nil, fmt.Errorf("function nomadService: %w", errNomadServiceUnwired)
	}
	m := nomadServiceRe.FindStringSubmatch(spec)
	if m == nil {
		return nil, fmt.Errorf("function nomadService: invalid service %q: use \"name\", \"tag.name\" or \"name@region\"", spec)
	}
	tag, name, region := m[nomadServiceRe.SubexpIndex("tag")], m[nomadServiceRe.SubexpIndex("name")], m[nomadServiceRe.SubexpIndex("region")]
	if err := r.checkRegion("nomadService", spec, region); err != nil {
		return nil, err
	}
	s := r.services
	d := varDep{namespace: r.namespace, path: name, svc: &svcDep{src: s.src, token: s.token, choose: choose}}
	k := d.key()
	regs, ok := s.reads[k]
	if !ok {
		var idx uint64
		var err error
		regs, idx, err = s.src.ReadService(r.ctx, d.svc.query(d, 0, 0))
		if err != nil {
			return nil, fmt.Errorf("function nomadService: read service %q in namespace %q: %w", name, r.namespace, err)
		}
		d.index = idx
		r.deps[k] = &d
		s.reads[k] = regs
	}
	out := make([]*ctdep.NomadService, 0, len(regs))
	for _, reg := range regs {
		if tag != "" && !slices.Contains(reg.Tags, tag) {
			continue
		}
		tags := slices.Clone(reg.Tags)
		sort.Strings(tags)
		out = append(out, &ctdep.NomadService{
			ID: reg.ID, Name: reg.ServiceName, Node: reg.NodeID, Address: reg.Address, Port: reg.Port,
			Datacenter: reg.Datacenter, Tags: ctdep.ServiceTags(tags), JobID: reg.JobID, AllocID: reg.AllocID,
		})
	}
	return out, nil
}

func (r *varReads) serviceList(args []string) ([]*ctdep.NomadServicesSnippet, error) {
	if r.services == nil || r.services.src == nil {
		return nil, fmt.Errorf("function nomadServices: %w", errNomadServiceUnwired)
	}
	spec := ""
	for _, a := range args {
		spec += a
	}
	if spec != "" {
		region, ok := strings.CutPrefix(spec, "@")
		if !ok {
			return nil, fmt.Errorf("function nomadServices: invalid argument %q: use none or \"@region\"", spec)
		}
		if err := r.checkRegion("nomadServices", spec, region); err != nil {
			return nil, err
		}
	}
	s := r.services
	d := varDep{namespace: r.namespace, svc: &svcDep{src: s.src, token: s.token, list: true}}
	k := d.key()
	stubs, ok := s.lists[k]
	if !ok {
		var idx uint64
		var err error
		stubs, idx, err = s.src.ListServices(r.ctx, d.svc.query(d, 0, 0))
		if err != nil {
			return nil, fmt.Errorf("function nomadServices: list services in namespace %q: %w", r.namespace, err)
		}
		d.index = idx
		r.deps[k] = &d
		s.lists[k] = stubs
	}
	var out []*ctdep.NomadServicesSnippet
	for _, ns := range stubs {
		if ns.Namespace != r.namespace {
			continue
		}
		for _, st := range ns.Services {
			tags := slices.Clone(st.Tags)
			sort.Strings(tags)
			out = append(out, &ctdep.NomadServicesSnippet{Name: st.ServiceName, Tags: ctdep.ServiceTags(tags)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// serviceFuncs are nomadService and nomadServices, with consul-template's
// arguments and result types, so templates written for Nomad work.
func (r *varReads) serviceFuncs() map[string]any {
	return map[string]any{
		"nomadService": func(params ...any) ([]*ctdep.NomadService, error) {
			switch len(params) {
			case 1:
				name, ok := params[0].(string)
				if !ok {
					return nil, errors.New("function nomadService: expected string for <service> argument")
				}
				return r.service(name, "")
			case 3:
				count, ok := params[0].(int)
				if !ok {
					return nil, errors.New("function nomadService: expected integer for <count> argument")
				}
				key, ok := params[1].(string)
				if !ok {
					return nil, errors.New("function nomadService: expected string for <key> argument")
				}
				name, ok := params[2].(string)
				if !ok {
					return nil, errors.New("function nomadService: expected string for <service> argument")
				}
				return r.service(name, fmt.Sprintf("%d|%s", count, key))
			}
			return nil, errors.New("function nomadService: expected arguments <service> or <count> <key> <service>")
		},
		"nomadServices": func(args ...string) ([]*ctdep.NomadServicesSnippet, error) {
			return r.serviceList(args)
		},
	}
}
