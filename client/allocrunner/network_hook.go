package allocrunner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/network"
	"github.com/nomadq/nomadq/client/taskrunner"
	"github.com/nomadq/nomadq/structs"
)

// networkTimeout bounds one CNI setup or teardown.
const networkTimeout = 2 * time.Minute

// networkState is the alloc's own network as its tasks and the servers
// see it.
type networkState struct {
	isolation *drivers.NetworkIsolation
	status    *structs.AllocNetworkStatus
}

// taskNetwork is the namespace tasks join; nil for the host's network.
func (ar *AllocRunner) taskNetwork() *drivers.NetworkIsolation {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.network == nil {
		return nil
	}
	c := *ar.network.isolation
	return &c
}

// networkStatus is the alloc's network as reported to the servers: empty
// for the host's network, which has no interface of the alloc's own.
func (ar *AllocRunner) networkStatus() *structs.AllocNetworkStatus {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if ar.network == nil {
		return &structs.AllocNetworkStatus{}
	}
	c := *ar.network.status
	return &c
}

// groupNetwork is the group's network block, or nil.
func groupNetwork(a *structs.Allocation) *structs.NetworkResource {
	if a.Job == nil {
		return nil
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil || len(tg.Networks) == 0 {
		return nil
	}
	return tg.Networks[0]
}

// networkHook gives an alloc of a group with network mode "bridge" or
// "cni/<name>" a network namespace before its tasks start, and removes it
// once they are all dead (Postrun) or the alloc is destroyed. A client
// restarted while the tasks run re-attaches to the namespace.
type networkHook struct {
	ar *AllocRunner
	nw *structs.NetworkResource
}

// newNetworkHook returns the hook; it does nothing for groups on the
// host's network.
func newNetworkHook(ar *AllocRunner) *networkHook {
	nw := groupNetwork(ar.cfg.Alloc)
	if nw == nil || !needsNamespace(nw.Mode) {
		nw = nil
	}
	return &networkHook{ar: ar, nw: nw}
}

func needsNamespace(mode string) bool {
	return mode == network.ModeBridge || mode == network.ModeNone || strings.HasPrefix(mode, network.ModeCNIPrefix)
}

func (h *networkHook) Name() string { return "network" }

func (h *networkHook) Prerun() error {
	if h.nw == nil {
		return nil
	}
	mgr := h.ar.cfg.Network
	if mgr == nil {
		return fmt.Errorf("network mode %q: this client cannot set up networks (not Linux or not root)", h.nw.Mode)
	}
	alloc := h.ar.Alloc()
	var st *network.Status
	if h.ar.cfg.Restored != nil {
		// Tasks of an earlier client may run in the namespace: keep it.
		st, _ = mgr.Restore(alloc.ID)
	}
	if st == nil {
		ctx, cancel := context.WithTimeout(context.Background(), networkTimeout)
		defer cancel()
		var err error
		spec := network.Spec{Mode: h.nw.Mode, Ports: portMappings(alloc), CNIArgs: cniArgs(h.nw)}
		if spec.Sandbox = sandboxDriver(alloc); spec.Sandbox != "" {
			sb := &drivers.NetworkCreateSpec{JobName: alloc.JobID, TaskGroup: alloc.TaskGroup, Hostname: h.hostname(alloc)}
			if d := h.nw.DNS; d != nil {
				sb.DNSServers, sb.DNSSearches, sb.DNSOptions = d.Servers, d.Searches, d.Options
			}
			spec.SandboxSpec = sb
		}
		if st, err = mgr.Setup(ctx, alloc.ID, spec); err != nil {
			return err
		}
	}
	iso := &drivers.NetworkIsolation{Path: st.NetnsPath, Hostname: h.hostname(alloc)}
	if err := h.writeEtc(iso, st.Address); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), networkTimeout)
		defer cancel()
		_ = mgr.Teardown(ctx, alloc.ID)
		return err
	}
	status := &structs.AllocNetworkStatus{InterfaceName: st.InterfaceName, Address: st.Address}
	if d := h.nw.DNS; d != nil {
		status.DNS = &structs.DNSConfig{Servers: d.Servers, Searches: d.Searches, Options: d.Options}
	}
	h.ar.mu.Lock()
	h.ar.network = &networkState{isolation: iso, status: status}
	h.ar.mu.Unlock()
	// Nomad's NOMAD_ALLOC_{IP,INTERFACE,ADDR}_<label>: where the port is
	// reached inside the alloc's network.
	if ar := alloc.AllocatedResources; ar != nil {
		for _, p := range ar.Shared.Ports {
			inside := p.Value
			if p.To > 0 {
				inside = p.To
			}
			h.ar.SetTaskEnv("NOMAD_ALLOC_INTERFACE_"+p.Label, st.InterfaceName)
			h.ar.SetTaskEnv("NOMAD_ALLOC_IP_"+p.Label, st.Address)
			h.ar.SetTaskEnv("NOMAD_ALLOC_ADDR_"+p.Label, net.JoinHostPort(st.Address, strconv.Itoa(inside)))
		}
	}
	return nil
}

