package serviceregistration

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/structs"
)

// RPC is how the registrar reaches the servers; the client's RPC is one.
type RPC interface {
	Call(ctx context.Context, method string, args, reply any) error
}

// Retry bounds of registrar calls that failed.
const (
	minBackoff = time.Second
	maxBackoff = 30 * time.Second
	// callTimeout bounds one RPC.
	callTimeout = 30 * time.Second
	// closeAttempts bounds the failed calls of a closed registrar: the
	// servers drop the registrations of an alloc that ended by
	// themselves, so an unreachable server is not waited for forever.
	closeAttempts = 10
)

// RegistrarConfig builds a Registrar.
type RegistrarConfig struct {
	RPC    RPC
	Region string
	// Namespace is the alloc's namespace; its registrations live there.
	Namespace string
	// Token is the node's secret ID, which the servers accept from the
	// node that runs the alloc.
	Token  string
	Logger hclog.Logger
}

// Registrar keeps the servers' catalog in line with the registrations an
// alloc wants: it upserts what is wanted and not yet registered (or
// changed) and deletes what is registered and no longer wanted, in one
// goroutine, retrying failed calls with backoff. Callers never wait for
// the servers.
type Registrar struct {
	cfg RegistrarConfig

	mu sync.Mutex
	// wanted is what should be registered, by ID.
	wanted map[string]*structs.ServiceRegistration
	// registered is what the servers hold as far as the registrar knows;
	// a nil value is an ID that may be registered (restored after a
	// client restart) and is deleted unless wanted.
	registered map[string]*structs.ServiceRegistration
	closing    bool

	kick   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
}

// NewRegistrar starts a registrar with nothing wanted.
func NewRegistrar(cfg RegistrarConfig) *Registrar {
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	r := &Registrar{
		cfg:        cfg,
		wanted:     make(map[string]*structs.ServiceRegistration),
		registered: make(map[string]*structs.ServiceRegistration),
		kick:       make(chan struct{}, 1),
		done:       make(chan struct{}),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	go r.run()
	return r
}

// MaybeRegistered marks IDs an earlier client may have registered: they
// are deleted unless wanted.
func (r *Registrar) MaybeRegistered(ids []string) {
	r.mu.Lock()
	for _, id := range ids {
		if _, ok := r.registered[id]; !ok {
			r.registered[id] = nil
		}
	}
	r.mu.Unlock()
	r.poke()
}

// Want replaces what should be registered.
func (r *Registrar) Want(regs []*structs.ServiceRegistration) {
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return
	}
	r.wanted = make(map[string]*structs.ServiceRegistration, len(regs))
	for _, s := range regs {
		r.wanted[s.ID] = s.Copy()
	}
	r.mu.Unlock()
	r.poke()
}

// Wanted returns the IDs that should be registered, sorted.
func (r *Registrar) Wanted() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.wanted))
}

// Close deregisters everything; the registrar ends once the servers
// have it (or on Shutdown). Later Wants are ignored.
func (r *Registrar) Close() {
	r.mu.Lock()
	r.closing = true
	r.wanted = map[string]*structs.ServiceRegistration{}
	r.mu.Unlock()
	r.poke()
}

// Shutdown ends the registrar at once and leaves the servers' catalog as
// it is: the client shuts down and a later one takes over.
func (r *Registrar) Shutdown() {
	r.cancel()
	<-r.done
}

// Done is closed once the registrar has ended.
func (r *Registrar) Done() <-chan struct{} { return r.done }

func (r *Registrar) poke() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// next decides the calls that bring the catalog in line: the
// registrations to upsert and the IDs to delete.
func (r *Registrar) next() (upsert []*structs.ServiceRegistration, del []string, closing bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(r.wanted)) {
		w := r.wanted[id]
		if have := r.registered[id]; have == nil || !same(have, w) {
			upsert = append(upsert, w)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(r.registered)) {
		if _, ok := r.wanted[id]; !ok {
			del = append(del, id)
		}
	}
	return upsert, del, r.closing
}

func same(a, b *structs.ServiceRegistration) bool {
	return a.ServiceName == b.ServiceName && a.Address == b.Address && a.Port == b.Port &&
		a.Namespace == b.Namespace && a.NodeID == b.NodeID && a.Datacenter == b.Datacenter &&
		a.JobID == b.JobID && a.AllocID == b.AllocID && slices.Equal(a.Tags, b.Tags)
}

func (r *Registrar) run() {
	defer close(r.done)
	backoff := time.Duration(0)
	closedFailures := 0
	for {
		upsert, del, closing := r.next()
		if len(upsert) == 0 && len(del) == 0 {
			if closing {
				return
			}
			select {
			case <-r.kick:
				continue
			case <-r.ctx.Done():
				return
			}
		}
		err := r.apply(upsert, del)
		if err == nil {
			backoff = 0
			continue
		}
		if closing {
			closedFailures++
			if closedFailures >= closeAttempts {
				r.cfg.Logger.Warn("giving up deregistering services; the servers drop them with the alloc", "error", err)
				return
			}
		}
		backoff = min(max(backoff*2, minBackoff), maxBackoff)
		r.cfg.Logger.Warn("service registration failed; retrying", "error", err, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-r.ctx.Done():
			t.Stop()
			return
		}
	}
}

// apply makes the calls and records what the servers now hold; it stops
// at the first failure.
func (r *Registrar) apply(upsert []*structs.ServiceRegistration, del []string) error {
	if len(upsert) > 0 {
		req := &structs.ServiceRegistrationUpsertRequest{
			Services:     upsert,
			WriteRequest: r.write(),
		}
		var resp structs.ServiceRegistrationUpsertResponse
		if err := r.call(structs.ServiceRegistrationUpsertRPCMethod, req, &resp); err != nil {
			return err
		}
		r.mu.Lock()
		for _, s := range upsert {
			r.registered[s.ID] = s
		}
		r.mu.Unlock()
	}
	for _, id := range del {
		req := &structs.ServiceRegistrationDeleteByIDRequest{ID: id, WriteRequest: r.write()}
		var resp structs.ServiceRegistrationDeleteByIDResponse
		if err := r.call(structs.ServiceRegistrationDeleteByIDRPCMethod, req, &resp); err != nil && !isNotFound(err) {
			return err
		}
		r.mu.Lock()
		delete(r.registered, id)
		r.mu.Unlock()
	}
	return nil
}

func (r *Registrar) write() structs.WriteRequest {
	return structs.WriteRequest{Region: r.cfg.Region, Namespace: r.cfg.Namespace, AuthToken: r.cfg.Token}
}

func (r *Registrar) call(method string, args, reply any) error {
	ctx, cancel := context.WithTimeout(r.ctx, callTimeout)
	defer cancel()
	return r.cfg.RPC.Call(ctx, method, args, reply)
}

// isNotFound reports a delete of a registration the servers do not hold:
// the goal is reached.
func isNotFound(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "not found")
}
