// Package docker is the docker task driver: it runs a task as a container
// of a Docker Engine through the engine's API (github.com/moby/moby/client,
// the API version negotiated, so Debian's 20.10 engine at API 1.41 works),
// with the task config keys of Nomad's docker driver. Keys not built yet
// are refused by name at validation, never dropped.
//
// The task's alloc, local and secrets dirs are bind-mounted at /alloc,
// /local and /secrets; its stdout and stderr are followed from the engine
// into the alloc's log files, where the other drivers write them; the
// container is found again after a client restart by the ID stored in
// the task handle.
package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/hashicorp/go-hclog"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/nomadq/nomadq/client/drivers"
)

// Name is the driver's name in a task's "driver" field.
const Name = "docker"

// Nomad's container labels.
const (
	LabelAllocID       = "com.hashicorp.nomad.alloc_id"
	LabelJobName       = "com.hashicorp.nomad.job_name"
	LabelJobID         = "com.hashicorp.nomad.job_id"
	LabelTaskGroupName = "com.hashicorp.nomad.task_group_name"
	LabelTaskName      = "com.hashicorp.nomad.task_name"
	LabelNamespace     = "com.hashicorp.nomad.namespace"
	LabelNodeName      = "com.hashicorp.nomad.node_name"
	LabelNodeID        = "com.hashicorp.nomad.node_id"
)

// defaultPath is a task's PATH unless its env sets one.
const defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"

// Options configures the driver.
type Options struct {
	// Config is the plugin config (ParsePluginConfig, or
	// DefaultPluginConfig when the agent has no plugin "docker" block).
	Config PluginConfig
	// NodeID and NodeName fill the node_id and node_name labels.
	NodeID   string
	NodeName string
	// TotalCompute returns the node's CPU in MHz, which cpu_hard_limit
	// turns a task's cpu into a share of; nil or 0 means unknown.
	TotalCompute func() int64
	Logger       hclog.Logger
}

// Driver is the docker driver.
type Driver struct {
	cfg    PluginConfig
	opts   Options
	logger hclog.Logger
	// client is nil when the endpoint could not be parsed (clientErr).
	client    *client.Client
	clientErr error

	// ctx ends with Shutdown: the followers of output and exits stop.
	ctx    context.Context
	cancel context.CancelFunc

	pulls pullCoordinator
	// images is nil when the plugin's gc.image is false.
	images *imageGC

	mu       sync.Mutex
	tasks    map[string]*task
	detected bool
	lastCPU  map[string]cpuSample
}

type cpuSample struct {
	ticks float64
	at    time.Time
}

// handleState is what the task handle stores to find the container again.
type handleState struct {
	ContainerID string
	Image       string
}

