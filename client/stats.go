package client

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/nomadq/nomadq/structs"
)

// AllocStats measures an alloc's tasks from /proc (their process groups);
// mock_driver tasks measure as zeros. Its shape is Nomad's
// api.AllocResourceUsage, with CpuStats and MemoryStats never nil.
func (c *Client) AllocStats(allocID string) (*api.AllocResourceUsage, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	mhz := float64(c.node.NodeResources.Cpu.CpuShares) / float64(max(c.node.NodeResources.Cpu.TotalCpuCores, 1))
	now := time.Now().UnixNano()
	out := &api.AllocResourceUsage{
		ResourceUsage: emptyUsage(),
		Tasks:         make(map[string]*api.TaskResourceUsage),
		Timestamp:     now,
	}
	for name := range ar.TaskStates() {
		tr := ar.TaskRunner(name)
		tu := &api.TaskResourceUsage{ResourceUsage: emptyUsage(), Timestamp: now}
		u, err := tr.Stats()
		if err == nil && u != nil {
			m, cpu := tu.ResourceUsage.MemoryStats, tu.ResourceUsage.CpuStats
			m.RSS = u.RSS
			m.Usage = u.RSS
			m.Measured = []string{"RSS"}
			if u.Usage > 0 {
				// A cgroup measured the task: usage counts page cache too.
				m.Usage, m.MaxUsage = u.Usage, u.MaxUsage
				m.Measured = []string{"RSS", "Usage", "Max Usage"}
			}
			cpu.Percent = u.Percent
			cpu.TotalTicks = u.Percent / 100 * mhz
			cpu.UserMode = u.UserTicks
			cpu.SystemMode = u.SysTicks
			cpu.Measured = u.Measured
			if len(cpu.Measured) == 0 {
				cpu.Measured = []string{"Percent", "Total Ticks"}
			}
			tu.Timestamp = u.Timestamp.UnixNano()
		}
		out.Tasks[name] = tu
		am, ac := out.ResourceUsage.MemoryStats, out.ResourceUsage.CpuStats
		am.RSS += tu.ResourceUsage.MemoryStats.RSS
		am.Usage += tu.ResourceUsage.MemoryStats.Usage
		ac.Percent += tu.ResourceUsage.CpuStats.Percent
		ac.TotalTicks += tu.ResourceUsage.CpuStats.TotalTicks
		ac.UserMode += tu.ResourceUsage.CpuStats.UserMode
		ac.SystemMode += tu.ResourceUsage.CpuStats.SystemMode
	}
	return out, nil
}

func emptyUsage() *api.ResourceUsage {
	return &api.ResourceUsage{
		MemoryStats: &api.MemoryStats{Measured: []string{}},
		CpuStats:    &api.CpuStats{Measured: []string{}},
		DeviceStats: []*api.DeviceGroupStats{},
	}
}

// AllocChecks returns the latest result of each health check of the
// alloc's nomad-provider services, by check ID.
func (c *Client) AllocChecks(allocID string) (map[string]*structs.CheckQueryResult, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	return ar.CheckResults(), nil
}

// hostStats keeps the previous /proc/stat sample so CPU use is a rate.
type hostStats struct {
	mu   sync.Mutex
	prev map[string][]uint64
}

func newHostStats() *hostStats { return &hostStats{prev: make(map[string][]uint64)} }

// HostStats measures the host: CPU per core since the previous call (since
// boot on the first), memory, the alloc dir's disk and uptime, in
// Nomad's api.HostStats shape.
func (c *Client) HostStats() (*api.HostStats, error) {
	hs := &api.HostStats{DeviceStats: []*api.DeviceGroupStats{}}
	mi := meminfo()
	total, avail := mi["MemTotal"], mi["MemAvailable"]
	hs.Memory = &api.HostMemoryStats{Total: total, Available: avail, Free: mi["MemFree"]}
	if total >= avail {
		hs.Memory.Used = total - avail
	}
	mhz := float64(c.node.NodeResources.Cpu.CpuShares) / float64(max(c.node.NodeResources.Cpu.TotalCpuCores, 1))
	cpus, err := c.host.cpu()
	if err != nil {
		return nil, err
	}
	hs.CPU = cpus
	for _, cpu := range cpus {
		hs.CPUTicksConsumed += (100 - cpu.Idle) / 100 * mhz
	}
	disk := diskStats(c.cfg.AllocDir)
	hs.DiskStats = []*api.HostDiskStats{disk}
	hs.AllocDirStats = disk
	if b, err := os.ReadFile("/proc/uptime"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			up, _ := strconv.ParseFloat(f[0], 64)
			hs.Uptime = uint64(up)
		}
	}
	return hs, nil
}

func (h *hostStats) cpu() ([]*api.HostCPUStats, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil, fmt.Errorf("host stats: %w", err)
	}
	defer f.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*api.HostCPUStats
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || !strings.HasPrefix(fields[0], "cpu") || fields[0] == "cpu" {
			continue
		}
		vals := make([]uint64, 0, len(fields)-1)
		for _, s := range fields[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			vals = append(vals, v)
		}
		prev := h.prev[fields[0]]
		h.prev[fields[0]] = vals
		delta := make([]float64, len(vals))
		var sum float64
		for i, v := range vals {
			d := v
			if i < len(prev) && prev[i] <= v {
				d = v - prev[i]
			}
			delta[i] = float64(d)
			sum += float64(d)
		}
		st := &api.HostCPUStats{CPU: fields[0], Idle: 100}
		if sum > 0 {
			// user nice system idle iowait ...
			st.User = (delta[0] + delta[1]) / sum * 100
			st.System = delta[2] / sum * 100
			st.Idle = delta[3] / sum * 100
		}
		out = append(out, st)
	}
	return out, nil
}

func diskStats(path string) *api.HostDiskStats {
	d := &api.HostDiskStats{Device: path, Mountpoint: path}
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return d
	}
	bs := uint64(st.Bsize)
	d.Size = st.Blocks * bs
	d.Available = st.Bavail * bs
	d.Used = (st.Blocks - st.Bfree) * bs
	if d.Size > 0 {
		d.UsedPercent = float64(d.Used) / float64(d.Size) * 100
	}
	if st.Files > 0 {
		d.InodesUsedPercent = float64(st.Files-st.Ffree) / float64(st.Files) * 100
	}
	return d
}
