package scheduler

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestNewScheduler_UnknownType(t *testing.T) {
	h := newHarness(t)
	_, err := NewScheduler("cron", Config{}, h.State, h)
	must.ErrorContains(t, err, `unknown scheduler type "cron"`)
}

func TestBatch_PlacesCount(t *testing.T) {
	cases := []struct {
		name  string
		nodes int
		count int
	}{
		{"one node", 1, 3},
		{"more allocs than nodes", 3, 20},
		{"more nodes than allocs", 50, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(tc.nodes, nil)
			job := mockJob("report", structs.JobTypeBatch, tc.count)
			h.State.upsertJob(job)
			eval := h.run(job)

			must.Len(t, 1, h.Plans)
			placed := h.placed()
			must.Len(t, tc.count, placed)
			seen := map[string]bool{}
			for _, a := range placed {
				must.False(t, seen[a.Name], must.Sprint("duplicate name", a.Name))
				seen[a.Name] = true
				must.Eq(t, eval.ID, a.EvalID)
				must.Eq(t, "report", a.JobID)
				must.Eq(t, structs.AllocDesiredStatusRun, a.DesiredStatus)
				must.Eq(t, structs.AllocClientStatusPending, a.ClientStatus)
				must.Eq(t, int64(0), a.CreateTime)
				must.NotEq(t, "", a.NodeName)
				must.Eq(t, int64(500), a.AllocatedResources.Tasks["main"].Cpu.CpuShares)
				must.Eq(t, int64(256), a.AllocatedResources.Tasks["main"].Memory.MemoryMB)
				must.Eq(t, int64(150), a.AllocatedResources.Shared.DiskMB)
				must.Eq(t, 500, a.Resources.CPU)
				must.Eq(t, 150, a.Resources.DiskMB)
				must.Eq(t, 256, a.TaskResources["main"].MemoryMB)
				must.NotNil(t, a.Metrics)
				must.SliceNotEmpty(t, a.Metrics.ScoreMetaData)
				must.Eq(t, 36, len(a.ID))
			}
			for i := range tc.count {
				must.True(t, seen[structs.AllocName("report", "work", uint(i))])
			}
			e := h.lastEval()
			must.Eq(t, structs.EvalStatusComplete, e.Status)
			must.MapEmpty(t, e.FailedTGAllocs)
			must.Eq(t, map[string]int{"work": 0}, e.QueuedAllocations)
			must.SliceEmpty(t, h.Created)
		})
	}
}

func TestBatch_NothingToDoSubmitsNoPlan(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 2)
	h.State.upsertJob(job)
	h.run(job)
	h.Plans = nil
	h.run(job)
	must.SliceEmpty(t, h.Plans)
	must.Eq(t, structs.EvalStatusComplete, h.lastEval().Status)
}

func TestRank_BinPackChoosesFullerNode(t *testing.T) {
	for _, tc := range []struct {
		algorithm string
		wantBusy  bool
	}{
		{structs.SchedulerAlgorithmBinpack, true},
		{structs.SchedulerAlgorithmSpread, false},
	} {
		t.Run(tc.algorithm, func(t *testing.T) {
			h := newHarness(t)
			h.State.config.SchedulerAlgorithm = tc.algorithm
			nodes := h.addNodes(2, nil)
			busy := nodes[1]
			other := mockJob("other", structs.JobTypeService, 1)
			h.State.upsertJob(other)
			h.State.upsertAlloc(&structs.Allocation{
				ID: structs.GenerateUUID(), Namespace: "default", JobID: "other", Job: other, TaskGroup: "work",
				Name: "other.work[0]", NodeID: busy.ID, DesiredStatus: "run", ClientStatus: "running",
				AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
					"main": {Cpu: structs.AllocatedCpuResources{CpuShares: 2000}, Memory: structs.AllocatedMemoryResources{MemoryMB: 4096}},
				}},
			})
			job := mockJob("j", structs.JobTypeBatch, 1)
			h.State.upsertJob(job)
			h.run(job)
			placed := h.placed()
			must.Len(t, 1, placed)
			must.Eq(t, tc.wantBusy, placed[0].NodeID == busy.ID)
			must.Len(t, 2, placed[0].Metrics.ScoreMetaData)
			top := placed[0].Metrics.ScoreMetaData[0]
			must.Eq(t, placed[0].NodeID, top.NodeID)
			_, ok := top.Scores.Get(scoreBinPack)
			must.True(t, ok)
		})
	}
}

func TestRank_BinPackFillsNodesBeforeUsingEmptyOnes(t *testing.T) {
	h := newHarness(t)
	h.addNodes(10, nil)
	job := mockJob("j", structs.JobTypeBatch, 8) // 8 x 500 MHz fits one 4000 MHz node
	h.State.upsertJob(job)
	h.run(job)
	used := map[string]int{}
	for _, a := range h.placed() {
		used[a.NodeID]++
	}
	// Each placement scores a few candidates, so packing is greedy
	// rather than perfect; it must still stack allocations.
	must.Less(t, 8, len(used)+4)
}

func TestFeasibility_DatacenterGlobs(t *testing.T) {
	cases := []struct {
		dcs  []string
		want []string
	}{
		{[]string{"dc1"}, []string{"dc1"}},
		{[]string{"*"}, []string{"dc1", "dc2", "eu-west"}},
		{[]string{"dc*"}, []string{"dc1", "dc2"}},
		{[]string{"eu-*", "dc2"}, []string{"dc2", "eu-west"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.dcs, ","), func(t *testing.T) {
			h := newHarness(t)
			dcs := []string{"dc1", "dc2", "eu-west"}
			h.addNodes(3, func(i int, n *structs.Node) { n.Datacenter = dcs[i] })
			job := mockJob("j", structs.JobTypeSysBatch, 1)
			job.Datacenters = tc.dcs
			h.State.upsertJob(job)
			h.run(job)
			var got []string
			for _, a := range h.placed() {
				n, _ := h.State.NodeByID(a.NodeID)
				got = append(got, n.Datacenter)
			}
			must.SliceContainsAll(t, tc.want, got)
		})
	}
}

