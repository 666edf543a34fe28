package allocrunner

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

// fakeCatalog is the servers' service catalog behind the hook's RPC.
type fakeCatalog struct {
	mu   sync.Mutex
	regs map[string]*structs.ServiceRegistration
}

func (f *fakeCatalog) Call(_ context.Context, method string, args, _ any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch method {
	case structs.ServiceRegistrationUpsertRPCMethod:
		for _, s := range args.(*structs.ServiceRegistrationUpsertRequest).Services {
			f.regs[s.ID] = s
		}
	case structs.ServiceRegistrationDeleteByIDRPCMethod:
		id := args.(*structs.ServiceRegistrationDeleteByIDRequest).ID
		if _, ok := f.regs[id]; !ok {
			return errors.New("service registration not found")
		}
		delete(f.regs, id)
	default:
		return errors.New("unexpected " + method)
	}
	return nil
}

func (f *fakeCatalog) names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, r := range f.regs {
		out = append(out, r.ServiceName)
	}
	slices.Sort(out)
	return out
}

func (f *fakeCatalog) byName(name string) *structs.ServiceRegistration {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range slices.Sorted(maps.Keys(f.regs)) {
		if f.regs[id].ServiceName == name {
			return f.regs[id]
		}
	}
	return nil
}

// serviceAlloc is a service alloc whose group has a service "grp" on
// port "db" and whose task "main" (running for runFor) has "tsk".
func serviceAlloc(runFor string) *structs.Allocation {
	main := mt("main", map[string]any{"run_for": runFor})
	main.Services = []*structs.Service{{Name: "tsk", PortLabel: "db", Provider: structs.ServiceProviderNomad}}
	a := testAlloc(main)
	a.Job.Type = structs.JobTypeService
	a.Job.TaskGroups[0].Services = []*structs.Service{{Name: "grp", PortLabel: "db", Provider: structs.ServiceProviderNomad, Tags: []string{"t"}}}
	a.AllocatedResources = &structs.AllocatedResources{Shared: structs.AllocatedSharedResources{
		Ports: []structs.AllocatedPortMapping{{Label: "db", Value: 23456, HostIP: "10.1.2.3"}},
	}}
	return a
}

func serviceRunner(t *testing.T, a *structs.Allocation, cat *fakeCatalog) *AllocRunner {
	ar, _ := newRunnerWith(t, a, func(c *Config) {
		c.ExtraHooks = []HookFactory{ServiceHookFactory(cat)}
		c.Node.SecretID = "secret"
	})
	return ar
}

// Services are registered while the task runs, with the alloc's address
// and port, and leave the catalog when the task ends.
func TestServiceHook_RegisteredWhileRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := &fakeCatalog{regs: map[string]*structs.ServiceRegistration{}}
		a := serviceAlloc("30s")
		ar := serviceRunner(t, a, cat)
		go ar.Run()
		time.Sleep(time.Second)
		synctest.Wait()
		must.Eq(t, []string{"grp", "tsk"}, cat.names())
		grp := cat.byName("grp")
		must.Eq(t, &structs.ServiceRegistration{
			ID: "_nomad-task-" + a.ID + "-group-g-grp-db", ServiceName: "grp", Namespace: "default", NodeID: "n1",
			Datacenter: "dc1", JobID: "j", AllocID: a.ID, Tags: []string{"t"}, Address: "10.1.2.3", Port: 23456,
		}, grp)
		must.Eq(t, "_nomad-task-"+a.ID+"-main-tsk-db", cat.byName("tsk").ID)

		<-ar.WaitCh()
		synctest.Wait()
		must.SliceEmpty(t, cat.names())
	})
}

// A stop takes the services out before the group's shutdown_delay, so
// nobody is sent to a task about to die.
func TestServiceHook_StopDeregistersBeforeShutdownDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := &fakeCatalog{regs: map[string]*structs.ServiceRegistration{}}
		a := serviceAlloc("1h")
		delay := 10 * time.Second
		a.Job.TaskGroups[0].ShutdownDelay = &delay
		ar := serviceRunner(t, a, cat)
		go ar.Run()
		time.Sleep(time.Second)
		synctest.Wait()
		must.SliceLen(t, 2, cat.names())

		stopped := a.Copy()
		stopped.DesiredStatus = structs.AllocDesiredStatusStop
		ar.Update(stopped)
		time.Sleep(time.Second)
		synctest.Wait()
		must.SliceEmpty(t, cat.names())
		must.Eq(t, structs.TaskStateRunning, ar.TaskStates()["main"].State, must.Sprint("still in the shutdown delay"))
		<-ar.WaitCh()
	})
}

