// Package mock makes valid model objects (jobs, nodes) for the tests of
// several packages, so each does not keep its own copy. Only tests import
// it; it must not be imported by code that ships in the binary.
package mock

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Job returns a valid batch job with one group "work" of one mock_driver
// task "main" (100 MHz, 64 MB, run_for 1s, max_run_duration 10m).
func Job(id string) *structs.Job {
	mrd := 10 * time.Minute
	return &structs.Job{
		ID:          id,
		Name:        id,
		Namespace:   structs.DefaultNamespace,
		Region:      structs.DefaultRegion,
		Type:        structs.JobTypeBatch,
		Priority:    50,
		Datacenters: []string{"dc1"},
		TaskGroups: []*structs.TaskGroup{{
			Name:           "work",
			Count:          1,
			MaxRunDuration: &mrd,
			Tasks: []*structs.Task{{
				Name:   "main",
				Driver: "mock_driver",
				Config: map[string]any{"run_for": "1s"},
				Resources: &structs.Resources{
					CPU:      100,
					MemoryMB: 64,
				},
			}},
		}},
	}
}

// Node returns a ready, eligible node in dc1 with mock_driver, 4000 MHz
// and 8 GiB.
func Node(id string) *structs.Node {
	return &structs.Node{
		ID:         id,
		SecretID:   id + "-secret",
		Name:       "node-" + id[:8],
		Datacenter: "dc1",
		NodePool:   structs.DefaultNodePool,
		Attributes: map[string]string{"kernel.name": "linux", "driver.mock_driver": "1"},
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 * 1024},
		},
		Drivers: map[string]*structs.DriverInfo{
			"mock_driver": {Detected: true, Healthy: true},
		},
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
}

// Eval returns a pending service eval for jobID at priority 50; the
// eval ID is "<jobID>-<createIndex>".
func Eval(jobID string, createIndex uint64) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          fmt.Sprintf("%s-%d", jobID, createIndex),
		Namespace:   structs.DefaultNamespace,
		Priority:    structs.JobDefaultPriority,
		Type:        structs.JobTypeService,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       jobID,
		Status:      structs.EvalStatusPending,
		CreateIndex: createIndex,
		ModifyIndex: createIndex,
	}
}

// JobEval returns a pending registration eval of job, with a new ID.
func JobEval(job *structs.Job) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          structs.GenerateUUID(),
		Namespace:   job.Namespace,
		Priority:    job.Priority,
		Type:        job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       job.ID,
		Status:      structs.EvalStatusPending,
	}
}

// Alloc returns a pending allocation of job's group "work" (task "main":
// 100 MHz, 64 MB) on node, placed by evalID ("" gives it a new one).
func Alloc(job *structs.Job, node *structs.Node, evalID string) *structs.Allocation {
	if evalID == "" {
		evalID = structs.GenerateUUID()
	}
	return &structs.Allocation{
		ID:            structs.GenerateUUID(),
		Namespace:     job.Namespace,
		EvalID:        evalID,
		Name:          structs.AllocName(job.ID, "work", 0),
		NodeID:        node.ID,
		JobID:         job.ID,
		Job:           job,
		TaskGroup:     "work",
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  structs.AllocClientStatusPending,
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{"main": {
				Cpu:    structs.AllocatedCpuResources{CpuShares: 100},
				Memory: structs.AllocatedMemoryResources{MemoryMB: 64},
			}},
		},
		CreateTime: time.Now().UnixNano(),
	}
}