func TestFeasibility_NodePool(t *testing.T) {
	cases := []struct {
		pool string
		want int
	}{
		{"", 2}, // default pool
		{"gpu", 1},
		{structs.AllNodePools, 3},
	}
	for _, tc := range cases {
		t.Run(tc.pool, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(3, func(i int, n *structs.Node) {
				if i == 2 {
					n.NodePool = "gpu"
				}
				if i == 1 {
					n.NodePool = "" // empty means default
				}
			})
			job := mockJob("j", structs.JobTypeSysBatch, 1)
			job.NodePool = tc.pool
			h.State.upsertJob(job)
			h.run(job)
			must.Len(t, tc.want, h.placed())
		})
	}
}

func TestFeasibility_Drivers(t *testing.T) {
	cases := []struct {
		name   string
		driver *structs.DriverInfo
		attr   string
		want   bool
	}{
		{"healthy", &structs.DriverInfo{Detected: true, Healthy: true}, "", true},
		{"unhealthy", &structs.DriverInfo{Detected: true, Healthy: false}, "", false},
		{"undetected", &structs.DriverInfo{Detected: false}, "", false},
		{"missing", nil, "", false},
		{"attribute only", nil, "1", true},
		{"attribute false", nil, "0", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := mockNode(0)
			delete(n.Drivers, "raw_exec")
			if tc.driver != nil {
				n.Drivers["docker"] = tc.driver
			}
			if tc.attr != "" {
				n.Attributes["driver.docker"] = tc.attr
			}
			ok, rej := driverChecker{[]string{"docker"}}.check(nil, n)
			must.Eq(t, tc.want, ok)
			if !ok {
				must.Eq(t, filterDrivers, rej.key)
			}
		})
	}
}

func TestFeasibility_ConstraintOperators(t *testing.T) {
	n := mockNode(7)
	n.NodeClass = "large"
	n.Attributes["cpu.numcores"] = "8"
	n.Attributes["nomad.version"] = "1.9.3"
	n.Attributes["docker.version"] = "1.2.0-beta.1"
	cases := []struct {
		l, op, r string
		want     bool
	}{
		{"${attr.kernel.name}", "=", "linux", true},
		{"${attr.kernel.name}", "==", "linux", true},
		{"${attr.kernel.name}", "is", "windows", false},
		{"${attr.kernel.name}", "!=", "windows", true},
		{"${attr.kernel.name}", "not", "linux", false},
		{"${attr.missing}", "!=", "x", true},
		{"${attr.missing}", "=", "x", false},
		{"${attr.cpu.numcores}", ">", "10", false}, // numeric, not lexical
		{"${attr.cpu.numcores}", "<", "10", true},
		{"${attr.cpu.numcores}", ">=", "8", true},
		{"${attr.cpu.numcores}", "<=", "7", false},
		{"${attr.kernel.name}", "<", "mac", true}, // lexical
		{"${attr.kernel.name}", "regexp", "^lin", true},
		{"${attr.kernel.name}", "regexp", "^win", false},
		{"${attr.kernel.name}", "regexp", "([", false},
		{"${attr.nomad.version}", "version", ">= 1.2, < 2", true},
		{"${attr.nomad.version}", "version", "~> 1.9.0", true},
		{"${attr.nomad.version}", "version", "~> 1.8", true},
		{"${attr.nomad.version}", "version", "~> 1.8.0", false},
		{"${attr.nomad.version}", "version", "> 1.10", false},
		{"${attr.docker.version}", "version", ">= 1.0", false}, // pre-release needs a pre-release constraint
		{"${attr.docker.version}", "semver", ">= 1.0", true},
		{"${attr.docker.version}", "semver", ">= 1.2.0", false},
		{"${attr.nomad.version}", "semver", "= 1.9.3", true},
		{"${attr.nomad.version}", "version", "not a version", false},
		{"${meta.tags}", "set_contains", "gpu", true},
		{"${meta.tags}", "set_contains", "gpu,ssd", true},
		{"${meta.tags}", "set_contains", "gpu,nvme", false},
		{"${meta.tags}", "set_contains_all", "ssd, gpu", true},
		{"${meta.tags}", "set_contains_any", "nvme,gpu", true},
		{"${meta.tags}", "set_contains_any", "nvme,hdd", false},
		{"${meta.rack}", "is_set", "", true},
		{"${meta.zone}", "is_set", "", false},
		{"${meta.zone}", "is_not_set", "", true},
		{"${meta.rack}", "is_not_set", "", false},
		{"${node.unique.id}", "=", "node-0007", true},
		{"${node.unique.name}", "=", "client-7", true},
		{"${node.datacenter}", "=", "dc1", true},
		{"${node.class}", "=", "large", true},
		{"${node.pool}", "=", "default", true},
		{"${attr.kernel.name}", "bogus", "linux", false},
	}
	ctx := newEvalContext(nil, nil, "", nil)
	for _, tc := range cases {
		c := &structs.Constraint{LTarget: tc.l, Operand: tc.op, RTarget: tc.r}
		t.Run(c.String(), func(t *testing.T) {
			must.Eq(t, tc.want, checkConstraint(ctx, c, n))
		})
	}
}

func TestFeasibility_ConstraintsAtEveryLevel(t *testing.T) {
	for _, level := range []string{"job", "group", "task"} {
		t.Run(level, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(4, func(i int, n *structs.Node) {
				if i%2 == 0 {
					n.Attributes["kernel.name"] = "windows"
				}
			})
			job := mockJob("j", structs.JobTypeBatch, 4)
			c := &structs.Constraint{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "windows"}
			switch level {
			case "job":
				job.Constraints = []*structs.Constraint{c}
			case "group":
				job.TaskGroups[0].Constraints = []*structs.Constraint{c}
			case "task":
				job.TaskGroups[0].Tasks[0].Constraints = []*structs.Constraint{c}
			}
			h.State.upsertJob(job)
			h.run(job)
			for _, a := range h.placed() {
				n, _ := h.State.NodeByID(a.NodeID)
				must.Eq(t, "windows", n.Attributes["kernel.name"])
			}
			must.Len(t, 4, h.placed())
		})
	}
}

