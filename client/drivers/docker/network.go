package docker

import (
	"context"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"

	"github.com/nomadq/nomadq/client/drivers"
)

// A container cannot join a network namespace by path, so, as Nomad does,
// the alloc's namespace is held by a pause container run from the
// plugin's infra_image with no network of docker's (network mode "none"):
// the client pins that container's namespace and runs the CNI plugins in
// it, and the alloc's docker tasks join it with network mode
// "container:<pause container>".

// sandboxPrefix starts the name of an alloc's pause container, Nomad's.
const sandboxPrefix = "nomad_init_"

func sandboxName(allocID string) string { return sandboxPrefix + allocID }

// isSandbox reports whether a container name (as the engine lists it,
// with a leading "/") is a pause container's.
func isSandbox(names []string) bool {
	for _, n := range names {
		if strings.HasPrefix(strings.TrimPrefix(n, "/"), sandboxPrefix) {
			return true
		}
	}
	return false
}

// CreateNetwork starts the alloc's pause container, or finds the running
// one, and returns the path of its network namespace.
func (d *Driver) CreateNetwork(allocID string, spec *drivers.NetworkCreateSpec) (string, error) {
	if d.clientErr != nil {
		return "", fmt.Errorf("docker: %w", d.clientErr)
	}
	ctx, cancel := context.WithTimeout(d.ctx, d.cfg.InfraImagePullTimeout+time.Minute)
	defer cancel()
	name := sandboxName(allocID)
	if pid, running, err := d.sandboxPid(ctx, name); err == nil && running {
		return fmt.Sprintf("/proc/%d/ns/net", pid), nil
	} else if err == nil {
		// Stopped: a new one is made, the old namespace is gone anyway.
		_ = d.DestroyNetwork(allocID)
	}
	infra := taskConfig{image: d.cfg.InfraImage, imagePullTimeout: d.cfg.InfraImagePullTimeout}
	if err := d.ensureImage(infra, &drivers.TaskConfig{}); err != nil {
		return "", fmt.Errorf("docker: infra_image %q: %w", d.cfg.InfraImage, err)
	}
	cfg := &container.Config{
		Image:    d.cfg.InfraImage,
		Hostname: spec.Hostname,
		Labels: map[string]string{
			LabelAllocID:       allocID,
			LabelJobName:       spec.JobName,
			LabelTaskGroupName: spec.TaskGroup,
			LabelNodeName:      d.opts.NodeName,
			LabelNodeID:        d.opts.NodeID,
		},
	}
	host := &container.HostConfig{
		NetworkMode: "none",
		DNSSearch:   spec.DNSSearches,
		DNSOptions:  spec.DNSOptions,
		// The pause container lives as long as the alloc's network,
		// even across an engine restart.
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
	}
	for _, s := range spec.DNSServers {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return "", fmt.Errorf("docker: network dns server %q is not an IP address", s)
		}
		host.DNS = append(host.DNS, a)
	}
	res, err := d.client.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: name})
	if err != nil {
		return "", fmt.Errorf("docker: create the alloc's network container from infra_image %q: %w", d.cfg.InfraImage, err)
	}
	if _, err := d.client.ContainerStart(ctx, res.ID, client.ContainerStartOptions{}); err != nil {
		d.removeContainer(res.ID)
		return "", fmt.Errorf("docker: start the alloc's network container: %w", err)
	}
	pid, running, err := d.sandboxPid(ctx, res.ID)
	if err != nil || !running {
		d.removeContainer(res.ID)
		if err == nil {
			err = fmt.Errorf("it exited at once (infra_image %q must run until stopped)", d.cfg.InfraImage)
		}
		return "", fmt.Errorf("docker: the alloc's network container: %w", err)
	}
	d.logger.Debug("network container started", "alloc_id", allocID, "container_id", shortID(res.ID))
	return fmt.Sprintf("/proc/%d/ns/net", pid), nil
}

