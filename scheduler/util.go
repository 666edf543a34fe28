package scheduler

import (
	"maps"
	"reflect"

	"github.com/nomadq/nomadq/structs"
)

// Descriptions put on allocations the plan stops or updates.
const (
	descNotNeeded    = "alloc not needed due to job update"
	descJobStopped   = "alloc not needed since job is stopped"
	descLost         = "alloc is lost since its node is down"
	descMigrating    = "alloc is being migrated"
	descRescheduled  = "alloc was rescheduled because it failed"
	descNodeTainted  = "alloc not needed as node is tainted"
	descInfeasible   = "alloc not needed as node no longer fits the job's constraints"
	descGroupRemoved = "alloc not needed as its task group was removed from the job"
)

// DescUpdating is the description of an alloc the plan stops to replace
// it with the job's new version (a destructive update); a plan's
// annotations tell those from plain stops by it.
const DescUpdating = "alloc is being updated due to job update"

// allocUsage is what an existing allocation holds on its node.
func allocUsage(a *structs.Allocation) structs.ComparableResources { return a.Usage() }

// sub subtracts o from c.
func sub(c *structs.ComparableResources, o structs.ComparableResources) {
	c.CPU -= o.CPU
	c.MemoryMB -= o.MemoryMB
	c.DiskMB -= o.DiskMB
}

// allocatedResources builds the authoritative reservation of a new
// allocation, and the legacy Resources/TaskResources view the API shows.
// memory_max reaches the reservation only with memory oversubscription
// on, as in Nomad: clients enforce it as the hard memory limit.
func allocatedResources(tg *structs.TaskGroup, oversubscribe bool, o *offer) (*structs.AllocatedResources, *structs.Resources, map[string]*structs.Resources) {
	ar := &structs.AllocatedResources{Tasks: make(map[string]*structs.AllocatedTaskResources, len(tg.Tasks))}
	total := &structs.Resources{}
	legacy := make(map[string]*structs.Resources, len(tg.Tasks))
	for _, t := range tg.Tasks {
		atr := &structs.AllocatedTaskResources{}
		r := &structs.Resources{}
		if t.Resources != nil {
			atr.Cpu.CpuShares = int64(t.Resources.CPU)
			atr.Memory.MemoryMB = int64(t.Resources.MemoryMB)
			if oversubscribe {
				atr.Memory.MemoryMaxMB = int64(t.Resources.MemoryMaxMB)
			}
			*r = *t.Resources
			r.Networks = nil
			total.CPU += t.Resources.CPU
			total.MemoryMB += t.Resources.MemoryMB
			total.MemoryMaxMB += t.Resources.MemoryMaxMB
			total.Cores += t.Resources.Cores
		}
		ar.Tasks[t.Name] = atr
		legacy[t.Name] = r
	}
	if tg.EphemeralDisk != nil {
		ar.Shared.DiskMB = int64(tg.EphemeralDisk.SizeMB)
		total.DiskMB = tg.EphemeralDisk.SizeMB
	}
	o.apply(ar, legacy, total)
	return ar, total, legacy
}

// needsDestructiveUpdate reports whether moving an allocation of group name
// from job a to job b requires a restart. Fields the client reads only at
// decision points (max_run_duration, restart and reschedule policies,
// counts, update strategies, services, priority, constraints) change in
// place; anything that reaches a task's environment, command or
// reservation does not.
func needsDestructiveUpdate(a, b *structs.Job, name string) bool {
	ga, gb := a.LookupTaskGroup(name), b.LookupTaskGroup(name)
	if ga == nil || gb == nil {
		return true
	}
	if len(ga.Tasks) != len(gb.Tasks) {
		return true
	}
	if !maps.Equal(a.Meta, b.Meta) || !maps.Equal(ga.Meta, gb.Meta) {
		return true
	}
	if !reflect.DeepEqual(ga.EphemeralDisk, gb.EphemeralDisk) || !reflect.DeepEqual(ga.Networks, gb.Networks) {
		return true
	}
	for _, ta := range ga.Tasks {
		tb := gb.LookupTask(ta.Name)
		if tb == nil {
			return true
		}
		if ta.Driver != tb.Driver || ta.User != tb.User || ta.Leader != tb.Leader || ta.Kind != tb.Kind {
			return true
		}
		if !maps.Equal(ta.Env, tb.Env) || !maps.Equal(ta.Meta, tb.Meta) {
			return true
		}
		if !reflect.DeepEqual(ta.Config, tb.Config) ||
			!reflect.DeepEqual(ta.Resources, tb.Resources) ||
			!reflect.DeepEqual(ta.Artifacts, tb.Artifacts) ||
			!reflect.DeepEqual(ta.Templates, tb.Templates) ||
			!reflect.DeepEqual(ta.Lifecycle, tb.Lifecycle) ||
			!reflect.DeepEqual(ta.DispatchPayload, tb.DispatchPayload) ||
			!reflect.DeepEqual(ta.LogConfig, tb.LogConfig) {
			return true
		}
	}
	return false
}

// jobChanged reports whether an allocation runs an older definition of job.
// An allocation stored without its job cannot be compared and is left
// alone rather than restarted on every evaluation.
func jobChanged(alloc *structs.Allocation, job *structs.Job) bool {
	if alloc.Job == nil {
		return false
	}
	return alloc.Job.Version != job.Version || alloc.Job.JobModifyIndex != job.JobModifyIndex
}

// memoryOversubscription reads whether the cluster lets tasks use memory
// up to memory_max; unreadable configuration means no.
func memoryOversubscription(state State) bool {
	cfg, err := state.SchedulerConfig()
	return err == nil && cfg != nil && cfg.MemoryOversubscriptionEnabled
}