func TestFeasibility_DistinctHosts(t *testing.T) {
	h := newHarness(t)
	h.addNodes(3, nil)
	job := mockJob("j", structs.JobTypeBatch, 4)
	job.TaskGroups[0].Constraints = []*structs.Constraint{{Operand: structs.ConstraintDistinctHosts}}
	h.State.upsertJob(job)
	h.run(job)
	placed := h.placed()
	must.Len(t, 3, placed)
	nodes := map[string]bool{}
	for _, a := range placed {
		nodes[a.NodeID] = true
	}
	must.MapLen(t, 3, nodes)
	m := h.lastEval().FailedTGAllocs["work"]
	must.NotNil(t, m)
	must.Eq(t, 3, m.ConstraintFiltered[" distinct_hosts "])
	must.False(t, m.Infeasible)
}

func TestFeasibility_DistinctProperty(t *testing.T) {
	h := newHarness(t)
	h.addNodes(6, nil) // meta.rack is r0 or r1
	job := mockJob("j", structs.JobTypeBatch, 5)
	job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty, RTarget: "2"}}
	h.State.upsertJob(job)
	h.run(job)
	perRack := map[string]int{}
	for _, a := range h.placed() {
		n, _ := h.State.NodeByID(a.NodeID)
		perRack[n.Meta["rack"]]++
	}
	must.Eq(t, map[string]int{"r0": 2, "r1": 2}, perRack)
	must.Eq(t, 1, h.lastEval().QueuedAllocations["work"])
}

// The node list and map a server shares between evaluations are read,
// never written: the scheduler places through them, and a node looked up
// that is not in them (gone from state) is kept on the side.
func TestFeasibility_SharedNodeSetStaysUntouched(t *testing.T) {
	h := newHarness(t)
	h.Shared = &sharedNodes{}
	h.addNodes(6, nil)
	job := mockJob("j", structs.JobTypeBatch, 3)
	job.Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: structs.ConstraintDistinctProperty, RTarget: "2"}}
	h.State.upsertJob(job)
	h.run(job)
	must.Len(t, 3, h.placed())
	must.MapLen(t, 6, h.Shared.byID)

	ctx := newEvalContext(h.Shared, &structs.Plan{}, job.ID, h.Shared.byID)
	missing := structs.GenerateUUID()
	must.Nil(t, ctx.node(missing))
	must.Nil(t, ctx.node(missing))
	must.MapLen(t, 6, h.Shared.byID)
	must.MapNotContainsKey(t, h.Shared.byID, missing)
	must.Eq(t, h.State.nodes[0], ctx.node(h.State.nodes[0].ID))
}

func TestFeasibility_ClassCacheAndEligibility(t *testing.T) {
	h := newHarness(t)
	h.addNodes(4, func(i int, n *structs.Node) {
		if i < 2 {
			n.ComputedClass = "v1:linux"
		} else {
			n.ComputedClass = "v1:windows"
			n.Attributes["kernel.name"] = "windows"
		}
	})
	job := mockJob("j", structs.JobTypeBatch, 1)
	job.TaskGroups[0].Tasks[0].Resources.MemoryMB = 100_000
	job.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
	h.State.upsertJob(job)
	h.run(job)
	m := h.lastEval().FailedTGAllocs["work"]
	must.Eq(t, map[string]int{"v1:windows": 2}, m.ClassFiltered)
	must.Len(t, 1, h.Created)
	must.Eq(t, map[string]bool{"v1:linux": true, "v1:windows": false}, h.Created[0].ClassEligibility)
	must.False(t, h.Created[0].EscapedComputedClass)
}

