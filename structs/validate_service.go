package structs

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Service address modes.
const (
	ServiceAddressModeHost   = "host"
	ServiceAddressModeDriver = "driver"
	ServiceAddressModeAlloc  = "alloc"
)

// Check on_update values (a service's on_update takes the same ones).
const (
	ServiceOnUpdateIgnoreWarnings = "ignore_warnings"
	ServiceOnUpdateIgnore         = "ignore"
)

// MinCheckInterval and MinCheckTimeout are Nomad's lower bounds of a check's
// interval and timeout.
const (
	MinCheckInterval = time.Second
	MinCheckTimeout  = time.Second
)

// serviceNameRE is Nomad's service name rule (RFC 1123 labels, at most 63
// characters), applied after ${...} interpolations are replaced.
var (
	serviceNameRE   = regexp.MustCompile(`^(?i:[a-z0-9]|[a-z0-9][a-z0-9\-]{0,61}[a-z0-9])$`)
	interpolationRE = regexp.MustCompile(`\$\{[^}]*\}`)
)

// groupServicesCtx names a group's own services as Nomad's uniqueness
// check does ("group->name:port").
const groupServicesCtx = "group"

// validateGroupServices checks the group's services and, across the group,
// that no two services of one owner (the group or one task) share a name
// and port. ports holds the group network's port labels.
func (tg *TaskGroup) validateServices(errs *MultiError, ctx string, ports map[string]bool) {
	if tooMany(errs, ctx, "services", len(tg.Services), MaxListEntries) {
		return
	}
	tasks := make(map[string]bool, len(tg.Tasks))
	for _, t := range tg.Tasks {
		if t != nil {
			tasks[t.Name] = true
		}
	}
	validateServiceList(errs, ctx, tg.Services, "", tasks, ports)
}

// validateServices checks a task's services; see validateServiceList.
func (t *Task) validateServices(errs *MultiError, ctx string, ports map[string]bool) {
	if tooMany(errs, ctx, "services", len(t.Services), MaxListEntries) {
		return
	}
	validateServiceList(errs, ctx, t.Services, t.Name, map[string]bool{t.Name: true}, ports)
}

// validateServiceList checks the services of one owner: the group when
// task is "", else that task. tasks are the task names a check or service
// may name.
func validateServiceList(errs *MultiError, ctx string, ss []*Service, task string, tasks, ports map[string]bool) {
	seen := make(map[string]bool, len(ss))
	for i, s := range ss {
		if s == nil {
			errs.Add(fmt.Errorf("%s: service %d is null: a service needs a name", ctx, i+1))
			continue
		}
		key := s.Name + "\x00" + s.PortLabel
		if seen[key] {
			what := fmt.Sprintf("service %q", s.Name)
			if s.PortLabel != "" {
				what = fmt.Sprintf("service %q on port %q", s.Name, s.PortLabel)
			}
			errs.Add(fmt.Errorf("%s: %s is defined more than once: services of a %s must differ in name or port", ctx, what, ownerWord(task)))
		}
		seen[key] = true
		s.validate(errs, fmt.Sprintf("%s, service %q", ctx, s.Name), task, tasks, ports)
	}
}

func ownerWord(task string) string {
	if task == "" {
		return groupServicesCtx
	}
	return "task"
}

