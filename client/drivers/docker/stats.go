package docker

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"github.com/nomadq/nomadq/client/drivers"
)

// clockTicks is USER_HZ, the unit of TaskUsage's ticks.
const clockTicks = 100

// TaskStats takes one sample of the container's cgroup from the engine.
func (d *Driver) TaskStats(taskID string) (*drivers.TaskUsage, error) {
	t, err := d.get(taskID)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	u := &drivers.TaskUsage{Timestamp: now}
	select {
	case <-t.done:
		return u, nil
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := d.client.ContainerStats(ctx, t.containerID, client.ContainerStatsOptions{Stream: false})
	if err != nil {
		return nil, fmt.Errorf("docker: stats of container %s: %w", shortID(t.containerID), err)
	}
	defer res.Body.Close()
	var s container.StatsResponse
	if err := json.NewDecoder(res.Body).Decode(&s); err != nil {
		return nil, fmt.Errorf("docker: decode stats of container %s: %w", shortID(t.containerID), err)
	}
	m := s.MemoryStats
	u.Usage, u.MaxUsage = m.Usage, m.MaxUsage
	// cgroup v1 reports rss; v2 reports anon.
	if rss, ok := m.Stats["rss"]; ok {
		u.RSS = rss
	} else {
		u.RSS = m.Stats["anon"]
	}
	u.Measured = []string{"RSS", "Usage", "Max Usage"}
	cpu := s.CPUStats.CPUUsage
	const nsPerTick = 1e9 / clockTicks
	u.UserTicks = float64(cpu.UsageInUsermode) / nsPerTick
	u.SysTicks = float64(cpu.UsageInKernelmode) / nsPerTick
	u.TotalTicks = float64(cpu.TotalUsage) / nsPerTick
	d.mu.Lock()
	prev, ok := d.lastCPU[taskID]
	d.lastCPU[taskID] = cpuSample{ticks: u.TotalTicks, at: now}
	d.mu.Unlock()
	if ok && now.After(prev.at) && u.TotalTicks >= prev.ticks {
		u.Percent = (u.TotalTicks - prev.ticks) / clockTicks / now.Sub(prev.at).Seconds() * 100
	}
	return u, nil
}