// hostname is the group's hostname with the alloc's variables
// (${NOMAD_ALLOC_INDEX}, ${NOMAD_JOB_NAME}, ...) interpolated, as Nomad
// interpolates it.
func (h *networkHook) hostname(alloc *structs.Allocation) string {
	if h.nw.Hostname == "" || !strings.Contains(h.nw.Hostname, "${") {
		return h.nw.Hostname
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil || len(tg.Tasks) == 0 {
		return h.nw.Hostname
	}
	env := taskrunner.BuildEnv(taskrunner.EnvInput{Alloc: alloc, Task: tg.Tasks[0], Node: h.ar.cfg.Node, Region: h.ar.cfg.Region})
	return env.Interpolate(h.nw.Hostname)
}

// writeEtc writes the /etc/hosts and /etc/resolv.conf the tasks see, for
// the group's hostname and dns, into the alloc dir.
func (h *networkHook) writeEtc(iso *drivers.NetworkIsolation, address string) error {
	if iso.Hostname == "" && h.nw.DNS == nil {
		return nil
	}
	dir := filepath.Join(h.ar.allocDir.Dir, ".network")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("network: %w", err)
	}
	if iso.Hostname != "" {
		iso.HostsFile = filepath.Join(dir, "hosts")
		if err := os.WriteFile(iso.HostsFile, network.HostsFile(iso.Hostname, address), 0o644); err != nil {
			return fmt.Errorf("network: write hosts file: %w", err)
		}
	}
	if d := h.nw.DNS; d != nil {
		iso.ResolvConf = filepath.Join(dir, "resolv.conf")
		if err := os.WriteFile(iso.ResolvConf, network.ResolvConf(d.Servers, d.Searches, d.Options), 0o644); err != nil {
			return fmt.Errorf("network: write resolv.conf: %w", err)
		}
	}
	return nil
}

func (h *networkHook) teardown() error {
	mgr := h.ar.cfg.Network
	if mgr == nil || h.nw == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), networkTimeout)
	defer cancel()
	err := mgr.Teardown(ctx, h.ar.cfg.Alloc.ID)
	if err != nil {
		err = errors.Join(fmt.Errorf("tear down network of mode %q", h.nw.Mode), err)
	}
	return err
}

// Postrun removes the namespace once every task is dead.
func (h *networkHook) Postrun() error { return h.teardown() }

// Destroy removes what a failed Postrun left.
func (h *networkHook) Destroy() error { return h.teardown() }

// sandboxDriver is the driver that must hold the alloc's namespace in a
// container of its own: docker, when a docker task of the group leaves
// network_mode unset and so joins the group's network.
func sandboxDriver(a *structs.Allocation) string {
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return ""
	}
	for _, t := range tg.Tasks {
		if t.Driver != "docker" {
			continue
		}
		if m, _ := t.Config["network_mode"].(string); m == "" {
			return t.Driver
		}
	}
	return ""
}

// portMappings are the group's ports as the portmap plugin forwards them:
// the scheduler's host port to the port's "to", or to the same number
// when "to" is unset (or -1), as Nomad maps them.
func portMappings(a *structs.Allocation) []network.PortMapping {
	if a.AllocatedResources == nil {
		return nil
	}
	var out []network.PortMapping
	for _, p := range a.AllocatedResources.Shared.Ports {
		to := p.To
		if to <= 0 {
			to = p.Value
		}
		out = append(out, network.PortMapping{Label: p.Label, HostPort: p.Value, ContainerPort: to})
	}
	return out
}

func cniArgs(nw *structs.NetworkResource) map[string]string {
	if nw.CNI == nil {
		return nil
	}
	return nw.CNI.Args
}
