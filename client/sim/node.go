package sim

import (
	"maps"
	"runtime"
	"strconv"
	"time"

	"github.com/nomadq/nomadq/client"
	"github.com/nomadq/nomadq/client/drivers/mock"
	"github.com/nomadq/nomadq/structs"
)

// SimulatedAttr is the node attribute every simulated node carries, so
// jobs can aim at (or away from) simulated nodes with a constraint.
const SimulatedAttr = "nomadq.simulated"

// nodeTemplate is what every simulated node registers with, but its ID,
// secret and name. Nodes only advertise mock_driver: a task of any other
// driver is infeasible on them ("missing drivers"), as on a real node
// without that driver.
func nodeTemplate(cfg *Config) *structs.Node {
	cores := max(cfg.CPU/1000, 1)
	coreIDs := make([]uint16, cores)
	for i := range coreIDs {
		coreIDs[i] = uint16(i)
	}
	now := time.Now()
	n := &structs.Node{
		Datacenter: cfg.Datacenter,
		NodePool:   cfg.NodePool,
		NodeClass:  cfg.NodeClass,
		Meta:       maps.Clone(cfg.Meta),
		Attributes: map[string]string{
			"kernel.name":          runtime.GOOS,
			"os.name":              runtime.GOOS,
			"cpu.arch":             runtime.GOARCH,
			"cpu.numcores":         strconv.FormatInt(cores, 10),
			"cpu.totalcompute":     strconv.FormatInt(cfg.CPU, 10),
			"memory.totalbytes":    strconv.FormatInt(cfg.MemoryMB<<20, 10),
			"nomad.version":        cfg.Version,
			"driver." + mock.Name:  "1",
			SimulatedAttr:          "true",
			"unique.storage.bytes": strconv.FormatInt(cfg.DiskMB<<20, 10),
		},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: cfg.CPU, TotalCpuCores: uint16(cores), ReservableCpuCores: coreIDs},
			Memory: structs.NodeMemoryResources{MemoryMB: cfg.MemoryMB},
			Disk:   structs.NodeDiskResources{DiskMB: cfg.DiskMB},
			Networks: []*structs.NetworkResource{{
				Mode: structs.NetworkModeHost, Device: "sim0", IP: "127.0.0.1", CIDR: "127.0.0.1/32",
			}},
			MinDynamicPort: 20000,
			MaxDynamicPort: 32000,
		},
		ReservedResources: &structs.NodeReservedResources{},
		Drivers: map[string]*structs.DriverInfo{
			mock.Name: {Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: now},
		},
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	if n.Meta == nil {
		n.Meta = map[string]string{}
	}
	n.ComputedClass = client.ComputedClass(n)
	return n
}

// nodeFor is the template as node n: a shallow copy sharing its maps,
// which the RPC encodes without changing.
func (s *Sim) nodeFor(n *node) *structs.Node {
	c := *s.template
	c.ID, c.SecretID, c.Name = n.id, n.secret, n.name
	return &c
}

// register registers n (a worker runs it), then arms its heartbeat; on
// failure it tries again after the retry interval.
func (s *Sim) register(n *node) {
	req := &structs.NodeRegisterRequest{Node: s.nodeFor(n), WriteRequest: structs.WriteRequest{Region: s.cfg.Region, AuthToken: s.registerAuth(n)}}
	var resp structs.NodeUpdateResponse
	if err := s.call("Node.Register", req, &resp); err != nil {
		if s.ctx.Err() != nil {
			return
		}
		s.logger.Warn("node registration failed", "node", n.name, "error", err)
		s.sched.after(s.cfg.RetryInterval, func() { s.submit(func() { s.register(n) }) })
		return
	}
	s.learn(&resp)
	s.sched.after(ttlOrDefault(resp.HeartbeatTTL), func() { s.submit(func() { s.heartbeat(n) }) })
	if n.batch.registered.Add(1) == int64(len(n.batch.nodes)) {
		close(n.batch.ready)
	}
	if s.registered.Add(1) == int64(len(s.nodes)) {
		s.readyOnce.Do(func() { close(s.ready) })
		s.logger.Info("all simulated nodes registered", "nodes", len(s.nodes))
	}
}

// reregister registers a node the servers forgot; it is counted once.
func (s *Sim) reregister(n *node) {
	req := &structs.NodeRegisterRequest{Node: s.nodeFor(n), WriteRequest: structs.WriteRequest{Region: s.cfg.Region, AuthToken: s.registerAuth(n)}}
	var resp structs.NodeUpdateResponse
	if err := s.call("Node.Register", req, &resp); err != nil {
		if s.ctx.Err() == nil {
			s.sched.after(s.cfg.RetryInterval, func() { s.submit(func() { s.reregister(n) }) })
		}
		return
	}
	s.learn(&resp)
	s.sched.after(ttlOrDefault(resp.HeartbeatTTL), func() { s.submit(func() { s.heartbeat(n) }) })
}

// heartbeat tells the servers n is alive and arms the next one at the
// TTL they answer (which they stagger, spreading heartbeats out).
func (s *Sim) heartbeat(n *node) {
	req := &structs.NodeUpdateStatusRequest{NodeID: n.id, Status: structs.NodeStatusReady, WriteRequest: structs.WriteRequest{Region: s.cfg.Region, AuthToken: n.secret}}
	var resp structs.NodeUpdateResponse
	err := s.call("Node.UpdateStatus", req, &resp)
	switch {
	case s.ctx.Err() != nil:
		return
	case err == nil:
		s.learn(&resp)
		s.sched.after(ttlOrDefault(resp.HeartbeatTTL), func() { s.submit(func() { s.heartbeat(n) }) })
	case client.IsUnknownNode(err):
		s.logger.Warn("servers do not know this node; registering again", "node", n.name)
		s.submit(func() { s.reregister(n) })
	default:
		s.logger.Warn("heartbeat failed", "node", n.name, "error", err)
		s.sched.after(s.cfg.RetryInterval, func() { s.submit(func() { s.heartbeat(n) }) })
	}
}

func (s *Sim) learn(resp *structs.NodeUpdateResponse) {
	if s.cfg.Learn == nil || len(resp.Servers) == 0 {
		return
	}
	addrs := make([]string, 0, len(resp.Servers))
	for _, srv := range resp.Servers {
		addrs = append(addrs, srv.RPCAdvertiseAddr)
	}
	s.cfg.Learn(addrs)
}

// ttlOrDefault guards against a zero TTL, which would spin.
func ttlOrDefault(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return 10 * time.Second
	}
	return ttl
}

// registerAuth is the token a node registers with: the introduction
// token when there is one (servers that know the node check its secret
// in the node itself), else the node's secret.
func (s *Sim) registerAuth(n *node) string {
	if s.cfg.IntroToken != "" {
		return s.cfg.IntroToken
	}
	return n.secret
}
