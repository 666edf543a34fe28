package network

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/containernetworking/cni/libcni"
	"github.com/containernetworking/cni/pkg/invoke"
	cnitypes "github.com/containernetworking/cni/pkg/types"
	types100 "github.com/containernetworking/cni/pkg/types/100"
	"github.com/containernetworking/cni/pkg/version"
	"github.com/hashicorp/go-hclog"

	"github.com/nomadq/nomadq/client/drivers"
)

// Network modes a group may ask for, beyond the host's network.
const (
	ModeBridge    = "bridge"
	ModeCNIPrefix = "cni/"
	// ModeNone is a namespace with its loopback interface only.
	ModeNone = "none"
	// IfName is the alloc's interface inside its namespace, Nomad's
	// name for it.
	IfName = "eth0"
)

// Config configures a Manager.
type Config struct {
	// CNIPath lists the directories searched for CNI plugin binaries.
	CNIPath []string
	// ConfigDir holds the operator's network lists for "cni/<name>".
	ConfigDir string
	Bridge    BridgeConfig
	// StateDir keeps one record per namespace made, so that a restarted
	// client finds them.
	StateDir string
	// NetnsDir is where namespaces are pinned; "" means DefaultNetnsDir.
	NetnsDir string
	// CacheDir is libcni's result cache; "" means libcni's default.
	CacheDir string
	Logger   hclog.Logger
	// Sandboxes are the drivers that hold a namespace in a container of
	// their own (docker), by driver name.
	Sandboxes map[string]drivers.NetworkCreator
}

// PortMapping forwards a host port to a port inside the namespace.
type PortMapping struct {
	Label         string
	HostPort      int
	ContainerPort int
}

// Spec is the network an alloc asks for.
type Spec struct {
	// Mode is "bridge", "none" or "cni/<name>".
	Mode    string
	Ports   []PortMapping
	CNIArgs map[string]string
	// Sandbox, when set, names the driver whose container holds the
	// namespace (its tasks cannot join one by path); SandboxSpec is what
	// the container is made with.
	Sandbox     string
	SandboxSpec *drivers.NetworkCreateSpec
}

// Status is the network an alloc got.
type Status struct {
	// NetnsPath is the alloc's network namespace, for tasks to join.
	NetnsPath     string
	InterfaceName string
	Address       string
}

// record is what the manager keeps on disk per namespace it made.
type record struct {
	AllocID   string
	Mode      string
	NetnsPath string
	Conflist  json.RawMessage
	Ports     []PortMapping     `json:",omitempty"`
	CNIArgs   map[string]string `json:",omitempty"`
	Address   string            `json:",omitempty"`
	// Ready is set once the plugins' ADD succeeded.
	Ready bool `json:",omitempty"`
	// Sandbox is the driver holding the namespace, if any.
	Sandbox string `json:",omitempty"`
}

