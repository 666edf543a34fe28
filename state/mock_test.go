package state

import (
	"bytes"
	"testing"
	"time"

	"github.com/hashicorp/go-uuid"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// Builders of test objects. Each call returns fresh objects: the store owns
// what it is given, so a test never hands the same object in twice.

func newID() string {
	id, err := uuid.GenerateUUID()
	if err != nil {
		panic(err)
	}
	return id
}

func testStore(t testing.TB) *StateStore {
	t.Helper()
	s, err := NewStateStore()
	must.NoError(t, err)
	return s
}

// mockJob returns a service job with one group "web" of two tasks' worth
// of resources.
func mockJob(id string) *structs.Job {
	return &structs.Job{
		Region:      structs.DefaultRegion,
		Namespace:   structs.DefaultNamespace,
		ID:          id,
		Name:        id,
		Type:        structs.JobTypeService,
		Priority:    structs.JobDefaultPriority,
		Datacenters: []string{"dc1"},
		NodePool:    structs.DefaultNodePool,
		TaskGroups: []*structs.TaskGroup{{
			Name:  "web",
			Count: 2,
			Tasks: []*structs.Task{{
				Name:   "server",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/sleep", "args": []any{"60"}},
				Resources: &structs.Resources{
					CPU:      100,
					MemoryMB: 64,
				},
			}},
			RestartPolicy: &structs.RestartPolicy{Attempts: 2, Interval: time.Minute, Delay: time.Second, Mode: structs.RestartPolicyModeFail},
		}},
	}
}

func mockBatchJob(id string) *structs.Job {
	j := mockJob(id)
	j.Type = structs.JobTypeBatch
	d := 10 * time.Minute
	j.TaskGroups[0].MaxRunDuration = &d
	return j
}

func mockPeriodicJob(id string) *structs.Job {
	j := mockBatchJob(id)
	j.Periodic = &structs.PeriodicConfig{Enabled: true, Spec: "*/5 * * * *", SpecType: structs.PeriodicSpecCron}
	return j
}

func mockParameterizedJob(id string) *structs.Job {
	j := mockBatchJob(id)
	j.ParameterizedJob = &structs.ParameterizedJobConfig{Payload: structs.DispatchPayloadOptional}
	return j
}

// mockChildJob returns a batch child of parent, as a periodic launch or a
// dispatch creates it.
func mockChildJob(parent *structs.Job, suffix string) *structs.Job {
	j := mockBatchJob(parent.ID + "/" + suffix)
	j.ParentID = parent.ID
	return j
}

func mockEval(job *structs.Job, status string) *structs.Evaluation {
	return &structs.Evaluation{
		ID:          newID(),
		Namespace:   job.Namespace,
		Priority:    job.Priority,
		Type:        job.Type,
		TriggeredBy: structs.EvalTriggerJobRegister,
		JobID:       job.ID,
		Status:      status,
		CreateTime:  time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
		ModifyTime:  time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	}
}

func mockAlloc(job *structs.Job, nodeID, evalID, clientStatus string) *structs.Allocation {
	return &structs.Allocation{
		ID:            newID(),
		Namespace:     job.Namespace,
		EvalID:        evalID,
		Name:          job.ID + ".web[0]",
		NodeID:        nodeID,
		JobID:         job.ID,
		Job:           job,
		TaskGroup:     "web",
		DesiredStatus: structs.AllocDesiredStatusRun,
		ClientStatus:  clientStatus,
		AllocatedResources: &structs.AllocatedResources{
			Tasks: map[string]*structs.AllocatedTaskResources{
				"server": {Cpu: structs.AllocatedCpuResources{CpuShares: 100}, Memory: structs.AllocatedMemoryResources{MemoryMB: 64}},
			},
			Shared: structs.AllocatedSharedResources{DiskMB: 150},
		},
		CreateTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
		ModifyTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC).UnixNano(),
	}
}

func mockNode() *structs.Node {
	return &structs.Node{
		ID:         newID(),
		SecretID:   newID(),
		Datacenter: "dc1",
		Name:       "node-1",
		HTTPAddr:   "127.0.0.1:4646",
		Attributes: map[string]string{"kernel.name": "linux", "driver.raw_exec": "1"},
		NodeClass:  "",
		NodeResources: &structs.NodeResources{
			Cpu:    structs.NodeCpuResources{CpuShares: 4000, TotalCpuCores: 4},
			Memory: structs.NodeMemoryResources{MemoryMB: 8192},
			Disk:   structs.NodeDiskResources{DiskMB: 100 << 10},
		},
		Drivers: map[string]*structs.DriverInfo{
			"raw_exec": {Detected: true, Healthy: true, UpdateTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)},
		},
		Status: structs.NodeStatusReady,
	}
}

// clientUpdate is what a client reports for an alloc.
func clientUpdate(alloc *structs.Allocation, status string) *structs.Allocation {
	state := structs.TaskStateRunning
	if status != structs.AllocClientStatusRunning && status != structs.AllocClientStatusPending {
		state = structs.TaskStateDead
	}
	return &structs.Allocation{
		ID:           alloc.ID,
		ClientStatus: status,
		TaskStates: map[string]*structs.TaskState{
			"server": {State: state, Failed: status == structs.AllocClientStatusFailed},
		},
		ModifyTime: time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC).UnixNano(),
	}
}

func jobStatus(t *testing.T, s *StateStore, ns, id string) string {
	t.Helper()
	job, err := s.JobByID(nil, ns, id)
	must.NoError(t, err)
	must.NotNil(t, job)
	return job.Status
}

func groupSummary(t *testing.T, s *StateStore, job *structs.Job, group string) structs.TaskGroupSummary {
	t.Helper()
	summary, err := s.JobSummaryByID(nil, job.Namespace, job.ID)
	must.NoError(t, err)
	must.NotNil(t, summary)
	tg, ok := summary.Summary[group]
	must.True(t, ok, must.Sprintf("no summary of group %q", group))
	return tg
}

// dumpState returns every row of every table, keyed by table name,
// leaving out the built-in namespace and node pools every store has.
func dumpState(t testing.TB, r *reader) map[string][]any {
	t.Helper()
	txn := r.db.Txn(false)
	out := make(map[string][]any)
	for _, tbl := range snapshotTables {
		iter, err := txn.Get(tbl.table, "id")
		must.NoError(t, err)
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			if isBuiltinRow(raw) {
				continue
			}
			out[tbl.table] = append(out[tbl.table], raw)
		}
	}
	return out
}

// isBuiltinRow reports whether raw is the unchanged default namespace or
// a built-in node pool.
func isBuiltinRow(raw any) bool {
	switch v := raw.(type) {
	case *structs.Namespace:
		return v.Name == structs.DefaultNamespace && v.ModifyIndex == 1
	case *structs.NodePool:
		return structs.IsBuiltinNodePool(v.Name)
	}
	return false
}

// indexTable returns the index table as a map.
func indexTable(t testing.TB, s *StateStore) map[string]uint64 {
	t.Helper()
	out := make(map[string]uint64)
	for _, tbl := range snapshotTables {
		v, err := s.Index(tbl.table)
		must.NoError(t, err)
		if v != 0 {
			out[tbl.table] = v
		}
	}
	return out
}

// restoreCopy writes a snapshot of s and restores it into a new store.
func restoreCopy(t testing.TB, s *StateStore) *StateStore {
	t.Helper()
	snap, err := s.Snapshot()
	must.NoError(t, err)
	var buf bytes.Buffer
	_, err = snap.WriteTo(&buf)
	must.NoError(t, err)
	restored, err := RestoreFrom(&buf)
	must.NoError(t, err)
	return restored
}