func (s *Service) validate(errs *MultiError, ctx, task string, tasks, ports map[string]bool) {
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	switch s.Provider {
	case ServiceProviderNomad:
	case "", ServiceProviderConsul:
		add("provider %q is not supported by nomadq: Consul is not available; set provider = %q to use Nomad's built-in service discovery", ServiceProviderConsul, ServiceProviderNomad)
		return
	default:
		add("provider %q is not allowed: must be %q", s.Provider, ServiceProviderNomad)
		return
	}
	if !serviceNameRE.MatchString(interpolationRE.ReplaceAllString(s.Name, "ENV-VAR")) {
		add("name %q is not allowed: must be valid per RFC 1123 (letters, digits and dashes, not starting or ending with a dash) and at most 63 characters", s.Name)
	}
	switch s.AddressMode {
	case "", ServiceAddressModeAuto:
	case ServiceAddressModeHost, ServiceAddressModeDriver, ServiceAddressModeAlloc:
		if s.Address != "" {
			add("address %q is not allowed with address_mode %q: a custom address needs address_mode = %q", s.Address, s.AddressMode, ServiceAddressModeAuto)
		}
	default:
		add("address_mode %q is not allowed: must be one of %q, %q, %q or %q", s.AddressMode, ServiceAddressModeAuto, ServiceAddressModeHost, ServiceAddressModeAlloc, ServiceAddressModeDriver)
	}
	if task == "" && s.AddressMode == ServiceAddressModeDriver {
		add("address_mode %q is not allowed in a group service: only a task's services can use the driver's address", s.AddressMode)
	}
	if task != "" && s.AddressMode == ServiceAddressModeAlloc {
		add("address_mode %q is not allowed in a task service: only a group's services can use the alloc's address", s.AddressMode)
	}
	switch s.OnUpdate {
	case "", ServiceOnUpdateHealthy, ServiceOnUpdateIgnoreWarnings, ServiceOnUpdateIgnore:
	default:
		add("on_update %q is not allowed: must be one of %q, %q or %q", s.OnUpdate, ServiceOnUpdateHealthy, ServiceOnUpdateIgnoreWarnings, ServiceOnUpdateIgnore)
	}
	if s.TaskName != "" && !tasks[s.TaskName] {
		if task != "" {
			add("task %q is not allowed: a task's service may only name its own task %q", s.TaskName, task)
		} else {
			add("task %q does not exist in the group", s.TaskName)
		}
	}
	if s.PortLabel != "" {
		validatePortRef(add, "port", s.PortLabel, task == "" || s.AddressMode == ServiceAddressModeDriver, ports)
	}
	names := make(map[string]bool, len(s.Checks))
	for i, c := range s.Checks {
		if c == nil {
			add("check %d is null: a check needs a type", i+1)
			continue
		}
		if names[c.Name] {
			add("check %q is defined more than once: check names must be unique in a service", c.Name)
		}
		names[c.Name] = true
		c.validate(errs, fmt.Sprintf("%s, check %q", ctx, c.Name), s, task, tasks, ports)
	}
}

// validatePortRef checks a service's or check's port: a label of the
// group's network, or a number where Nomad takes one (a group service's,
// or a task service's with the driver's address).
func validatePortRef(add func(string, ...any), field, port string, numericOK bool, ports map[string]bool) {
	if n, err := strconv.Atoi(port); err == nil {
		if !numericOK {
			add("%s %d is not allowed: a task service's numeric port needs address_mode = %q; otherwise name a port label of the group's network", field, n, ServiceAddressModeDriver)
		} else if n <= 0 || n > MaxPort {
			add("%s %d is not allowed: must be between 1 and %d", field, n, MaxPort)
		}
		return
	}
	if !ports[port] {
		add("%s %q does not exist: must be a port label of the group's network", field, port)
	}
}