// Manager sets up and tears down the allocs' network namespaces. It is
// safe for concurrent use; calls for one alloc are serialised.
type Manager struct {
	cfg    Config
	cni    *libcni.CNIConfig
	logger hclog.Logger

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// New returns a manager.
func New(cfg Config) *Manager {
	if cfg.NetnsDir == "" {
		cfg.NetnsDir = DefaultNetnsDir
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	return &Manager{
		cfg: cfg,
		// An exec of our own: libcni makes its default lazily, which
		// races when allocs are set up at the same time.
		cni: libcni.NewCNIConfigWithCacheDir(cfg.CNIPath, cfg.CacheDir, &invoke.DefaultExec{
			RawExec:       &invoke.RawExec{Stderr: os.Stderr},
			PluginDecoder: version.PluginDecoder{},
		}),
		logger: cfg.Logger.Named("network"),
		locks:  make(map[string]*sync.Mutex),
	}
}

func (m *Manager) lock(allocID string) func() {
	m.mu.Lock()
	l, ok := m.locks[allocID]
	if !ok {
		l = &sync.Mutex{}
		m.locks[allocID] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Conflist returns the network list of a mode: the generated bridge list,
// or the operator's list named <name> in ConfigDir for "cni/<name>".
func (m *Manager) Conflist(mode string) ([]byte, error) {
	switch {
	case mode == ModeBridge:
		return BridgeConflist(m.cfg.Bridge)
	case mode == ModeNone:
		return json.Marshal(conflist{CNIVersion: cniVersion, Name: "nomad-none", Plugins: []any{pluginType{Type: "loopback"}}})
	case strings.HasPrefix(mode, ModeCNIPrefix):
		name := strings.TrimPrefix(mode, ModeCNIPrefix)
		l, err := libcni.LoadConfList(m.cfg.ConfigDir, name)
		if err != nil {
			return nil, fmt.Errorf("network mode %q: no CNI network named %q in cni_config_dir %s: %w", mode, name, m.cfg.ConfigDir, err)
		}
		return l.Bytes, nil
	}
	return nil, fmt.Errorf("network mode %q is not allowed: the client sets up %q, %q and \"cni/<name>\" networks", mode, ModeBridge, ModeNone)
}

func (m *Manager) recordPath(allocID string) string {
	return filepath.Join(m.cfg.StateDir, allocID+".json")
}

func (m *Manager) readRecord(allocID string) (*record, error) {
	b, err := os.ReadFile(m.recordPath(allocID))
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("network record of alloc %s: %w", allocID, err)
	}
	return &r, nil
}

func (m *Manager) writeRecord(r *record) error {
	if err := os.MkdirAll(m.cfg.StateDir, 0o700); err != nil {
		return err
	}
	b, _ := json.Marshal(r)
	tmp := m.recordPath(r.AllocID) + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, m.recordPath(r.AllocID))
}

// validAllocID keeps an alloc ID usable as a file and namespace name.
func validAllocID(id string) error {
	if id == "" || strings.ContainsAny(id, "/.\x00") {
		return fmt.Errorf("alloc ID %q cannot name a network namespace", id)
	}
	return nil
}

// Setup gives an alloc its namespace and runs the network's plugins in
// it. On error nothing of it is left behind.
func (m *Manager) Setup(ctx context.Context, allocID string, spec Spec) (*Status, error) {
	if err := validAllocID(allocID); err != nil {
		return nil, err
	}
	conf, err := m.Conflist(spec.Mode)
	if err != nil {
		return nil, err
	}
	list, err := libcni.ConfListFromBytes(conf)
	if err != nil {
		return nil, fmt.Errorf("network mode %q: %w", spec.Mode, err)
	}
	unlock := m.lock(allocID)
	defer unlock()
	// A namespace of an earlier attempt (a client that died mid-setup)
	// goes first: its addresses and rules must not stay behind.
	if _, err := os.Stat(m.recordPath(allocID)); err == nil {
		m.teardown(ctx, allocID)
	}
	r := &record{
		AllocID:   allocID,
		Mode:      spec.Mode,
		NetnsPath: filepath.Join(m.cfg.NetnsDir, allocID),
		Conflist:  conf,
		Ports:     spec.Ports,
		CNIArgs:   spec.CNIArgs,
		Sandbox:   spec.Sandbox,
	}
	// The record is written before anything is made, so that whatever a
	// crash leaves is found and removed later.
	if err := m.writeRecord(r); err != nil {
		return nil, fmt.Errorf("network record: %w", err)
	}
	fail := func(err error) (*Status, error) {
		m.teardown(ctx, allocID)
		return nil, err
	}
	var src string
	if spec.Sandbox != "" {
		creator := m.cfg.Sandboxes[spec.Sandbox]
		if creator == nil {
			return fail(fmt.Errorf("network mode %q: the %s driver cannot hold the alloc's network on this client", spec.Mode, spec.Sandbox))
		}
		sb := spec.SandboxSpec
		if sb == nil {
			sb = &drivers.NetworkCreateSpec{}
		}
		if src, err = creator.CreateNetwork(allocID, sb); err != nil {
			return fail(fmt.Errorf("network mode %q: %w", spec.Mode, err))
		}
	}
	if _, err := pinNetns(m.cfg.NetnsDir, allocID, src); err != nil {
		return fail(err)
	}
	res, err := m.cni.AddNetworkList(ctx, list, runtimeConf(r))
	if err != nil {
		return fail(fmt.Errorf("network mode %q: CNI setup: %w", spec.Mode, err))
	}
	if spec.Mode == ModeNone {
		// Loopback only: no interface or address to report.
		r.Ready = true
	} else {
		if r.Address, err = allocAddress(res, r.NetnsPath); err != nil {
			return fail(fmt.Errorf("network mode %q: %w", spec.Mode, err))
		}
		r.Ready = true
	}
	if err := m.writeRecord(r); err != nil {
		return fail(fmt.Errorf("network record: %w", err))
	}
	m.logger.Debug("alloc network set up", "alloc_id", allocID, "mode", spec.Mode, "address", r.Address)
	return r.status(), nil
}

func (r *record) status() *Status {
	st := &Status{NetnsPath: r.NetnsPath, Address: r.Address}
	if r.Mode != ModeNone {
		st.InterfaceName = IfName
	}
	return st
}

// Restore returns the network an earlier client set up for an alloc, if
// its namespace is still there.
func (m *Manager) Restore(allocID string) (*Status, bool) {
	if validAllocID(allocID) != nil {
		return nil, false
	}
	unlock := m.lock(allocID)
	defer unlock()
	r, err := m.readRecord(allocID)
	if err != nil || !r.Ready || !isNetns(r.NetnsPath) {
		return nil, false
	}
	return r.status(), true
}

// Teardown runs the network's plugins' DEL and removes the alloc's
// namespace. It is idempotent: an alloc without a network is no error.
func (m *Manager) Teardown(ctx context.Context, allocID string) error {
	if validAllocID(allocID) != nil {
		return nil
	}
	unlock := m.lock(allocID)
	defer unlock()
	return m.teardown(ctx, allocID)
}

func (m *Manager) teardown(ctx context.Context, allocID string) error {
	r, err := m.readRecord(allocID)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		// A record that cannot be read can only be forgotten; the
		// namespace at the usual place goes all the same.
		_ = removeNetns(filepath.Join(m.cfg.NetnsDir, allocID))
		_ = os.Remove(m.recordPath(allocID))
		return err
	}
	var errs []error
	if list, err := libcni.ConfListFromBytes(r.Conflist); err != nil {
		errs = append(errs, err)
	} else {
		rt := runtimeConf(r)
		if !isNetns(r.NetnsPath) {
			// DEL must still run, to free the address and the rules;
			// plugins accept a namespace that is gone.
			rt.NetNS = ""
		}
		if err := m.cni.DelNetworkList(ctx, list, rt); err != nil {
			errs = append(errs, fmt.Errorf("CNI teardown: %w", err))
		}
	}
	if err := removeNetns(r.NetnsPath); err != nil {
		errs = append(errs, err)
	}
	if r.Sandbox != "" {
		if creator := m.cfg.Sandboxes[r.Sandbox]; creator != nil {
			if err := creator.DestroyNetwork(allocID); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := os.Remove(m.recordPath(allocID)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		m.logger.Warn("alloc network teardown", "alloc_id", allocID, "error", err)
		return err
	}
	m.logger.Debug("alloc network torn down", "alloc_id", allocID)
	return nil
}

// Recorded lists the allocs that have a namespace of this manager's.
func (m *Manager) Recorded() []string {
	entries, err := os.ReadDir(m.cfg.StateDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok && validAllocID(id) == nil {
			out = append(out, id)
		}
	}
	return out
}

// CleanLeftovers tears down the namespace of every recorded alloc that
// keep does not claim: allocs an earlier client ran that are gone now.
func (m *Manager) CleanLeftovers(ctx context.Context, keep func(allocID string) bool) {
	for _, id := range m.Recorded() {
		if !keep(id) {
			m.logger.Info("removing the network of an alloc that is gone", "alloc_id", id)
			_ = m.Teardown(ctx, id)
		}
	}
}

// runtimeConf is the CNI runtime configuration of an alloc's network: the
// alloc ID as container ID, its namespace, and the port mappings as the
// portmap plugin reads them (tcp and udp, as Nomad maps them).
func runtimeConf(r *record) *libcni.RuntimeConf {
	rt := &libcni.RuntimeConf{
		ContainerID: r.AllocID,
		NetNS:       r.NetnsPath,
		IfName:      IfName,
		Args:        [][2]string{{"IgnoreUnknown", "true"}},
	}
	for k, v := range r.CNIArgs {
		rt.Args = append(rt.Args, [2]string{k, v})
	}
	if len(r.Ports) > 0 {
		var pm []map[string]any
		for _, p := range r.Ports {
			for _, proto := range []string{"tcp", "udp"} {
				pm = append(pm, map[string]any{"hostPort": p.HostPort, "containerPort": p.ContainerPort, "protocol": proto})
			}
		}
		rt.CapabilityArgs = map[string]any{"portMappings": pm}
	}
	return rt
}

// allocAddress is the first IPv4 address the plugins gave the interface
// in the namespace (else the first address at all).
func allocAddress(res cnitypes.Result, netns string) (string, error) {
	if res == nil {
		return "", errors.New("CNI plugins returned no result")
	}
	cur, err := types100.NewResultFromResult(res)
	if err != nil {
		return "", fmt.Errorf("read CNI result: %w", err)
	}
	var fallback string
	for _, ip := range cur.IPs {
		if ip.Interface != nil && *ip.Interface >= 0 && *ip.Interface < len(cur.Interfaces) {
			if sb := cur.Interfaces[*ip.Interface].Sandbox; sb != "" && sb != netns {
				continue
			}
		}
		if ip.Address.IP.To4() != nil {
			return ip.Address.IP.String(), nil
		}
		if fallback == "" {
			fallback = ip.Address.IP.String()
		}
	}
	if fallback == "" {
		return "", errors.New("CNI plugins gave the alloc no address")
	}
	return fallback, nil
}

// Creators picks the drivers that hold namespaces in containers of their
// own, for Config.Sandboxes.
func Creators(ds map[string]drivers.Driver) map[string]drivers.NetworkCreator {
	out := map[string]drivers.NetworkCreator{}
	for name, d := range ds {
		if nc, ok := d.(drivers.NetworkCreator); ok {
			out[name] = nc
		}
	}
	return out
}
