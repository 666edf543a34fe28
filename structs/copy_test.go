package structs

import (
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/nomadq/nomadq/internal/deepcopytest"
	"github.com/shoenig/test/must"
)

// A copy keeps nil collections nil and empty ones empty: the encodings
// tell them apart (null against {} or []), and so do readers of the
// state store that compare a job with its copy.
func TestJobCopy_NilAndEmpty(t *testing.T) {
	orig := testJob()
	orig.Meta, orig.Datacenters, orig.Payload = nil, nil, nil
	orig.TaskGroups[0].Meta = map[string]string{}
	orig.TaskGroups[0].Tasks[0].Env = nil
	orig.TaskGroups[0].Tasks[0].Meta = map[string]string{}
	c := orig.Copy()
	must.Nil(t, c.Meta)
	must.Nil(t, c.Datacenters)
	must.Nil(t, c.Payload)
	must.Nil(t, c.TaskGroups[0].Tasks[0].Env)
	must.NotNil(t, c.TaskGroups[0].Meta)
	must.MapEmpty(t, c.TaskGroups[0].Meta)
	must.NotNil(t, c.TaskGroups[0].Tasks[0].Meta)

	orig.Datacenters = []string{}
	must.NotNil(t, orig.Copy().Datacenters)
}

func TestJobCopy_Independent(t *testing.T) {
	orig := testJob()
	orig.Periodic = &PeriodicConfig{Enabled: true, Specs: []string{"@daily"}}
	orig.ParameterizedJob = &ParameterizedJobConfig{MetaRequired: []string{"a"}}
	orig.Payload = []byte("payload")
	want := testJob()
	want.Periodic = &PeriodicConfig{Enabled: true, Specs: []string{"@daily"}}
	want.ParameterizedJob = &ParameterizedJobConfig{MetaRequired: []string{"a"}}
	want.Payload = []byte("payload")

	c := orig.Copy()
	must.Eq(t, orig, c)

	c.Datacenters[0] = "changed"
	c.Meta["owner"] = "changed"
	c.Constraints[0].RTarget = "changed"
	c.Affinities[0].Weight = 1
	c.Spreads[0].SpreadTarget[0].Percent = 1
	c.Periodic.Specs[0] = "changed"
	c.ParameterizedJob.MetaRequired[0] = "changed"
	c.Payload[0] = 'X'
	c.Reschedule.Attempts = 99
	c.Migrate.MaxParallel = 99

	tg := c.TaskGroups[0]
	tg.Name = "changed"
	tg.Constraints[0].LTarget = "changed"
	tg.RestartPolicy.Attempts = 99
	tg.ReschedulePolicy.Delay = time.Hour
	tg.EphemeralDisk.SizeMB = 1
	tg.Update.Canary = 9
	tg.Migrate.HealthCheck = "changed"
	tg.Networks[0].DynamicPorts[0].Label = "changed"
	tg.Networks[0].DNS.Servers[0] = "changed"
	tg.Networks[0].CNI.Args["IgnoreUnknown"] = "changed"
	tg.Services[0].Tags[0] = "changed"
	tg.Services[0].Meta["version"] = "changed"
	tg.Meta["group"] = "changed"
	*tg.ShutdownDelay = time.Hour

	task := tg.Tasks[0]
	task.Config["args"].([]any)[0] = "changed"
	task.Config["port_map"].([]any)[0].(map[string]any)["http"] = int64(1)
	task.Config["mount"].(map[string]any)["options"].(map[string]any)["ratio"] = 0.1
	task.Env["MODE"] = "changed"
	task.Meta["task"] = "changed"
	task.Resources.CPU = 1
	task.RestartPolicy.Mode = "changed"
	task.LogConfig.MaxFiles = 1
	task.Artifacts[0].GetterOptions["checksum"] = "changed"
	task.Templates[0].Wait.Min = nil
	*task.Templates[0].Uid = 0
	task.Templates[1].ChangeScript.Args[0] = "changed"
	task.Services[0].CanaryMeta["canary"] = "changed"
	task.Constraints[0].Operand = "changed"
	tg.Tasks[1].Lifecycle.Hook = "changed"
	tg.Tasks = append(tg.Tasks[:1], tg.Tasks[2:]...)

	must.Eq(t, want, orig)
	must.Nil(t, (*Job)(nil).Copy())
}

func TestAllocationCopy_Independent(t *testing.T) {
	j := testBatchJob()
	orig := testAlloc(j)
	want := testAlloc(testBatchJob())

	c := orig.Copy()
	must.Eq(t, orig, c)
	// The job is shared on purpose.
	must.True(t, c.Job == orig.Job)

	c.Resources.CPU = 1
	c.TaskResources["main"].Networks[0].DynamicPorts[0].Value = 1
	c.AllocatedResources.Tasks["main"].Cpu.ReservedCores[0] = 9
	c.AllocatedResources.Shared.DiskMB = 1
	c.Metrics.Scores["binpack"] = 0
	*c.DesiredTransition.Reschedule = false
	c.TaskStates["main"].State = TaskStateDead
	c.TaskStates["main"].Events[1].Details["pid"] = "1"
	c.TaskStates["main"].Events[0].Type = "changed"
	c.RescheduleTracker.Events[0].PrevNodeID = "changed"
	delete(c.TaskStates, "prepare")

	must.Eq(t, want, orig)
	must.Nil(t, (*Allocation)(nil).Copy())
}

func TestTaskStateCopy(t *testing.T) {
	orig := testAlloc(testBatchJob()).TaskStates["main"]
	c := orig.Copy()
	must.Eq(t, orig, c)
	c.Events = append(c.Events, &TaskEvent{Type: TaskKilling})
	c.Events[0].DisplayMessage = "changed"
	must.Len(t, 2, orig.Events)
	must.Eq(t, "Task received by client", orig.Events[0].DisplayMessage)
	must.Nil(t, (*TaskState)(nil).Copy())
}