func TestMetrics_InfeasibleVersusExhausted(t *testing.T) {
	windows := &structs.Constraint{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "windows"}
	cases := []struct {
		name       string
		nodes      func(i int, n *structs.Node)
		job        func(j *structs.Job)
		count      int
		infeasible bool
		reason     string
		check      func(t *testing.T, m *structs.AllocMetric)
	}{
		{
			name: "too big for any node",
			nodes: func(i int, n *structs.Node) {
				n.NodeResources.Memory.MemoryMB = 16000
			},
			job:        func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 64000 },
			count:      2,
			infeasible: true,
			reason:     "resources exceed every node's capacity: memory 64000 MB asked, largest node has 16000 MB",
			check: func(t *testing.T, m *structs.AllocMetric) {
				must.Eq(t, 3, m.NodesExhausted)
				must.Eq(t, map[string]int{"memory": 3}, m.DimensionExhausted)
				must.Eq(t, 1, m.CoalescedFailures)
			},
		},
		{
			name:       "cluster full",
			job:        func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Resources.CPU = 3000 },
			count:      5,
			infeasible: false,
			check: func(t *testing.T, m *structs.AllocMetric) {
				must.Eq(t, 3, m.NodesEvaluated)
				must.Eq(t, 3, m.NodesExhausted)
				must.Eq(t, map[string]int{"cpu": 3}, m.DimensionExhausted)
				must.Eq(t, 1, m.CoalescedFailures)
			},
		},
		{
			name:       "zero eligible nodes",
			nodes:      func(i int, n *structs.Node) { n.SchedulingEligibility = structs.NodeSchedulingIneligible },
			count:      1,
			infeasible: true,
			reason:     "no node is ready and eligible (3 not ready or ineligible)",
		},
		{
			name:       "constraint filters all",
			job:        func(j *structs.Job) { j.Constraints = []*structs.Constraint{windows} },
			count:      1,
			infeasible: true,
			reason:     `constraint "${attr.kernel.name} = windows" filtered all 3 nodes`,
			check: func(t *testing.T, m *structs.AllocMetric) {
				must.Eq(t, 3, m.NodesEvaluated)
				must.Eq(t, 3, m.NodesFiltered)
				must.Eq(t, map[string]int{"${attr.kernel.name} = windows": 3}, m.ConstraintFiltered)
			},
		},
		{
			name:       "datacenter",
			job:        func(j *structs.Job) { j.Datacenters = []string{"dc9"} },
			count:      1,
			infeasible: true,
			reason:     "no nodes in datacenters [dc9]",
			check: func(t *testing.T, m *structs.AllocMetric) {
				must.Eq(t, map[string]int{"datacenter": 3}, m.ConstraintFiltered)
				must.Eq(t, 0, m.NodesInPool)
			},
		},
		{
			name:       "node pool",
			job:        func(j *structs.Job) { j.NodePool = "gpu" },
			count:      1,
			infeasible: true,
			reason:     `no ready nodes in node pool "gpu"`,
		},
		{
			name:       "missing driver",
			job:        func(j *structs.Job) { j.TaskGroups[0].Tasks[0].Driver = "docker" },
			count:      1,
			infeasible: true,
			reason:     `no node has driver "docker"`,
			check: func(t *testing.T, m *structs.AllocMetric) {
				must.Eq(t, map[string]int{"missing drivers": 3}, m.ConstraintFiltered)
			},
		},
		{
			name: "mixed filters",
			nodes: func(i int, n *structs.Node) {
				if i == 0 {
					n.Attributes["kernel.name"] = "windows"
				}
			},
			job: func(j *structs.Job) {
				j.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}
				j.TaskGroups[0].Constraints = []*structs.Constraint{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r7"}}
			},
			count:      1,
			infeasible: true,
			reason:     `no node passes every check (3 nodes in the datacenters and pool): constraint "${meta.rack} = r7" filtered 2 nodes, constraint "${attr.kernel.name} = linux" filtered 1 node`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(3, tc.nodes)
			job := mockJob("j", structs.JobTypeBatch, tc.count)
			if tc.job != nil {
				tc.job(job)
			}
			h.State.upsertJob(job)
			eval := h.run(job)

			e := h.lastEval()
			must.Eq(t, structs.EvalStatusComplete, e.Status)
			m := e.FailedTGAllocs["work"]
			must.NotNil(t, m)
			must.Eq(t, tc.infeasible, m.Infeasible)
			must.Eq(t, tc.reason, m.InfeasibleReason)
			if tc.check != nil {
				tc.check(t, m)
			}

			// A blocked eval waits for the cluster to change.
			must.Len(t, 1, h.Created)
			b := h.Created[0]
			must.Eq(t, structs.EvalStatusBlocked, b.Status)
			must.Eq(t, structs.EvalTriggerQueuedAllocs, b.TriggeredBy)
			must.Eq(t, eval.ID, b.PreviousEval)
			must.Eq(t, b.ID, e.BlockedEval)
			must.Eq(t, job.ID, b.JobID)
			must.Eq(t, tc.infeasible, b.FailedTGAllocs["work"].Infeasible)
		})
	}
}

func TestMetrics_PartlyPlacedGroupIsNotInfeasible(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 20) // 16 fit (8 per node by cpu)
	h.State.upsertJob(job)
	h.run(job)
	must.Len(t, 16, h.placed())
	e := h.lastEval()
	must.Eq(t, 4, e.QueuedAllocations["work"])
	m := e.FailedTGAllocs["work"]
	must.False(t, m.Infeasible)
	must.Eq(t, 3, m.CoalescedFailures)
	must.Eq(t, 2, m.NodesInPool)
}

func TestBlockedEval_ReblockedWhenStillUnplaceable(t *testing.T) {
	h := newHarness(t)
	h.addNodes(1, nil)
	job := mockJob("j", structs.JobTypeBatch, 1)
	job.TaskGroups[0].Tasks[0].Resources.CPU = 10_000
	h.State.upsertJob(job)
	h.run(job)
	must.Len(t, 1, h.Created)
	blocked := h.Created[0]
	h.Updated = nil

	must.NoError(t, h.Process(job.Type, blocked))
	must.Len(t, 1, h.Created) // no new blocked eval
	must.SliceEmpty(t, h.Updated)
	must.Len(t, 1, h.Reblocked)
	must.Eq(t, blocked.ID, h.Reblocked[0].ID)
	must.Eq(t, structs.EvalStatusBlocked, h.Reblocked[0].Status)
	must.True(t, h.Reblocked[0].FailedTGAllocs["work"].Infeasible)

	// Once a big enough node joins, the blocked eval completes.
	h.addNodes(1, func(_ int, n *structs.Node) { n.NodeResources.Cpu.CpuShares = 16_000 })
	must.NoError(t, h.Process(job.Type, blocked))
	must.Len(t, 1, h.placed())
	must.Eq(t, structs.EvalStatusComplete, h.lastEval().Status)
}

// failedAlloc puts a failed allocation of job in state, failed at ft.
func failedAlloc(h *Harness, job *structs.Job, node *structs.Node, idx uint, ft time.Time) *structs.Allocation {
	a := &structs.Allocation{
		ID: structs.GenerateUUID(), Namespace: job.Namespace, JobID: job.ID, Job: job, TaskGroup: "work",
		Name: structs.AllocName(job.ID, "work", idx), NodeID: node.ID, NodeName: node.Name,
		DesiredStatus: structs.AllocDesiredStatusRun, ClientStatus: structs.AllocClientStatusFailed,
		AllocatedResources: &structs.AllocatedResources{Tasks: map[string]*structs.AllocatedTaskResources{
			"main": {Cpu: structs.AllocatedCpuResources{CpuShares: 500}, Memory: structs.AllocatedMemoryResources{MemoryMB: 256}},
		}},
		TaskStates: map[string]*structs.TaskState{"main": {State: structs.TaskStateDead, Failed: true, FinishedAt: ft}},
		CreateTime: ft.Add(-time.Minute).UnixNano(),
		ModifyTime: ft.UnixNano(),
	}
	h.State.upsertAlloc(a)
	return a
}