// New returns a docker driver for opts.Config's endpoint. It never fails:
// an engine that cannot be reached makes the driver unhealthy.
func New(opts Options) *Driver {
	if opts.Logger == nil {
		opts.Logger = hclog.NewNullLogger()
	}
	d := &Driver{
		cfg:     opts.Config,
		opts:    opts,
		logger:  opts.Logger.Named(Name),
		tasks:   make(map[string]*task),
		lastCPU: make(map[string]cpuSample),
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	d.client, d.clientErr = client.New(clientOptions(opts.Config)...)
	if opts.Config.GCImage {
		d.images = newImageGC(opts.Config.GCImageDelay, d.removeImage)
	}
	if d.clientErr == nil && opts.Config.Dangling.Enabled {
		go d.reconcileDangling()
	}
	return d
}

// clientOptions reach the engine as the plugin config says: its endpoint
// and tls block; without an endpoint, DOCKER_HOST and, as the docker CLI,
// DOCKER_CERT_PATH and DOCKER_TLS_VERIFY.
func clientOptions(c PluginConfig) []client.Opt {
	opts := []client.Opt{client.WithHost(c.endpoint()), client.WithAPIVersionNegotiation()}
	switch {
	case c.TLSCert != "" || c.TLSCA != "":
		opts = append(opts, client.WithTLSClientConfig(c.TLSCA, c.TLSCert, c.TLSKey))
	case c.fromEnv:
		opts = append(opts, client.WithTLSClientConfigFromEnv())
	}
	return opts
}

// Name returns "docker".
func (d *Driver) Name() string { return Name }

// MountsVolumes reports that host volumes are bind-mounted into the
// container.
func (d *Driver) MountsVolumes() bool { return true }

// Fingerprint asks the engine for its version: the driver is detected and
// healthy only when the engine answers; once detected, an engine that
// stops answering makes it unhealthy, as Nomad's does.
func (d *Driver) Fingerprint() *drivers.Fingerprint {
	if d.clientErr != nil {
		return &drivers.Fingerprint{HealthDescription: "Failed to initialize docker client: " + d.clientErr.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, err := d.client.ServerVersion(ctx, client.ServerVersionOptions{})
	if err != nil {
		d.mu.Lock()
		detected := d.detected
		d.mu.Unlock()
		d.logger.Debug("could not connect to docker daemon", "endpoint", d.cfg.endpoint(), "error", err)
		return &drivers.Fingerprint{Detected: detected, HealthDescription: "Failed to connect to docker daemon"}
	}
	d.mu.Lock()
	d.detected = true
	d.mu.Unlock()
	attrs := map[string]string{
		"driver.docker":         "true",
		"driver.docker.version": v.Version,
	}
	if d.cfg.AllowPrivileged {
		attrs["driver.docker.privileged.enabled"] = "true"
	}
	if d.cfg.VolumesEnabled {
		attrs["driver.docker.volumes.enabled"] = "true"
	}
	if d.cfg.PidsLimit > 0 {
		attrs["driver.docker.pids.limit"] = strconv.FormatInt(d.cfg.PidsLimit, 10)
	}
	if nets, err := d.client.NetworkList(ctx, client.NetworkListOptions{}); err == nil {
		for _, n := range nets.Items {
			if n.Name == "bridge" && len(n.IPAM.Config) > 0 && n.IPAM.Config[0].Gateway.IsValid() && !n.IPAM.Config[0].Gateway.IsUnspecified() {
				attrs["driver.docker.bridge_ip"] = n.IPAM.Config[0].Gateway.String()
			}
		}
	}
	if info, err := d.client.Info(ctx, client.InfoOptions{}); err == nil {
		var runtimes []string
		for name := range info.Info.Runtimes {
			runtimes = append(runtimes, name)
		}
		sort.Strings(runtimes)
		attrs["driver.docker.runtimes"] = strings.Join(runtimes, ",")
		attrs["driver.docker.os_type"] = info.Info.OSType
	}
	return &drivers.Fingerprint{Detected: true, Healthy: true, HealthDescription: "Healthy", Attributes: attrs}
}

// ValidateConfig checks the task's config keys and values against the
// plugin config.
func (d *Driver) ValidateConfig(cfg map[string]any) error {
	_, err := parseTask(cfg, d.cfg)
	return err
}

// StartTask pulls the image when needed, creates the container labelled
// as Nomad labels it, starts it and follows its output into the task's
// log files.
func (d *Driver) StartTask(tc *drivers.TaskConfig) (*drivers.TaskHandle, error) {
	if d.clientErr != nil {
		return nil, fmt.Errorf("docker: %w", d.clientErr)
	}
	c, err := parseTask(tc.Config, d.cfg)
	if err != nil {
		return nil, err
	}
	if err := checkJoinedNetwork(tc, c); err != nil {
		return nil, err
	}
	d.mu.Lock()
	_, exists := d.tasks[tc.ID]
	d.mu.Unlock()
	if exists {
		return nil, fmt.Errorf("docker: task %q already started", tc.ID)
	}
	if err := d.ensureImage(c, tc); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	img, err := d.client.ImageInspect(ctx, c.image)
	if err != nil {
		return nil, fmt.Errorf("docker: inspect image %q: %w", c.image, err)
	}
	imageID := img.ID
	d.acquireImage(imageID)
	id, err := d.createContainer(tc, c)
	if err != nil {
		d.releaseImage(imageID)
		return nil, err
	}
	if _, err := d.client.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		d.removeContainer(id)
		d.releaseImage(imageID)
		return nil, fmt.Errorf("docker: start container: %w", err)
	}
	state, _ := json.Marshal(handleState{ContainerID: id, Image: c.image})
	d.track(tc, id, c.tty, imageID, time.Time{})
	d.logger.Debug("task started", "task_id", tc.ID, "container_id", id)
	return &drivers.TaskHandle{Driver: Name, Config: tc, State: state}, nil
}

// createContainer creates the task's container, named "<task>-<alloc>" as
// Nomad names it; a container of that name left by an earlier run of the
// task is removed first.
func (d *Driver) createContainer(tc *drivers.TaskConfig, c taskConfig) (string, error) {
	name := strings.ReplaceAll(tc.Name, "/", "_") + "-" + tc.AllocID
	cfg, host, err := d.containerConfig(tc, c)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for attempt := 1; ; attempt++ {
		res, err := d.client.ContainerCreate(ctx, client.ContainerCreateOptions{Config: cfg, HostConfig: host, Name: name})
		if err == nil {
			return res.ID, nil
		}
		if !cerrdefs.IsConflict(err) || attempt >= c.extra.existsAttempts {
			return "", fmt.Errorf("docker: create container: %w", err)
		}
		if _, rerr := d.client.ContainerRemove(ctx, name, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); rerr != nil && !cerrdefs.IsNotFound(rerr) {
			return "", fmt.Errorf("docker: remove the earlier container %q: %w", name, rerr)
		}
	}
}

// containerConfig turns the task into the engine's container config.
func (d *Driver) containerConfig(tc *drivers.TaskConfig, c taskConfig) (*container.Config, *container.HostConfig, error) {
	cfg := &container.Config{
		Image:      c.image,
		Env:        drivers.IsolatedEnv(tc.Env, nil),
		WorkingDir: c.workDir,
		Hostname:   c.hostname,
		User:       tc.User,
		Labels:     d.labels(tc, c),
		Tty:        c.tty,
		OpenStdin:  c.interactive,
	}
	if c.command != "" {
		cfg.Cmd = append([]string{c.command}, c.args...)
	} else if len(c.args) > 0 {
		cfg.Cmd = c.args
	}
	if len(c.entrypoint) > 0 {
		cfg.Entrypoint = c.entrypoint
	}
	allocDir := filepath.Dir(tc.LogDir)
	// label adds the plugin's SELinux label to a bind's options.
	label := func(bind, mode string) string {
		if l := d.cfg.SELinuxLabel; l != "" {
			if mode != "" {
				mode += ","
			}
			mode += l
		}
		if mode != "" {
			bind += ":" + mode
		}
		return bind
	}
	binds := []string{
		label(allocDir+":/alloc", ""),
		label(filepath.Join(tc.TaskDir, "local")+":/local", ""),
		label(filepath.Join(tc.TaskDir, "secrets")+":/secrets", ""),
		// The task reads its logs, as in Nomad, but cannot rewrite them.
		label(tc.LogDir+":/alloc/logs", "ro"),
	}
	allocRoot := filepath.Dir(allocDir)
	for _, v := range c.volumes {
		src := filepath.Clean(v.src)
		if !v.named {
			var err error
			if src, err = hostSource(v.src, tc.TaskDir, allocRoot, d.cfg.VolumesEnabled); err != nil {
				return nil, nil, err
			}
		}
		binds = append(binds, label(src+":"+v.dst, v.mode))
	}
	for _, m := range tc.Mounts {
		b := m.HostPath + ":" + m.TaskPath
		if m.ReadOnly {
			b += ":ro"
		}
		binds = append(binds, b)
	}
	capAdd, capDrop := c.effectiveCaps(d.cfg)
	host := &container.HostConfig{
		Binds:          binds,
		NetworkMode:    container.NetworkMode(c.networkMode),
		ReadonlyRootfs: c.readonlyRootfs,
		Privileged:     c.privileged,
		CapAdd:         capAdd,
		CapDrop:        capDrop,
		// Logs are followed from the engine into the alloc's files; the
		// engine keeps its own copy, bounded by the logging config.
		LogConfig:    container.LogConfig{Type: d.cfg.LogType, Config: d.cfg.LogConfig},
		DNS:          c.dnsServers,
		DNSSearch:    c.dnsSearch,
		DNSOptions:   c.dnsOptions,
		ExtraHosts:   c.extraHosts,
		ShmSize:      c.shmSize,
		Sysctls:      c.sysctl,
		SecurityOpt:  c.securityOpt,
		IpcMode:      container.IpcMode(c.ipcMode),
		PidMode:      container.PidMode(c.pidMode),
		UTSMode:      container.UTSMode(c.utsMode),
		GroupAdd:     c.groupAdd,
		VolumeDriver: c.volumeDriver,
		OomScoreAdj:  c.oomScoreAdj,
	}
	for _, ms := range c.mounts {
		m := ms.m
		if m.Type == "bind" {
			src, err := hostSource(m.Source, tc.TaskDir, allocRoot, d.cfg.VolumesEnabled)
			if err != nil {
				return nil, nil, err
			}
			m.Source = src
		}
		host.Mounts = append(host.Mounts, m)
	}
	if c.logType != "" {
		host.LogConfig = container.LogConfig{Type: c.logType, Config: c.logConfig}
	}
	host.Devices = c.extra.devices
	host.Runtime = c.extra.runtime
	host.UsernsMode = container.UsernsMode(c.extra.usernsMode)
	host.CgroupnsMode = container.CgroupnsMode(c.extra.cgroupnsMode)
	if c.extra.disableHealthchecks {
		cfg.Healthcheck = &container.HealthConfig{Test: []string{"NONE"}}
	}
	host.Ulimits = c.ulimits
	host.CpusetCpus = c.cpusetCPUs
	if c.pidsLimit > 0 {
		host.PidsLimit = &c.pidsLimit
	}
	if c.init {
		host.Init = &c.init
	}
	if c.networkMode == "" {
		host.NetworkMode = "default"
		if tc.Network != nil {
			mode, err := d.joinedNetworkMode(tc.AllocID)
			if err != nil {
				return nil, nil, err
			}
			host.NetworkMode = mode
		}
	}
	if len(c.ports) > 0 && !host.NetworkMode.IsContainer() && !host.NetworkMode.IsHost() {
		if err := d.checkEngineBridge(); err != nil {
			return nil, nil, err
		}
		exposed, bindings, err := publishedPorts(tc, c)
		if err != nil {
			return nil, nil, err
		}
		cfg.ExposedPorts, host.PortBindings = exposed, bindings
	}
	if r := tc.Resources; r != nil {
		host.Memory, host.MemoryReservation = memoryLimits(c.memoryHardLimit, r.MemoryMB, r.MemoryMaxMB)
		// No swap beyond the limit, as Nomad: a task over its memory is
		// OOM killed rather than swapped.
		host.MemorySwap = host.Memory
		if r.CPUShares > 0 {
			host.CPUShares = min(max(r.CPUShares, 2), 262144)
		}
	}
	if c.cpuHardLimit {
		quota, err := d.cpuQuota(tc, c.cpuCFSPeriod)
		if err != nil {
			return nil, nil, err
		}
		host.CPUPeriod, host.CPUQuota = c.cpuCFSPeriod, quota
	}
	return cfg, host, nil
}

// cpuQuota is Nomad's hard CPU limit: the task's share of the node's
// compute, of every core, per period.
func (d *Driver) cpuQuota(tc *drivers.TaskConfig, period int64) (int64, error) {
	var total int64
	if d.opts.TotalCompute != nil {
		total = d.opts.TotalCompute()
	}
	if total <= 0 || tc.Resources == nil || tc.Resources.CPUShares <= 0 {
		return 0, &drivers.ValidationError{Err: errors.New("docker: cpu_hard_limit needs the task's cpu and the node's total compute")}
	}
	share := float64(tc.Resources.CPUShares) / float64(total)
	return int64(share*float64(period)) * int64(runtime.NumCPU()), nil
}

// memoryLimits is Nomad's rule: memory is the hard limit unless
// memory_hard_limit or memory_max raise it (the higher wins), in which
// case memory becomes the reservation. memory_max = -1 means no limit.
// It returns (hard limit, reservation) in bytes.
func memoryLimits(hardLimitMB, memoryMB, memoryMaxMB int64) (int64, int64) {
	const mb = 1 << 20
	if memoryMaxMB == -1 {
		return 0, memoryMB * mb
	}
	high := max(hardLimitMB, memoryMaxMB)
	if high == 0 {
		return memoryMB * mb, 0
	}
	return high * mb, memoryMB * mb
}

// labels are the task's labels plus Nomad's: the alloc ID always, the
// others as the plugin's extra_labels globs select them.
func (d *Driver) labels(tc *drivers.TaskConfig, c taskConfig) map[string]string {
	l := make(map[string]string, len(c.labels)+8)
	for k, v := range c.labels {
		l[k] = v
	}
	l[LabelAllocID] = tc.AllocID
	optional := []struct{ name, label, value string }{
		{"job_name", LabelJobName, tc.JobName},
		{"job_id", LabelJobID, tc.Env["NOMAD_JOB_ID"]},
		{"task_group_name", LabelTaskGroupName, tc.TaskGroup},
		{"task_name", LabelTaskName, tc.Name},
		{"namespace", LabelNamespace, tc.Env["NOMAD_NAMESPACE"]},
		{"node_name", LabelNodeName, d.opts.NodeName},
		{"node_id", LabelNodeID, d.opts.NodeID},
	}
	for _, g := range d.cfg.ExtraLabels {
		for _, o := range optional {
			if ok, _ := path.Match(g, o.name); ok {
				l[o.label] = o.value
			}
		}
	}
	return l
}

// RecoverTask re-attaches to the container the handle names: its output
// is followed again from where the log files end, and its exit (even one
// that happened while no client ran) is reported with its real code.
func (d *Driver) RecoverTask(h *drivers.TaskHandle) error {
	if h == nil || h.Config == nil {
		return errors.New("docker: recover: no task handle")
	}
	if d.clientErr != nil {
		return fmt.Errorf("docker: %w", d.clientErr)
	}
	var st handleState
	if err := json.Unmarshal(h.State, &st); err != nil || st.ContainerID == "" {
		return fmt.Errorf("docker: recover task %q: bad handle state: %v", h.Config.ID, err)
	}
	d.mu.Lock()
	_, exists := d.tasks[h.Config.ID]
	d.mu.Unlock()
	if exists {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	insp, err := d.client.ContainerInspect(ctx, st.ContainerID, client.ContainerInspectOptions{})
	if err != nil {
		return fmt.Errorf("docker: recover task %q: container %s: %w", h.Config.ID, shortID(st.ContainerID), err)
	}
	tty := insp.Container.Config != nil && insp.Container.Config.Tty
	d.acquireImage(insp.Container.Image)
	d.track(h.Config, st.ContainerID, tty, insp.Container.Image, logsSince(h.Config))
	return nil
}

// WaitTask returns a channel that yields the task's exit once.
func (d *Driver) WaitTask(ctx context.Context, taskID string) (<-chan *drivers.ExitResult, error) {
	t, err := d.get(taskID)
	if err != nil {
		return nil, err
	}
	return drivers.WaitExit(ctx, t.done, func() *drivers.ExitResult { return t.result }), nil
}

// StopTask sends signal ("" means SIGINT) to the container's main process
// and, if it is still running after timeout, kills it.
func (d *Driver) StopTask(taskID string, timeout time.Duration, signal string) error {
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	if signal == "" {
		signal = "SIGINT"
	}
	select {
	case <-t.done:
		return nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := d.client.ContainerKill(ctx, t.containerID, client.ContainerKillOptions{Signal: signal}); err != nil && !notRunning(err) {
		return fmt.Errorf("docker: signal container %s with %s: %w", shortID(t.containerID), signal, err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-t.done:
		return nil
	case <-timer.C:
	}
	if _, err := d.client.ContainerKill(ctx, t.containerID, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil && !notRunning(err) {
		return fmt.Errorf("docker: kill container %s: %w", shortID(t.containerID), err)
	}
	return nil
}

// SignalTask sends signal to the container's main process.
func (d *Driver) SignalTask(taskID, signal string) error {
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := d.client.ContainerKill(ctx, t.containerID, client.ContainerKillOptions{Signal: signal}); err != nil {
		return fmt.Errorf("docker: signal container %s with %s: %w", shortID(t.containerID), signal, err)
	}
	return nil
}

// DestroyTask kills what is left of the container, stops following its
// output and removes it unless the plugin's gc.container is false.
func (d *Driver) DestroyTask(taskID string) error {
	t, err := d.get(taskID)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	select {
	case <-t.done:
	default:
		if _, err := d.client.ContainerKill(ctx, t.containerID, client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil && !notRunning(err) {
			return fmt.Errorf("docker: kill container %s: %w", shortID(t.containerID), err)
		}
	}
	t.stop()
	if d.cfg.GCContainer {
		if _, err := d.client.ContainerRemove(ctx, t.containerID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) {
			return fmt.Errorf("docker: remove container %s: %w", shortID(t.containerID), err)
		}
	}
	d.mu.Lock()
	_, tracked := d.tasks[taskID]
	delete(d.tasks, taskID)
	delete(d.lastCPU, taskID)
	d.mu.Unlock()
	if tracked {
		d.releaseImage(t.imageID)
	}
	return nil
}

func (d *Driver) acquireImage(id string) {
	if d.images != nil {
		d.images.acquire(id)
	}
}

func (d *Driver) releaseImage(id string) {
	if d.images != nil {
		d.images.release(id)
	}
}

// removeImage removes an image no task has used for gc.image_delay; by
// force, as Nomad, since an image may have several tags.
func (d *Driver) removeImage(id string) {
	ctx, cancel := context.WithTimeout(d.ctx, time.Minute)
	defer cancel()
	if _, err := d.client.ImageRemove(ctx, id, client.ImageRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
		d.logger.Warn("cannot remove unused image", "image_id", id, "error", err)
		return
	}
	d.logger.Debug("removed unused image", "image_id", id)
}

// Shutdown stops following the tasks' output and exits, leaving the
// containers running, as a client that exits does: a later client
// re-attaches to them.
func (d *Driver) Shutdown() {
	d.cancel()
	if d.images != nil {
		d.images.stop()
	}
	d.mu.Lock()
	tasks := make([]*task, 0, len(d.tasks))
	for _, t := range d.tasks {
		tasks = append(tasks, t)
	}
	d.mu.Unlock()
	for _, t := range tasks {
		t.stop()
	}
}

// removeContainer removes a container that never became a task.
func (d *Driver) removeContainer(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = d.client.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
}

func (d *Driver) get(taskID string) (*task, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tasks[taskID]
	if !ok {
		return nil, fmt.Errorf("docker: %w: %s", drivers.ErrTaskNotFound, taskID)
	}
	return t, nil
}

// notRunning reports the engine's answer to a signal for a container
// that is not running (any more): nothing is left to signal.
func notRunning(err error) bool {
	return cerrdefs.IsConflict(err) || cerrdefs.IsNotFound(err) || strings.Contains(err.Error(), "is not running")
}

func shortID(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
