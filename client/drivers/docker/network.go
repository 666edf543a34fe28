package docker

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
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
// network, network_mode unset) shares the pause container's hostname,
// resolv.conf and hosts, so the engine refuses its own; and "ports" are
// forwarded by the alloc's network only, from the group's ports.
func checkJoinedNetwork(tc *drivers.TaskConfig, c taskConfig) error {
	joined := tc.Network != nil && c.networkMode == ""
	if joined {
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
				return invalid(`config key %q: cannot be set on a task that joins the group's network; set the group's network hostname and dns instead`, k.key)
			}
		}
	}
	if len(c.ports) == 0 {
		return nil
	}
	if !joined {
		return invalid(`config key "ports": publishing ports through docker's own networking is not supported by nomadq yet; give the group network { mode = "bridge" } and leave network_mode unset, and its ports are forwarded to the task`)
	}
	for _, label := range c.ports {
		if _, ok := tc.Env["NOMAD_HOST_PORT_"+label]; !ok {
			return invalid(`config key "ports": port label %q is not declared in the group's network`, label)
		}
	}
	return nil
}
