package executor

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/opencontainers/cgroups"
	"github.com/opencontainers/cgroups/manager"
)

// cgroupParent is the cgroup, in every hierarchy, under which each task
// run gets its own.
const cgroupParent = "/nomadq"

// Limits is what a run's cgroup enforces. The zero value enforces
// nothing: the cgroup then only measures the run and kills all of it.
type Limits struct {
	// CPUShares is the relative CPU weight (Nomad's cpu, in MHz).
	CPUShares int64
	// MemoryMB is the hard memory limit, or the soft one when
	// MemoryMaxMB is set; 0 means none.
	MemoryMB int64
	// MemoryMaxMB is the hard memory limit under oversubscription.
	MemoryMaxMB int64
	// Cores pins the run to these CPUs; empty means any.
	Cores []uint16
}

// taskCgroup is one run's cgroup, in every hierarchy (v1) or the unified
// one (v2).
type taskCgroup struct {
	m cgroups.Manager
}

// cgroupConfig is the library's view of a run's cgroup; devices are left
// alone, the task sees only what the chroot gives it.
func cgroupConfig(path string, r *cgroups.Resources) *cgroups.Cgroup {
	if r == nil {
		r = &cgroups.Resources{}
	}
	r.SkipDevices = true
	return &cgroups.Cgroup{Path: path, Resources: r}
}

// cgroupName turns a run's ID ("<alloc>/<task>/<run>") into one path
// element.
func cgroupName(id string) string {
	return strings.NewReplacer("/", ".", " ", "_").Replace(id)
}

func (l Limits) resources() *cgroups.Resources {
	r := &cgroups.Resources{}
	if l.CPUShares > 0 {
		// cpu.shares must be at least 2; the library turns shares into a
		// cgroup v2 weight itself.
		r.CpuShares = uint64(max(l.CPUShares, 2))
	}
	hard := l.MemoryMB
	if l.MemoryMaxMB > hard {
		hard = l.MemoryMaxMB
		r.MemoryReservation = l.MemoryMB << 20
	}
	if hard > 0 {
		r.Memory = hard << 20
	}
	if len(l.Cores) > 0 {
		cs := make([]string, len(l.Cores))
		for i, c := range l.Cores {
			cs[i] = strconv.Itoa(int(c))
		}
		r.CpusetCpus = strings.Join(cs, ",")
	}
	return r
}

// setMu serialises Manager.Set: the cgroup v1 manager's subsystems are
// package-level values, and the blkio one caches which weight file the
// kernel has on its first Set without a lock, so two tasks starting at
// once race on it.
var setMu sync.Mutex

// createCgroup makes the cgroup of run id with limits applied, before any
// process is in it.
func createCgroup(id string, l Limits) (*taskCgroup, error) {
	r := l.resources()
	m, err := manager.New(cgroupConfig(cgroupParent+"/"+cgroupName(id), r))
	if err != nil {
		return nil, fmt.Errorf("cgroup for %s: %w", id, err)
	}
	if err := m.Apply(-1); err != nil {
		return nil, fmt.Errorf("create cgroup for %s: %w", id, err)
	}
	if r.Memory > 0 && swapLimitable(m) {
		// Without this the task could page out past its limit instead of
		// being killed.
		r.MemorySwap = r.Memory
	}
	setMu.Lock()
	err = m.Set(r)
	setMu.Unlock()
	if err != nil {
		_ = m.Destroy()
		return nil, fmt.Errorf("set limits of cgroup for %s: %w", id, err)
	}
	// Controllers the library skipped (devices) have no directory; a
	// process cannot be added to those.
	paths := map[string]string{}
	for k, p := range m.GetPaths() {
		if cgroups.PathExists(p) {
			paths[k] = p
		}
	}
	return loadCgroup(paths)
}

// swapLimitable reports whether the kernel accounts swap for the cgroup;
// limiting it where it does not fails.
func swapLimitable(m cgroups.Manager) bool {
	if cgroups.IsCgroup2UnifiedMode() {
		return cgroups.PathExists(m.Path("") + "/memory.swap.max")
	}
	return cgroups.PathExists(m.Path("memory") + "/memory.memsw.limit_in_bytes")
}