func (c *ServiceCheck) validate(errs *MultiError, ctx string, s *Service, task string, tasks, ports map[string]bool) {
	add := func(format string, a ...any) { errs.Add(fmt.Errorf(ctx+": "+format, a...)) }
	switch c.Type {
	case ServiceCheckHTTP:
		if c.Path == "" {
			add("path is missing: an http check needs a path")
		} else if u, err := url.Parse(c.Path); err != nil || u.IsAbs() {
			add("path %q is not allowed: must be a relative URL path", c.Path)
		}
		switch c.Protocol {
		case "", "http", "https":
		default:
			add("protocol %q is not allowed: must be %q or %q", c.Protocol, "http", "https")
		}
		if c.Method != "" && !isHTTPMethod(c.Method) {
			add("method %q is not allowed: must be an HTTP method such as GET, HEAD or POST", c.Method)
		}
	case ServiceCheckTCP:
	case ServiceCheckScript:
		if c.Command == "" {
			add("command is missing: a script check needs a command")
		}
	case ServiceCheckGRPC:
		add("type %q is not supported by nomadq: grpc checks need Consul; use %q, %q or %q", c.Type, ServiceCheckHTTP, ServiceCheckTCP, ServiceCheckScript)
	default:
		add("type %q is not allowed: must be one of %q, %q or %q", c.Type, ServiceCheckHTTP, ServiceCheckTCP, ServiceCheckScript)
	}
	if c.Interval < MinCheckInterval {
		add("interval %s is not allowed: must be at least %s", c.Interval, MinCheckInterval)
	}
	if c.Timeout < MinCheckTimeout {
		add("timeout %s is not allowed: must be at least %s", c.Timeout, MinCheckTimeout)
	}
	switch c.AddressMode {
	case "", ServiceAddressModeHost, ServiceAddressModeAlloc:
		if task != "" && c.AddressMode == ServiceAddressModeAlloc {
			add("address_mode %q is not allowed in a task service's check: only a group's services can use the alloc's address", c.AddressMode)
		}
	case ServiceAddressModeDriver:
		add("address_mode %q is not supported by nomadq: a nomad-provider check runs against the host's or the alloc's address; use %q or %q", c.AddressMode, ServiceAddressModeHost, ServiceAddressModeAlloc)
	default:
		add("address_mode %q is not allowed: must be %q or %q", c.AddressMode, ServiceAddressModeHost, ServiceAddressModeAlloc)
	}
	switch c.OnUpdate {
	case "", ServiceOnUpdateHealthy, ServiceOnUpdateIgnore:
	case ServiceOnUpdateIgnoreWarnings:
		add("on_update %q is not supported by nomadq: nomad-provider checks have no warning state; use %q or %q", c.OnUpdate, ServiceOnUpdateHealthy, ServiceOnUpdateIgnore)
	default:
		add("on_update %q is not allowed: must be %q or %q", c.OnUpdate, ServiceOnUpdateHealthy, ServiceOnUpdateIgnore)
	}
	if cr := c.CheckRestart; cr != nil {
		if cr.Limit < 0 {
			add("check_restart limit %d is not allowed: must be at least 0", cr.Limit)
		}
		if cr.Grace < 0 {
			add("check_restart grace %s is not allowed: must be at least 0", cr.Grace)
		}
		if cr.IgnoreWarnings {
			add("check_restart ignore_warnings is not supported by nomadq: nomad-provider checks have no warning state")
		}
		if c.OnUpdate == ServiceOnUpdateIgnore && cr.Limit > 0 {
			add("on_update %q is not allowed with check_restart: a check that deployments ignore must not restart the task", c.OnUpdate)
		}
	}
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"expose", c.Expose},
		{"success_before_passing", c.SuccessBeforePassing != 0},
		{"failures_before_critical", c.FailuresBeforeCritical != 0},
		{"failures_before_warning", c.FailuresBeforeWarning != 0},
		{"tls_server_name", c.TLSServerName != ""},
		{"initial_status", c.InitialStatus != ""},
	} {
		if f.set {
			add("%s is not supported by nomadq: it applies to Consul checks only", f.name)
		}
	}
	if c.TaskName != "" && !tasks[c.TaskName] {
		if task != "" {
			add("task %q is not allowed: a task's check may only name its own task %q", c.TaskName, task)
		} else {
			add("task %q does not exist in the group", c.TaskName)
		}
	}
	if c.Type == ServiceCheckScript && task == "" && c.TaskName == "" && s.TaskName == "" {
		add("task is missing: a script check of a group service runs in a task; set task on the check or the service")
	}
	if c.Type == ServiceCheckHTTP || c.Type == ServiceCheckTCP {
		port := c.PortLabel
		if port == "" {
			port = s.PortLabel
		}
		_, numeric := strconv.Atoi(port)
		switch {
		case port == "":
			add("port is missing: a %s check needs a port, on the check or its service", c.Type)
		case c.PortLabel != "":
			validatePortRef(add, "port", port, task == "", ports)
		case numeric == nil && task != "":
			add("port %s (the service's) is not allowed for a task service's check: a check needs a port label of the group's network", port)
		}
	}
}

func isHTTPMethod(m string) bool {
	switch strings.ToUpper(m) {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// canonicalize fills a check's defaults as Nomad does: a name from its
// service, the task of a task service (or of a group service that names
// one), and on_update from the service.
func (c *ServiceCheck) canonicalize(s *Service) {
	if len(c.Args) == 0 {
		c.Args = nil
	}
	if len(c.Header) == 0 {
		c.Header = nil
	}
	if c.Name == "" {
		c.Name = fmt.Sprintf("service: %q check", s.Name)
	}
	if c.TaskName == "" {
		c.TaskName = s.TaskName
	}
	if c.OnUpdate == "" {
		c.OnUpdate = s.OnUpdate
	}
}