// A service whose address cannot be resolved is reported on the task
// once, and the others are still registered.
func TestServiceHook_UnresolvableServiceIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := &fakeCatalog{regs: map[string]*structs.ServiceRegistration{}}
		a := serviceAlloc("5s")
		a.Job.TaskGroups[0].Tasks[0].Services[0].AddressMode = "alloc"
		ar := serviceRunner(t, a, cat)
		go ar.Run()
		time.Sleep(time.Second)
		synctest.Wait()
		must.Eq(t, []string{"grp"}, cat.names())
		var msgs []string
		for _, e := range ar.TaskStates()["main"].Events {
			if e.Type == structs.TaskHookFailed {
				msgs = append(msgs, e.DisplayMessage)
			}
		}
		must.SliceLen(t, 1, msgs)
		must.StrContains(t, msgs[0], `Service registration failed: service "tsk": cannot use address_mode="alloc"`)
		<-ar.WaitCh()
	})
}

// Service names and tags are interpolated with the environment, and a
// service's check_restart applies to its checks, as in Nomad.
func TestServiceHook_InterpolatesAndMergesCheckRestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := &fakeCatalog{regs: map[string]*structs.ServiceRegistration{}}
		a := serviceAlloc("5s")
		a.Job.Meta = map[string]string{"tier": "gold"}
		grp := a.Job.TaskGroups[0].Services[0]
		grp.Name = "${NOMAD_JOB_NAME}-${NOMAD_GROUP_NAME}"
		grp.Tags = []string{"${NOMAD_META_tier}"}
		grp.CheckRestart = &structs.CheckRestart{Limit: 3, Grace: time.Minute}
		grp.Checks = []*structs.ServiceCheck{{Name: "c", Type: "tcp", Interval: time.Hour, Timeout: time.Second, CheckRestart: &structs.CheckRestart{Limit: 5}}}
		ar := serviceRunner(t, a, cat)
		go ar.Run()
		time.Sleep(time.Second)
		synctest.Wait()
		r := cat.byName("j-g")
		must.NotNil(t, r, must.Sprint(cat.names()))
		must.Eq(t, []string{"gold"}, r.Tags)
		must.Eq(t, "_nomad-task-"+a.ID+"-group-g-j-g-db", r.ID)
		var h *serviceHook
		for _, hk := range ar.hooks {
			if s, ok := hk.(*serviceHook); ok {
				h = s
			}
		}
		svcs := h.services(a, "", a.Job.TaskGroups[0].Services)
		must.Eq(t, &structs.CheckRestart{Limit: 5, Grace: time.Minute}, svcs[0].Checks[0].CheckRestart)
		<-ar.WaitCh()
	})
}

// hangingRPC never answers until the call's context ends.
type hangingRPC struct{}

func (hangingRPC) Call(ctx context.Context, _ string, _, _ any) error {
	<-ctx.Done()
	return ctx.Err()
}

// Servers that never answer hold no task up: the alloc runs and ends on
// time, and the registrar gives up once the alloc is over.
func TestServiceHook_UnansweredServersHoldNothingUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := serviceAlloc("5s")
		ar, _ := newRunnerWith(t, a, func(c *Config) {
			c.ExtraHooks = []HookFactory{ServiceHookFactory(hangingRPC{})}
		})
		start := time.Now()
		go ar.Run()
		<-ar.WaitCh()
		must.Less(t, 6*time.Second, time.Since(start))
		st, _ := ar.ClientStatus()
		must.Eq(t, structs.AllocClientStatusComplete, st)
		for _, h := range ar.hooks {
			if s, ok := h.(*serviceHook); ok {
				<-s.reg.Done()
			}
		}
	})
}