func TestReschedule_BatchDelay(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 1)
	job.TaskGroups[0].ReschedulePolicy = &structs.ReschedulePolicy{
		Attempts: 1, Interval: time.Hour, Delay: 5 * time.Second, DelayFunction: structs.RescheduleDelayConstant,
	}
	h.State.upsertJob(job)
	ft := h.Now
	failed := failedAlloc(h, job, nodes[0], 0, ft)

	// Before the delay: a follow-up eval, recorded on the allocation.
	h.Now = ft.Add(2 * time.Second)
	eval := h.run(job)
	must.Len(t, 1, h.Created)
	f := h.Created[0]
	must.Eq(t, ft.Add(5*time.Second), f.WaitUntil)
	must.Eq(t, structs.EvalTriggerRetryFailedAlloc, f.TriggeredBy)
	must.Eq(t, structs.EvalStatusPending, f.Status)
	must.Eq(t, eval.ID, f.PreviousEval)
	must.Len(t, 1, h.Plans)
	upd := h.Plans[0].NodeAllocation[nodes[0].ID]
	must.Len(t, 1, upd)
	must.Eq(t, f.ID, upd[0].FollowupEvalID)
	must.MapEmpty(t, h.lastEval().FailedTGAllocs)

	// Another eval before the delay does not create a second follow-up.
	h.Plans = nil
	h.run(job)
	must.Len(t, 1, h.Created)
	must.SliceEmpty(t, h.Plans)

	// The follow-up, once the delay passed, places a replacement.
	h.Now = ft.Add(5 * time.Second)
	must.NoError(t, h.Process(job.Type, f))
	var repl *structs.Allocation
	for _, a := range h.placed() {
		if a.ID != failed.ID {
			repl = a
		}
	}
	must.NotNil(t, repl)
	must.Eq(t, failed.ID, repl.PreviousAllocation)
	must.Eq(t, "j.work[0]", repl.Name)
	must.Len(t, 1, repl.RescheduleTracker.Events)
	ev := repl.RescheduleTracker.Events[0]
	must.Eq(t, failed.ID, ev.PrevAllocID)
	must.Eq(t, nodes[0].ID, ev.PrevNodeID)
	must.Eq(t, 5*time.Second, ev.Delay)
	must.Eq(t, h.Now.UnixNano(), ev.RescheduleTime)
	must.Eq(t, failed.ID, h.State.allocs[failed.ID].ID)
	must.Eq(t, repl.ID, h.State.allocs[failed.ID].NextAllocation)

	// The replacement fails too: its one attempt is used up.
	h.Now = h.Now.Add(time.Minute)
	r := h.State.allocs[repl.ID]
	r.ClientStatus = structs.AllocClientStatusFailed
	r.TaskStates = map[string]*structs.TaskState{"main": {State: "dead", Failed: true, FinishedAt: h.Now}}
	h.Plans, h.Created = nil, nil
	h.Now = h.Now.Add(time.Minute)
	h.run(job)
	must.SliceEmpty(t, h.Plans)
	must.SliceEmpty(t, h.Created)
	must.MapEmpty(t, h.lastEval().FailedTGAllocs)
}

func TestReschedule_DelayFunctions(t *testing.T) {
	ev := func(ds ...time.Duration) *structs.Allocation {
		a := &structs.Allocation{RescheduleTracker: &structs.RescheduleTracker{}}
		for _, d := range ds {
			a.RescheduleTracker.Events = append(a.RescheduleTracker.Events, &structs.RescheduleEvent{Delay: d})
		}
		return a
	}
	s := time.Second
	cases := []struct {
		name string
		fn   string
		max  time.Duration
		prev []time.Duration
		want time.Duration
	}{
		{"constant", structs.RescheduleDelayConstant, 0, []time.Duration{5 * s}, 5 * s},
		{"exponential first", structs.RescheduleDelayExponential, 0, nil, 5 * s},
		{"exponential doubles", structs.RescheduleDelayExponential, 0, []time.Duration{5 * s, 10 * s}, 20 * s},
		{"exponential capped", structs.RescheduleDelayExponential, 15 * s, []time.Duration{10 * s}, 15 * s},
		{"fibonacci second", structs.RescheduleDelayFibonacci, 0, []time.Duration{5 * s}, 5 * s},
		{"fibonacci sums", structs.RescheduleDelayFibonacci, 0, []time.Duration{5 * s, 5 * s, 10 * s}, 15 * s},
		{"fibonacci capped", structs.RescheduleDelayFibonacci, 12 * s, []time.Duration{5 * s, 10 * s}, 12 * s},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := &structs.ReschedulePolicy{Delay: 5 * s, DelayFunction: tc.fn, MaxDelay: tc.max, Unlimited: true}
			must.Eq(t, tc.want, rescheduleDelay(p, ev(tc.prev...)))
		})
	}
}

func TestReschedule_AttemptsWithinInterval(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	at := func(ago time.Duration) *structs.RescheduleEvent {
		return &structs.RescheduleEvent{RescheduleTime: now.Add(-ago).UnixNano()}
	}
	cases := []struct {
		name   string
		policy structs.ReschedulePolicy
		events []*structs.RescheduleEvent
		want   bool
	}{
		{"first attempt", structs.ReschedulePolicy{Attempts: 1, Interval: time.Hour}, nil, true},
		{"used up", structs.ReschedulePolicy{Attempts: 1, Interval: time.Hour}, []*structs.RescheduleEvent{at(time.Minute)}, false},
		{"old attempt expired", structs.ReschedulePolicy{Attempts: 1, Interval: time.Hour}, []*structs.RescheduleEvent{at(2 * time.Hour)}, true},
		{"zero attempts", structs.ReschedulePolicy{Attempts: 0, Interval: time.Hour}, nil, false},
		{"unlimited", structs.ReschedulePolicy{Unlimited: true}, []*structs.RescheduleEvent{at(1), at(2), at(3)}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := &structs.Allocation{RescheduleTracker: &structs.RescheduleTracker{Events: tc.events}}
			must.Eq(t, tc.want, rescheduleAttemptsLeft(&tc.policy, a, now))
		})
	}
}

