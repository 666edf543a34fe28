package allocrunner

import (
	"sync"
	"time"

	"github.com/nomadq/nomadq/client/serviceregistration"
	"github.com/nomadq/nomadq/client/serviceregistration/checks"
	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

// TaskStateHook is told, on the runner's goroutine, each time a task's
// state may have changed. It must not block.
type TaskStateHook interface {
	RunnerHook
	TaskStatesChanged()
}

// tasksChanged tells the hooks that watch task states.
func (ar *AllocRunner) tasksChanged() {
	for _, h := range ar.hooks {
		if t, ok := h.(TaskStateHook); ok {
			t.TaskStatesChanged()
		}
	}
}

// CheckResults returns the latest result of each health check of the
// alloc's nomad-provider services, by check ID; empty when it has none.
func (ar *AllocRunner) CheckResults() map[string]*structs.CheckQueryResult {
	for _, h := range ar.hooks {
		if s, ok := h.(*serviceHook); ok {
			return s.checks.Results()
		}
	}
	return map[string]*structs.CheckQueryResult{}
}

// serviceHook registers the alloc's nomad-provider services with the
// servers while they should be up: group services once a task of the
// alloc runs, a task's services while that task runs; all of them leave
// the catalog when the alloc is stopped or its tasks are dead. It runs
// their health checks meanwhile and restarts a task whose check fails
// check_restart's limit. The servers are reached in the registrar's own
// goroutine, so a slow or absent server never holds a task up.
type serviceHook struct {
	ar     *AllocRunner
	reg    *serviceregistration.Registrar
	checks *checks.Runner

	// syncMu makes syncs one at a time, so an older view of the tasks
	// never lands after a newer one.
	syncMu sync.Mutex

	mu      sync.Mutex
	killing bool
	done    bool
	// reported is the last registration error reported per owner, so a
	// failing service is reported once, not on every state change.
	reported map[string]string
	watches  map[string]*checks.RestartWatch
}

// ServiceHookFactory returns the factory of the hook that registers an
// alloc's nomad-provider services through rpc and runs their checks; the
// hook is left out of allocs without such services.
func ServiceHookFactory(rpc serviceregistration.RPC) HookFactory {
	return func(r Runner) RunnerHook {
		ar, ok := r.(*AllocRunner)
		if !ok || rpc == nil || !serviceregistration.HasServices(ar.Alloc()) {
			return nil
		}
		return newServiceHook(ar, rpc)
	}
}

func newServiceHook(ar *AllocRunner, rpc serviceregistration.RPC) *serviceHook {
	token := ""
	if ar.cfg.Node != nil {
		token = ar.cfg.Node.SecretID
	}
	h := &serviceHook{
		ar:       ar,
		reported: make(map[string]string),
		watches:  make(map[string]*checks.RestartWatch),
	}
	h.reg = serviceregistration.NewRegistrar(serviceregistration.RegistrarConfig{
		RPC:       rpc,
		Region:    ar.cfg.Region,
		Namespace: ar.Alloc().Namespace,
		Token:     token,
		Logger:    ar.logger.Named("services"),
	})
	if ar.cfg.Restored != nil {
		// An earlier client may have registered services whose tasks
		// died while no client watched: they go unless running.
		h.reg.MaybeRegistered(h.allIDs(ar.Alloc()))
	}
	h.checks = checks.NewRunner(nil, h.observe)
	return h
}

func (h *serviceHook) Name() string { return "nomad_services" }

// TaskStatesChanged implements TaskStateHook.
func (h *serviceHook) TaskStatesChanged() { h.sync() }

// Update implements UpdateHook: a new job version may change services.
func (h *serviceHook) Update(*structs.Allocation) error {
	h.sync()
	return nil
}

// PreKill implements PreKillHook: services leave the catalog before the
// shutdown_delay and the kill, so no one is sent to a dying task.
func (h *serviceHook) PreKill() {
	h.mu.Lock()
	h.killing = true
	h.mu.Unlock()
	h.sync()
}

// Postrun implements PostrunHook: every task is dead.
func (h *serviceHook) Postrun() error {
	h.mu.Lock()
	h.done = true
	h.mu.Unlock()
	h.checks.Stop()
	h.reg.Close()
	return nil
}

// Shutdown implements ShutdownHook: the tasks live on, and so do their
// registrations, for the next client to take over.
func (h *serviceHook) Shutdown() {
	h.checks.Stop()
	h.reg.Shutdown()
}

// sync brings registrations and checks in line with the tasks' states.
func (h *serviceHook) sync() {
	h.syncMu.Lock()
	defer h.syncMu.Unlock()
	h.mu.Lock()
	killing, done := h.killing, h.done
	h.mu.Unlock()
	if done {
		return
	}
	// The servers' copy of the alloc lacks the network this client set
	// up for it until they hear of it; address_mode "alloc" needs it now.
	view := *h.ar.Alloc()
	view.NetworkStatus = h.ar.networkStatus()
	alloc := &view
	var regs []*structs.ServiceRegistration
	var specs []checks.Spec
	if !killing && !alloc.TerminalStatus() {
		anyRunning := false
		for _, tr := range h.ar.order {
			if tr.State().State == structs.TaskStateRunning {
				anyRunning = true
			}
		}
		if anyRunning {
			group := h.services(alloc, "", serviceregistration.GroupServices(alloc))
			r, err := serviceregistration.Build(alloc, h.ar.cfg.Node, "", group)
			h.report("", err)
			regs = append(regs, r...)
			specs = append(specs, h.specs(alloc, "", group)...)
		}
		for task, services := range serviceregistration.TaskServices(alloc) {
			tr := h.ar.TaskRunner(task)
			if tr == nil || tr.State().State != structs.TaskStateRunning {
				continue
			}
			services = h.services(alloc, task, services)
			r, err := serviceregistration.Build(alloc, h.ar.cfg.Node, task, services)
			h.report(task, err)
			regs = append(regs, r...)
			specs = append(specs, h.specs(alloc, task, services)...)
		}
	}
	h.reg.Want(regs)
	h.checks.Sync(specs)
}

// report records a service that cannot be registered as a task event:
// on the service's task, or on every task for a group service.
func (h *serviceHook) report(task string, err error) {
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	h.mu.Lock()
	same := h.reported[task] == msg
	h.reported[task] = msg
	h.mu.Unlock()
	if same || err == nil {
		return
	}
	h.ar.logger.Error("cannot register service", "task", task, "error", err)
	for _, tr := range h.ar.order {
		if task != "" && tr.Task().Name != task {
			continue
		}
		e := taskrunner.NewEvent(structs.TaskHookFailed)
		e.DisplayMessage = "Service registration failed: " + msg
		e.Message = e.DisplayMessage
		tr.EmitEvent(e)
	}
}

// specs are the checks of services owned by task (empty: the group).
func (h *serviceHook) specs(alloc *structs.Allocation, task string, services []*structs.Service) []checks.Spec {
	nodeAddr := ""
	if h.ar.cfg.Node != nil {
		nodeAddr = h.ar.cfg.Node.Attributes[serviceregistration.NodeAddressAttr]
	}
	network := serviceregistration.NetworkOf(alloc, nodeAddr)
	var out []checks.Spec
	for _, s := range services {
		for _, c := range s.Checks {
			c = c.Copy()
			if task != "" && c.TaskName == "" {
				c.TaskName = task
			}
			// As Nomad, a result names the service's task: a task
			// service's, or the one a group service names.
			owner := s.TaskName
			if owner == "" {
				owner = task
			}
			spec := checks.Spec{
				ID:             checks.ID(alloc.ID, alloc.TaskGroup, c),
				Check:          c,
				Group:          alloc.Name,
				Task:           owner,
				Service:        s.Name,
				Network:        network,
				ServiceAddress: s.Address,
				ServicePort:    s.PortLabel,
			}
			if tr := h.ar.TaskRunner(c.TaskName); tr != nil {
				spec.Exec = tr
			}
			out = append(out, spec)
		}
	}
	return out
}

// observe applies check_restart to a check's run.
func (h *serviceHook) observe(s checks.Spec, o checks.Outcome) {
	if s.Check.CheckRestart == nil {
		return
	}
	targets := h.restartTargets(s)
	var startedAt time.Time
	for _, tr := range targets {
		st := tr.State()
		if st.State != structs.TaskStateRunning {
			startedAt = time.Time{}
			break
		}
		if st.StartedAt.After(startedAt) {
			startedAt = st.StartedAt
		}
	}
	h.mu.Lock()
	w, ok := h.watches[s.ID]
	if !ok {
		w = checks.NewRestartWatch(s.Check)
		h.watches[s.ID] = w
	}
	restart := !h.killing && !h.done && w.Observe(o, time.Now(), startedAt)
	h.mu.Unlock()
	if !restart {
		return
	}
	for _, tr := range targets {
		if err := tr.RestartFailure(checks.RestartReason(s.Check.Name)); err != nil {
			h.ar.logger.Warn("check_restart cannot restart task", "task", tr.Task().Name, "check", s.Check.Name, "error", err)
		}
	}
}

// restartTargets are the tasks a failing check restarts: the task it
// names (a task service's own task), else the group's main tasks.
func (h *serviceHook) restartTargets(s checks.Spec) []*taskrunner.TaskRunner {
	if s.Check.TaskName != "" {
		if tr := h.ar.TaskRunner(s.Check.TaskName); tr != nil {
			return []*taskrunner.TaskRunner{tr}
		}
		return nil
	}
	var out []*taskrunner.TaskRunner
	for _, tr := range h.ar.order {
		if isMain(tr.Task()) {
			out = append(out, tr)
		}
	}
	return out
}

// services returns copies of services owned by task (empty: the group)
// with ${...} interpolated in the fields Nomad interpolates, from the
// task's environment (the alloc's for a group service), and each check
// carrying its service's check_restart under its own.
func (h *serviceHook) services(alloc *structs.Allocation, task string, in []*structs.Service) []*structs.Service {
	t := &structs.Task{}
	if tr := h.ar.TaskRunner(task); tr != nil {
		t = tr.Task()
	}
	env := taskrunner.BuildEnv(taskrunner.EnvInput{Alloc: alloc, Task: t, Node: h.ar.cfg.Node,
		Region: h.ar.cfg.Region, AllocDir: h.ar.allocDir, Extra: h.ar.taskEnv()})
	out := make([]*structs.Service, 0, len(in))
	for _, s := range in {
		s = s.Copy()
		s.Name = env.Interpolate(s.Name)
		s.PortLabel = env.Interpolate(s.PortLabel)
		s.Address = env.Interpolate(s.Address)
		for i, tag := range s.Tags {
			s.Tags[i] = env.Interpolate(tag)
		}
		for _, c := range s.Checks {
			c.Name = env.Interpolate(c.Name)
			c.Command = env.Interpolate(c.Command)
			for i, a := range c.Args {
				c.Args[i] = env.Interpolate(a)
			}
			c.Path = env.Interpolate(c.Path)
			c.Protocol = env.Interpolate(c.Protocol)
			c.PortLabel = env.Interpolate(c.PortLabel)
			c.Method = env.Interpolate(c.Method)
			for k, vs := range c.Header {
				for i, v := range vs {
					c.Header[k][i] = env.Interpolate(v)
				}
			}
			c.CheckRestart = mergeCheckRestart(s.CheckRestart, c.CheckRestart)
		}
		out = append(out, s)
	}
	return out
}

// mergeCheckRestart is the service's check_restart with the check's own
// settings over it, as Nomad merges them.
func mergeCheckRestart(service, check *structs.CheckRestart) *structs.CheckRestart {
	if service == nil {
		return check
	}
	m := *service
	if check != nil {
		if check.Limit > 0 {
			m.Limit = check.Limit
		}
		if check.Grace > 0 {
			m.Grace = check.Grace
		}
		m.IgnoreWarnings = m.IgnoreWarnings || check.IgnoreWarnings
	}
	return &m
}

// allIDs is the ID of every service the alloc may have registered.
func (h *serviceHook) allIDs(alloc *structs.Allocation) []string {
	var ids []string
	for _, s := range h.services(alloc, "", serviceregistration.GroupServices(alloc)) {
		ids = append(ids, serviceregistration.MakeAllocServiceID(alloc.ID, serviceregistration.GroupOwner(alloc.TaskGroup), s))
	}
	for task, ss := range serviceregistration.TaskServices(alloc) {
		for _, s := range h.services(alloc, task, ss) {
			ids = append(ids, serviceregistration.MakeAllocServiceID(alloc.ID, task, s))
		}
	}
	return ids
}