// DestroyNetwork removes the alloc's pause container; one that is gone is
// no error.
func (d *Driver) DestroyNetwork(allocID string) error {
	if d.clientErr != nil {
		return fmt.Errorf("docker: %w", d.clientErr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := d.client.ContainerRemove(ctx, sandboxName(allocID), client.ContainerRemoveOptions{Force: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("docker: remove the alloc's network container: %w", err)
	}
	return nil
}

// sandboxPid is the process of a pause container, by name or ID.
func (d *Driver) sandboxPid(ctx context.Context, ref string) (int, bool, error) {
	insp, err := d.client.ContainerInspect(ctx, ref, client.ContainerInspectOptions{})
	if err != nil {
		return 0, false, err
	}
	st := insp.Container.State
	if st == nil || !st.Running || st.Pid == 0 {
		return 0, false, nil
	}
	return st.Pid, true, nil
}

// joinedNetworkMode is the network mode of a task that joins its alloc's
// namespace: the pause container's.
func (d *Driver) joinedNetworkMode(allocID string) (container.NetworkMode, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	insp, err := d.client.ContainerInspect(ctx, sandboxName(allocID), client.ContainerInspectOptions{})
	if err != nil {
		return "", fmt.Errorf("docker: the alloc's network container: %w", err)
	}
	return container.NetworkMode("container:" + insp.Container.ID), nil
}

// checkJoinedNetwork refuses what a task cannot have with its network: a
// task joining its alloc's namespace (the group's bridge, cni or none
// network, network_mode unset) or another container's (network_mode
// "container:<name>") shares that container's hostname, resolv.conf and
// hosts, so the engine refuses its own; "ports" of a joined task are
// forwarded by the alloc's network only, from the group's ports; another
// container's network publishes none of ours; docker's bridge ("bridge",
// "default" or unset on a host-network group) publishes them; "host" has
// no mapping, so a port there must not ask for a different "to"; "none"
// has nothing to publish on.
func checkJoinedNetwork(tc *drivers.TaskConfig, c taskConfig) error {
	joined := tc.Network != nil && c.networkMode == ""
	other := strings.HasPrefix(c.networkMode, "container:")
	if joined || other {
		what := "a task that joins the group's network; set the group's network hostname and dns instead"
		if other {
			what = fmt.Sprintf("network_mode = %q: the task shares that container's hostname, dns and hosts", c.networkMode)
		}
		for _, k := range []struct {
			key string
			set bool
		}{
			{"hostname", c.hostname != ""},
			{"dns_servers", len(c.dnsServers) > 0},
			{"dns_search_domains", len(c.dnsSearch) > 0},
			{"dns_options", len(c.dnsOptions) > 0},
			{"extra_hosts", len(c.extraHosts) > 0},
		} {
			if k.set {
				return invalid(`config key %q: cannot be set on %s`, k.key, what)
			}
		}
	}
	if len(c.ports) == 0 {
		return nil
	}
	switch {
	case other:
		return invalid(`config key "ports": cannot be set with network_mode = %q: the task serves on that container's network, which publishes its own ports`, c.networkMode)
	case c.networkMode == "none":
		return invalid(`config key "ports": cannot be set with network_mode = "none": the container has no network to publish them from`)
	}
	for _, label := range c.ports {
		host, ok := tc.Env["NOMAD_HOST_PORT_"+label]
		if !ok {
			return invalid(`config key "ports": port label %q is not declared in the group's network`, label)
		}
		if inside := tc.Env["NOMAD_PORT_"+label]; c.networkMode == "host" && inside != host {
			return invalid(`config key "ports": port label %q maps host port %s to %s, but network_mode = "host" maps no ports: the task listens on the host port itself; drop the port's "to"`, label, host, inside)
		}
	}
	return nil
}

// publishedPorts are the port bindings of a task on docker's bridge, as
// Nomad makes them: each label of "ports" publishes the group port's
// host value, on its host IP, to its "to" inside the container (the same
// number when "to" is unset), over tcp and udp.
func publishedPorts(tc *drivers.TaskConfig, c taskConfig) (network.PortSet, network.PortMap, error) {
	exposed, bindings := network.PortSet{}, network.PortMap{}
	for _, label := range c.ports {
		hostPort := tc.Env["NOMAD_HOST_PORT_"+label]
		inside, err := strconv.ParseUint(tc.Env["NOMAD_PORT_"+label], 10, 16)
		if err != nil || inside == 0 {
			return nil, nil, invalid(`config key "ports": port label %q has no port inside the container (NOMAD_PORT_%s = %q)`, label, label, tc.Env["NOMAD_PORT_"+label])
		}
		b := network.PortBinding{HostPort: hostPort}
		if ip := tc.Env["NOMAD_HOST_IP_"+label]; ip != "" {
			if b.HostIP, err = netip.ParseAddr(ip); err != nil {
				return nil, nil, fmt.Errorf("docker: port label %q: host IP %q: %w", label, ip, err)
			}
		}
		for _, proto := range []network.IPProtocol{network.TCP, network.UDP} {
			p, _ := network.PortFrom(uint16(inside), proto)
			exposed[p] = struct{}{}
			bindings[p] = append(bindings[p], b)
		}
	}
	return exposed, bindings, nil
}

// checkEngineBridge refuses ports on an engine that has no bridge network
// (dockerd run with --bridge=none): it would start the container with its
// port bindings and publish none of them.
func (d *Driver) checkEngineBridge() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := d.client.NetworkInspect(ctx, "bridge", client.NetworkInspectOptions{})
	switch {
	case cerrdefs.IsNotFound(err):
		return invalid(`config key "ports": the docker engine has no "bridge" network (dockerd runs with --bridge=none), so it cannot publish ports; give the group network { mode = "bridge" } instead`)
	case err != nil:
		return fmt.Errorf("docker: inspect the engine's bridge network: %w", err)
	}
	return nil
}