func TestReschedule_ServiceDefaults(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(2, nil)
	job := mockJob("web", structs.JobTypeService, 2)
	h.State.upsertJob(job)
	ft := h.Now
	failedAlloc(h, job, nodes[0], 0, ft)
	done := failedAlloc(h, job, nodes[1], 1, ft)
	done.ClientStatus = structs.AllocClientStatusComplete

	h.Now = ft.Add(10 * time.Second)
	h.run(job)
	// The complete service alloc is replaced at once; the failed one
	// waits for the 30s default delay.
	placed := h.placed()
	var fresh []string
	for _, a := range placed {
		if a.FollowupEvalID == "" {
			fresh = append(fresh, a.Name)
		}
	}
	must.Eq(t, []string{"web.work[1]"}, fresh)
	must.Len(t, 1, h.Created)
	must.Eq(t, ft.Add(30*time.Second), h.Created[0].WaitUntil)
}

func TestLost_AllocsOnDownNodeReplaced(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 3)
	h.State.upsertJob(job)
	h.run(job)
	// Pin everything on node 0, then let node 0 go down; one alloc there
	// already completed.
	h.pinRunning(nodes[0])
	var doneID string
	for _, a := range h.State.allocs {
		if a.Name == "j.work[2]" {
			a.ClientStatus = structs.AllocClientStatusComplete
			doneID = a.ID
		}
	}
	nodes[0].Status = structs.NodeStatusDown
	h.Plans = nil
	h.run(job)

	stopped := h.stopped()
	must.Eq(t, []string{"j.work[0]", "j.work[1]"}, names(stopped))
	for _, a := range stopped {
		must.Eq(t, structs.AllocClientStatusLost, a.ClientStatus)
		must.Eq(t, structs.AllocDesiredStatusStop, a.DesiredStatus)
		must.NotEq(t, doneID, a.ID)
	}
	placed := h.placed()
	must.Eq(t, []string{"j.work[0]", "j.work[1]"}, names(placed))
	for i, a := range placed {
		must.Eq(t, nodes[1].ID, a.NodeID)
		must.Eq(t, stopped[i].ID, a.PreviousAllocation)
	}
}

func TestBatch_CompletedAllocsNeverReplaced(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 3)
	h.State.upsertJob(job)
	h.run(job)
	for _, a := range h.State.allocs {
		a.ClientStatus = structs.AllocClientStatusComplete
	}
	h.Plans = nil
	h.run(job)
	must.SliceEmpty(t, h.Plans)

	// Raising the count places only the new indexes.
	job2 := *job
	job2.TaskGroups = []*structs.TaskGroup{{}}
	*job2.TaskGroups[0] = *job.TaskGroups[0]
	job2.TaskGroups[0].Count = 4
	job2.Version++
	h.State.upsertJob(&job2)
	h.run(&job2)
	must.Eq(t, []string{"j.work[3]"}, names(h.placed()))
}

func TestCountDecrease_StopsHighestIndexes(t *testing.T) {
	h := newHarness(t)
	h.addNodes(3, nil)
	job := mockJob("web", structs.JobTypeService, 5)
	h.State.upsertJob(job)
	h.run(job)
	must.Len(t, 5, h.liveAllocs(job))

	job2 := *job
	tg := *job.TaskGroups[0]
	tg.Count = 2
	job2.TaskGroups = []*structs.TaskGroup{&tg}
	job2.Version++
	h.State.upsertJob(&job2)
	h.Plans = nil
	h.run(&job2)
	must.Eq(t, []string{"web.work[2]", "web.work[3]", "web.work[4]"}, names(h.stopped()))
	for _, a := range h.stopped() {
		must.Eq(t, descNotNeeded, a.DesiredDescription)
	}
	must.Eq(t, []string{"web.work[0]", "web.work[1]"}, names(h.liveAllocs(job)))
}

func TestJobStop_StopsAll(t *testing.T) {
	for _, purge := range []bool{false, true} {
		t.Run(map[bool]string{false: "stop", true: "purge"}[purge], func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(2, nil)
			job := mockJob("j", structs.JobTypeBatch, 4)
			h.State.upsertJob(job)
			h.run(job)
			if purge {
				delete(h.State.jobs, job.NamespacedID())
			} else {
				stopped := *job
				stopped.Stop = true
				h.State.upsertJob(&stopped)
			}
			h.Plans = nil
			e := mockEval(job)
			e.TriggeredBy = structs.EvalTriggerJobDeregister
			must.NoError(t, h.Process(job.Type, e))
			must.Len(t, 4, h.stopped())
			must.SliceEmpty(t, h.placed())
			must.SliceEmpty(t, h.liveAllocs(job))
			must.Eq(t, structs.EvalStatusComplete, h.lastEval().Status)
		})
	}
}