// loadCgroup finds again the cgroup whose paths an earlier client saved.
func loadCgroup(paths map[string]string) (*taskCgroup, error) {
	m, err := manager.NewWithPaths(cgroupConfig("", nil), paths)
	if err != nil {
		return nil, fmt.Errorf("load cgroup %v: %w", paths, err)
	}
	return &taskCgroup{m: m}, nil
}

// joinCgroup moves pid into the cgroup at paths; the waiter does this for
// the task before it execs.
func joinCgroup(paths map[string]string, pid int) error {
	cg, err := loadCgroup(paths)
	if err != nil {
		return err
	}
	if err := cg.m.AddPid("", pid); err != nil {
		return fmt.Errorf("join cgroup: %w", err)
	}
	return nil
}

func (c *taskCgroup) paths() map[string]string { return c.m.GetPaths() }

// killAll kills every process in the cgroup. Freezing first stops a
// process from forking a child between the listing and the kill.
func (c *taskCgroup) killAll() {
	// Not the library's Exists: on v1 it looks at the devices hierarchy,
	// which runs do not join.
	if len(c.pids()) == 0 {
		return
	}
	frozen := c.m.Freeze(cgroups.Frozen) == nil
	pids := c.pids()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	if frozen {
		// Killed processes die only once thawed.
		_ = c.m.Freeze(cgroups.Thawed)
	}
}

// pids lists the processes in the cgroup. The library's listing reads
// the v1 devices hierarchy, which runs do not join, so read memory's.
func (c *taskCgroup) pids() []int {
	path := c.m.Path("")
	if !cgroups.IsCgroup2UnifiedMode() {
		path = c.m.Path("memory")
	}
	pids, _ := cgroups.GetAllPids(path)
	return pids
}

// oomKilled reports whether the kernel's OOM killer killed a process of
// the cgroup.
func (c *taskCgroup) oomKilled() bool {
	n, err := c.m.OOMKillCount()
	return err == nil && n > 0
}

// destroy removes the cgroup, killing anything left in it.
func (c *taskCgroup) destroy() {
	c.killAll()
	_ = c.m.Destroy()
}

// nsPerTick converts the cgroup's CPU nanoseconds into clock ticks.
const nsPerTick = 1e9 / clockTicks

// stats fills u from the cgroup's counters.
func (c *taskCgroup) stats(u *drivers.TaskUsage) error {
	st, err := c.m.GetStats()
	if err != nil {
		return fmt.Errorf("cgroup stats: %w", err)
	}
	ms := st.MemoryStats
	u.Usage = ms.Usage.Usage
	u.MaxUsage = ms.Usage.MaxUsage
	// v1 counts resident anonymous memory as rss, v2 as anon.
	for _, k := range []string{"total_rss", "rss", "anon"} {
		if v, ok := ms.Stats[k]; ok {
			u.RSS = v
			break
		}
	}
	cpu := st.CpuStats.CpuUsage
	u.UserTicks = float64(cpu.UsageInUsermode) / nsPerTick
	u.SysTicks = float64(cpu.UsageInKernelmode) / nsPerTick
	u.TotalTicks = float64(cpu.TotalUsage) / nsPerTick
	u.Pids = c.pids()
	return nil
}

// CgroupsUsable reports why this process cannot put tasks into cgroups
// with limits, or nil when it can: it must be root and find the memory,
// cpu, pids and freezer controllers (v1) or the unified hierarchy (v2)
// writable.
func CgroupsUsable() error {
	if os.Geteuid() != 0 {
		return errors.New("must run as root")
	}
	if !cgroups.IsCgroup2UnifiedMode() {
		for _, ctrl := range []string{"memory", "cpu", "cpuacct", "pids", "freezer"} {
			if _, err := cgroups.FindCgroupMountpoint("", ctrl); err != nil {
				return fmt.Errorf("cgroup v1 controller %q is not mounted", ctrl)
			}
		}
	}
	m, err := manager.New(cgroupConfig(cgroupParent, nil))
	if err != nil {
		return fmt.Errorf("cgroups: %w", err)
	}
	if err := m.Apply(-1); err != nil {
		return fmt.Errorf("cannot create cgroup %s: %w", cgroupParent, err)
	}
	return nil
}
