package serviceregistration

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// fakeServers is a service catalog behind the registrar's RPC; it fails
// the next fail calls.
type fakeServers struct {
	mu      sync.Mutex
	catalog map[string]*structs.ServiceRegistration
	fail    int
	calls   int
	tokens  []string
}

func newFakeServers() *fakeServers {
	return &fakeServers{catalog: make(map[string]*structs.ServiceRegistration)}
}

func (f *fakeServers) Call(_ context.Context, method string, args, _ any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.fail > 0 {
		f.fail--
		return errors.New("no cluster leader")
	}
	switch method {
	case structs.ServiceRegistrationUpsertRPCMethod:
		req := args.(*structs.ServiceRegistrationUpsertRequest)
		f.tokens = append(f.tokens, req.AuthToken)
		for _, s := range req.Services {
			f.catalog[s.ID] = s.Copy()
		}
	case structs.ServiceRegistrationDeleteByIDRPCMethod:
		req := args.(*structs.ServiceRegistrationDeleteByIDRequest)
		if _, ok := f.catalog[req.ID]; !ok {
			return errors.New("service registration not found")
		}
		delete(f.catalog, req.ID)
	default:
		return errors.New("unknown method " + method)
	}
	return nil
}

func (f *fakeServers) ids() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.catalog))
}

func reg(id string, port int) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{ID: id, ServiceName: "web", Address: "10.0.0.1", Port: port}
}

func TestRegistrar_RegistersAndDeregisters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServers()
		r := NewRegistrar(RegistrarConfig{RPC: srv, Token: "node-secret"})
		r.Want([]*structs.ServiceRegistration{reg("a", 1), reg("b", 2)})
		synctest.Wait()
		must.Eq(t, []string{"a", "b"}, srv.ids())
		must.Eq(t, []string{"node-secret"}, srv.tokens)

		r.Want([]*structs.ServiceRegistration{reg("b", 3)})
		synctest.Wait()
		must.Eq(t, []string{"b"}, srv.ids())
		must.Eq(t, 3, srv.catalog["b"].Port)

		r.Close()
		<-r.Done()
		must.SliceEmpty(t, srv.ids())
	})
}

func TestRegistrar_RetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServers()
		srv.fail = 3
		r := NewRegistrar(RegistrarConfig{RPC: srv})
		defer r.Shutdown()
		start := time.Now()
		r.Want([]*structs.ServiceRegistration{reg("a", 1)})
		synctest.Wait()
		must.SliceEmpty(t, srv.ids())
		// Backoff 1s, 2s, 4s: registered after the third retry.
		time.Sleep(7*time.Second + time.Millisecond)
		synctest.Wait()
		must.Eq(t, []string{"a"}, srv.ids())
		must.Eq(t, 4, srv.calls)
		must.GreaterEq(t, 7*time.Second, time.Since(start))
	})
}

func TestRegistrar_RestoredIDsAreDeletedUnlessWanted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServers()
		srv.catalog["old"] = reg("old", 1)
		srv.catalog["keep"] = reg("keep", 2)
		r := NewRegistrar(RegistrarConfig{RPC: srv})
		defer r.Shutdown()
		r.MaybeRegistered([]string{"old", "keep", "never"})
		r.Want([]*structs.ServiceRegistration{reg("keep", 2)})
		synctest.Wait()
		// "never" was not registered: its not-found delete counts as done.
		must.Eq(t, []string{"keep"}, srv.ids())
	})
}

func TestRegistrar_ShutdownLeavesRegistrations(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServers()
		r := NewRegistrar(RegistrarConfig{RPC: srv})
		r.Want([]*structs.ServiceRegistration{reg("a", 1)})
		synctest.Wait()
		r.Shutdown()
		must.Eq(t, []string{"a"}, srv.ids())
	})
}

func TestRegistrar_ClosedGivesUpOnUnreachableServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := newFakeServers()
		r := NewRegistrar(RegistrarConfig{RPC: srv})
		r.Want([]*structs.ServiceRegistration{reg("a", 1)})
		synctest.Wait()
		srv.mu.Lock()
		srv.fail = 1000
		srv.mu.Unlock()
		r.Close()
		<-r.Done()
		must.Eq(t, 1+closeAttempts, srv.calls)
		must.Eq(t, []string{"a"}, srv.ids())
	})
}