func TestUpdate_InPlaceVersusDestructive(t *testing.T) {
	mrd := func(d time.Duration) *time.Duration { return &d }
	cases := []struct {
		name    string
		change  func(tg *structs.TaskGroup, job *structs.Job)
		inPlace bool
	}{
		{"max_run_duration set", func(tg *structs.TaskGroup, _ *structs.Job) { tg.MaxRunDuration = mrd(time.Hour) }, true},
		{"max_run_duration changed", func(tg *structs.TaskGroup, _ *structs.Job) { tg.MaxRunDuration = mrd(2 * time.Hour) }, true},
		{"priority", func(_ *structs.TaskGroup, j *structs.Job) { j.Priority = 70 }, true},
		{"command", func(tg *structs.TaskGroup, _ *structs.Job) {
			tg.Tasks = []*structs.Task{{Name: "main", Driver: "raw_exec", Config: map[string]any{"command": "/bin/false"}, Resources: tg.Tasks[0].Resources}}
		}, false},
		{"memory", func(tg *structs.TaskGroup, _ *structs.Job) {
			tg.Tasks = []*structs.Task{{Name: "main", Driver: "raw_exec", Config: tg.Tasks[0].Config, Resources: &structs.Resources{CPU: 500, MemoryMB: 512}}}
		}, false},
		{"env", func(tg *structs.TaskGroup, _ *structs.Job) {
			tg.Tasks = []*structs.Task{{Name: "main", Driver: "raw_exec", Config: tg.Tasks[0].Config, Resources: tg.Tasks[0].Resources, Env: map[string]string{"A": "1"}}}
		}, false},
		{"constraint excludes the node", func(tg *structs.TaskGroup, _ *structs.Job) {
			tg.Constraints = []*structs.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "plan9"}}
		}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.addNodes(2, nil)
			job := mockJob("j", structs.JobTypeBatch, 2)
			job.TaskGroups[0].MaxRunDuration = mrd(time.Hour)
			h.State.upsertJob(job)
			h.run(job)
			before := h.liveAllocs(job)
			for _, a := range before {
				h.State.allocs[a.ID].ClientStatus = structs.AllocClientStatusRunning
			}

			job2 := *job
			tg := *job.TaskGroups[0]
			tc.change(&tg, &job2)
			job2.TaskGroups = []*structs.TaskGroup{&tg}
			job2.Version++
			h.State.upsertJob(&job2)
			h.Plans = nil
			h.Now = h.Now.Add(time.Minute)
			h.run(&job2)

			if tc.name == "constraint excludes the node" {
				must.Len(t, 2, h.stopped())
				must.SliceEmpty(t, h.placed())
				return
			}
			must.Len(t, 1, h.Plans)
			if tc.inPlace {
				must.SliceEmpty(t, h.stopped())
				updated := h.placed()
				must.Len(t, 2, updated)
				for i, a := range updated {
					must.Eq(t, before[i].ID, a.ID)
					must.Eq(t, before[i].NodeID, a.NodeID)
					must.Eq(t, before[i].CreateTime, a.CreateTime)
					must.Eq(t, &job2, a.Job)
				}
				after := h.liveAllocs(job)
				must.Eq(t, before[0].CreateTime, after[0].CreateTime)
				must.Eq(t, job2.Version, after[0].Job.Version)
			} else {
				must.Eq(t, names(before), names(h.stopped()))
				for _, a := range h.stopped() {
					must.Eq(t, DescUpdating, a.DesiredDescription)
				}
				placed := h.placed()
				must.Eq(t, names(before), names(placed))
				for i, a := range placed {
					must.NotEq(t, before[i].ID, a.ID)
				}
			}
		})
	}
}

func TestPlan_PartialCommitRetries(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(3, nil)
	job := mockJob("j", structs.JobTypeBatch, 6)
	h.State.upsertJob(job)
	// While the first plan is in flight another job fills node 0.
	h.BeforeApply = func(h *Harness, p *structs.Plan) {
		if len(h.Plans) != 1 {
			return
		}
		for nodeID := range p.NodeAllocation {
			h.State.upsertAlloc(&structs.Allocation{
				ID: structs.GenerateUUID(), Namespace: "default", JobID: "hog", TaskGroup: "x", Name: "hog.x[0]",
				NodeID: nodeID, DesiredStatus: "run", ClientStatus: "running",
				Resources: &structs.Resources{CPU: 3900, MemoryMB: 100},
			})
			return
		}
	}
	h.run(job)
	must.Len(t, 2, h.Plans)
	must.NotEq(t, uint64(0), h.Results[0].RefreshIndex)
	must.Len(t, 6, h.liveAllocs(job))
	must.Eq(t, structs.EvalStatusComplete, h.lastEval().Status)
	_ = nodes
}

func TestPlan_MaxAttempts(t *testing.T) {
	h := newHarness(t)
	h.addNodes(2, nil)
	job := mockJob("j", structs.JobTypeBatch, 2)
	h.State.upsertJob(job)
	// The applier keeps rejecting every node: no progress.
	h.RejectAll = true
	h.run(job)
	must.Len(t, maxPlanAttempts, h.Plans)
	e := h.lastEval()
	must.Eq(t, structs.EvalStatusFailed, e.Status)
	must.StrContains(t, e.StatusDescription, "maximum plan attempts")
	must.Len(t, 1, h.Created)
	must.Eq(t, structs.EvalTriggerMaxPlans, h.Created[0].TriggeredBy)
	must.Eq(t, structs.EvalStatusBlocked, h.Created[0].Status)
	must.Eq(t, h.Created[0].ID, e.BlockedEval)
}

func TestService_AntiAffinitySpreadsGroup(t *testing.T) {
	h := newHarness(t)
	h.addNodes(4, nil)
	job := mockJob("web", structs.JobTypeService, 4)
	h.State.upsertJob(job)
	h.run(job)
	nodes := map[string]bool{}
	for _, a := range h.placed() {
		nodes[a.NodeID] = true
	}
	must.Greater(t, 1, len(nodes))
}

func TestAffinity_PrefersMatchingNodes(t *testing.T) {
	h := newHarness(t)
	h.addNodes(6, nil)
	job := mockJob("j", structs.JobTypeBatch, 4)
	job.Affinities = []*structs.Affinity{{LTarget: "${meta.rack}", Operand: "=", RTarget: "r1", Weight: 100}}
	h.State.upsertJob(job)
	h.run(job)
	for _, a := range h.placed() {
		n, _ := h.State.NodeByID(a.NodeID)
		must.Eq(t, "r1", n.Meta["rack"])
	}
}