func TestSpecChanged(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(j *Job)
		changed bool
	}{
		{"identical", func(*Job) {}, false},
		{"server fields only", func(j *Job) {
			j.Status = JobStatusRunning
			j.StatusDescription = "x"
			j.Stable = true
			j.Version = 4
			j.SubmitTime = 12345
			j.CreateIndex, j.ModifyIndex, j.JobModifyIndex = 1, 2, 3
		}, false},
		{"config numbers of another Go type", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Config["port_map"] = []any{map[string]any{"http": 8080, "admin": float64(9000)}}
			j.TaskGroups[0].Tasks[0].Config["args"] = []string{"-listen", ":8080", "-v"}
		}, false},
		{"config value", func(j *Job) { j.TaskGroups[0].Tasks[0].Config["command"] = "/bin/other" }, true},
		{"config number", func(j *Job) {
			j.TaskGroups[0].Tasks[0].Config["port_map"] = []any{map[string]any{"http": 8081, "admin": 9000}}
		}, true},
		{"config key added", func(j *Job) { j.TaskGroups[0].Tasks[0].Config["extra"] = true }, true},
		{"max_run_duration", func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(time.Minute) }, true},
		{"count", func(j *Job) { j.TaskGroups[0].Count++ }, true},
		{"meta", func(j *Job) { j.Meta["owner"] = "b" }, true},
		{"stop", func(j *Job) { j.Stop = true }, true},
		{"priority", func(j *Job) { j.Priority++ }, true},
		{"task env", func(j *Job) { j.TaskGroups[0].Tasks[1].Env = map[string]string{"A": "1"} }, true},
		{"group added", func(j *Job) {
			g := j.TaskGroups[0].Copy()
			g.Name = "other"
			j.TaskGroups = append(j.TaskGroups, g)
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := testJob()
			b := testJob()
			tc.mutate(b)
			must.Eq(t, tc.changed, a.SpecChanged(b))
			must.Eq(t, tc.changed, b.SpecChanged(a))
		})
	}

	// A stored job has been through msgpack; re-registering the same spec
	// is not a change.
	stored := testJob()
	buf, err := Encode(JobRegisterRequestType, stored)
	must.NoError(t, err)
	var decoded Job
	must.NoError(t, Decode(buf[1:], &decoded))
	decoded.Version, decoded.ModifyIndex = 3, 77
	must.False(t, testJob().SpecChanged(&decoded))

	must.False(t, (*Job)(nil).SpecChanged(nil))
	must.True(t, testJob().SpecChanged(nil))
}

func TestAllocName(t *testing.T) {
	must.Eq(t, "report.build[0]", AllocName("report", "build", 0))
	must.Eq(t, "a.b.c[12]", AllocName("a.b", "c", 12))
	a := &Allocation{Name: AllocName("web", "frontend", 7)}
	must.Eq(t, uint(7), a.Index())
}

func TestGenerateUUID(t *testing.T) {
	re := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	seen := make(map[string]bool)
	for range 1000 {
		id := GenerateUUID()
		must.RegexMatch(t, re, id)
		must.False(t, seen[id])
		seen[id] = true
	}
}

// TestCopy_EveryField fills every field of each type that has a Copy
// method with a non-zero value by reflection, copies it and checks that
// the copy is deep-equal and shares no pointer, slice or map with the
// original, so a field added later and missed by Copy fails here.
func TestCopy_EveryField(t *testing.T) {
	// Shared on purpose: jobs in the state store are immutable and an
	// allocation points to its job version's (see Allocation.Copy).
	shared := map[string]bool{"Allocation.Job": true}
	cases := []struct {
		name string
		copy func() (orig, copied any)
	}{
		{"Job", copyFilled((*Job).Copy)},
		{"TaskGroup", copyFilled((*TaskGroup).Copy)},
		{"Task", copyFilled((*Task).Copy)},
		{"Template", copyFilled((*Template).Copy)},
		{"Resources", copyFilled((*Resources).Copy)},
		{"NetworkResource", copyFilled((*NetworkResource).Copy)},
		{"Service", copyFilled((*Service).Copy)},
		{"Allocation", copyFilled((*Allocation).Copy)},
		{"AllocatedResources", copyFilled((*AllocatedResources).Copy)},
		{"TaskState", copyFilled((*TaskState).Copy)},
		{"Evaluation", copyFilled((*Evaluation).Copy)},
		{"AllocMetric", copyFilled((*AllocMetric).Copy)},
		{"Node", copyFilled((*Node).Copy)},
		{"JobSummary", copyFilled((*JobSummary).Copy)},
		{"BatchQueueEntry", copyFilled((*BatchQueueEntry).Copy)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			orig, copied := tc.copy()
			must.Eq(t, orig, copied)
			var sharedPaths []string
			deepcopytest.FindShared(tc.name, reflect.ValueOf(orig).Elem(), reflect.ValueOf(copied).Elem(), shared, &sharedPaths)
			must.SliceEmpty(t, sharedPaths, must.Sprintf("the copy shares memory at %v", sharedPaths))
		})
	}
}

// copyFilled returns a case that fills a T and copies it with copyFn.
func copyFilled[T any](copyFn func(*T) *T) func() (any, any) {
	return func() (any, any) {
		orig := new(T)
		deepcopytest.Fill(reflect.ValueOf(orig).Elem(), map[reflect.Type]bool{})
		return orig, copyFn(orig)
	}
}