func TestSpread_EvenAcrossValues(t *testing.T) {
	h := newHarness(t)
	h.addNodes(4, nil) // two racks
	job := mockJob("j", structs.JobTypeBatch, 6)
	job.TaskGroups[0].Spreads = []*structs.Spread{{Attribute: "${meta.rack}", Weight: 100}}
	h.State.upsertJob(job)
	h.run(job)
	perRack := map[string]int{}
	for _, a := range h.placed() {
		n, _ := h.State.NodeByID(a.NodeID)
		perRack[n.Meta["rack"]]++
	}
	must.Eq(t, map[string]int{"r0": 3, "r1": 3}, perRack)
}

func TestCandidateLimit(t *testing.T) {
	cases := []struct {
		name        string
		feasible    int
		preferences bool
		configured  int
		want        int
	}{
		{"one node", 1, false, 0, 2},
		{"four nodes", 4, false, 0, 2},
		{"log2 of 5000", 5000, false, 0, 13},
		{"configured limit ignored without preferences", 5000, false, 50, 13},
		{"preferences take the default", 5000, true, 0, scoredWithPreferences},
		{"preferences take NodeLimitForFeasibilityChecks", 5000, true, 123, 123},
		{"a small configured limit is honoured", 5000, true, 3, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			must.Eq(t, c.want, candidateLimit(c.feasible, c.preferences, c.configured))
		})
	}
}

// A placement checks the nodes it scores, not the whole cluster; its
// metric still counts every ready node of the pool and datacenters.
func TestFeasibility_ChecksOnlyTheNodesItScores(t *testing.T) {
	h := newHarness(t)
	nodes := h.addNodes(1000, func(i int, n *structs.Node) {
		switch {
		case i%10 == 1:
			n.Datacenter = "dc2"
		case i%10 == 2:
			n.SchedulingEligibility = structs.NodeSchedulingIneligible
		}
	})
	job := mockJob("j", structs.JobTypeBatch, 1)
	h.State.upsertJob(job)
	byID := make(map[string]*structs.Node, len(nodes))
	for _, n := range nodes {
		byID[n.ID] = n
	}
	ctx := newEvalContext(h.State, &structs.Plan{}, job.ID, byID)
	st := newGroupStack(ctx, job, job.TaskGroups[0], &nodeOrder{nodes: nodes}, structs.CountReadyNodes(nodes), structs.SchedulerAlgorithmBinpack)
	best, m := st.selectNode()
	must.NotNil(t, best)
	must.Eq(t, 800, m.NodesInPool)
	must.Eq(t, candidateLimit(800, false, 0), m.NodesEvaluated)
	// The static checks visited a few more nodes than the pass scored
	// (the dc2 and ineligible ones on the way), far from all 1,000.
	must.Less(t, 30, st.stats.metric.NodesEvaluated+st.stats.notReady)

	// Asking for every feasible node completes the pass.
	must.Len(t, 800, st.feasible.all())
	must.Eq(t, 900, st.stats.metric.NodesEvaluated)
	must.Eq(t, 100, st.stats.notReady)
	must.Eq(t, 800, st.stats.metric.NodesInPool)
}

// The attempt's node order is a permutation drawn as positions are asked
// for: the same one however far and in what steps it is read, without a
// copy of the list for the few positions a small job reads, and without
// writing to the list the evaluations share.
func TestNodeOrder_PermutationDrawnOnDemand(t *testing.T) {
	for _, n := range []int{0, 1, 10, sparseDraws, sparseDraws + 1, 1000} {
		nodes := make([]*structs.Node, n)
		for i := range nodes {
			nodes[i] = &structs.Node{ID: fmt.Sprintf("n%04d", i)}
		}
		shared := slices.Clone(nodes)
		read := func(o *nodeOrder, steps ...int) []string {
			var out []string
			for _, upto := range steps {
				for len(out) < upto {
					node := o.at(len(out))
					if node == nil {
						return out
					}
					out = append(out, node.ID)
				}
			}
			return out
		}
		cfg := Config{Rand: EvalRand("eval-1")}
		all := read(newNodeOrder(nodes, cfg), n+1)
		must.Len(t, n, all)
		sorted := slices.Clone(all)
		slices.Sort(sorted)
		must.Eq(t, sorted, slices.Compact(slices.Clone(sorted)), must.Sprintf("no node twice (%d nodes)", n))
		// The same order read in steps, and again from a new draw.
		again := read(newNodeOrder(nodes, Config{Rand: EvalRand("eval-1")}), 3, sparseDraws-1, sparseDraws+2, n+1)
		must.Eq(t, all, again)
		must.Eq(t, shared, nodes, must.Sprint("the shared list is left as it was"))
		// No randomness: the list's own order.
		must.Eq(t, read(&nodeOrder{nodes: shuffledIDs(nodes)}, n+1), idsOf(shuffledIDs(nodes)))
	}

	nodes := make([]*structs.Node, 1000)
	for i := range nodes {
		nodes[i] = &structs.Node{ID: fmt.Sprintf("n%04d", i)}
	}
	o := newNodeOrder(nodes, Config{Rand: EvalRand("eval-2")})
	for i := range 12 {
		must.NotNil(t, o.at(i))
	}
	must.Nil(t, o.full, must.Sprint("a dozen positions need no copy of the list"))
	firsts := map[string]bool{}
	for i := range 20 {
		firsts[newNodeOrder(nodes, Config{Rand: EvalRand(fmt.Sprintf("eval-%d", i))}).at(0).ID] = true
	}
	must.Greater(t, 10, len(firsts), must.Sprint("evaluations start at different nodes"))
}

func shuffledIDs(nodes []*structs.Node) []*structs.Node {
	out := slices.Clone(nodes)
	slices.Reverse(out)
	return out
}

func idsOf(nodes []*structs.Node) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.ID)
	}
	return out
}
