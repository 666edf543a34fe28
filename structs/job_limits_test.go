package structs

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/shoenig/test/must"
)

func numberedKeys(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m["k"+strconv.Itoa(i)] = "v"
	}
	return m
}

func repeated[T any](n int, item func(i int) T) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = item(i)
	}
	return out
}

// Each size limit admits a job at the limit and refuses one item more
// with one message naming where, the field, the size and the limit.
func TestValidate_SizeLimits(t *testing.T) {
	constraint := func(int) *Constraint {
		return &Constraint{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}
	}
	affinity := func(int) *Affinity {
		return &Affinity{LTarget: "${node.class}", Operand: "=", RTarget: "fast", Weight: 50}
	}
	spread := func(int) *Spread { return &Spread{Attribute: "${node.datacenter}", Weight: 50} }
	task := func(j *Job) *Task { return j.TaskGroups[0].Tasks[0] }
	const (
		job   = `Job: `
		group = `Task group "g": `
		tsk   = `Task group "g", task "t": `
	)
	cases := []struct {
		name  string
		limit int
		set   func(j *Job, n int)
		want  string // with %d for the size and the limit
	}{
		{"task groups", MaxTaskGroupsPerJob, func(j *Job, n int) {
			j.TaskGroups = repeated(n, func(i int) *TaskGroup {
				tg := j.TaskGroups[0].Copy()
				tg.Name = "g" + strconv.Itoa(i)
				return tg
			})
		}, job + `%d task groups are not allowed: at most %d`},
		{"tasks", MaxTasksPerGroup, func(j *Job, n int) {
			tg := j.TaskGroups[0]
			tg.Tasks = repeated(n, func(i int) *Task {
				t := tg.Tasks[0].Copy()
				t.Name = "t" + strconv.Itoa(i)
				t.LogConfig = nil
				return t
			})
		}, group + `%d tasks are not allowed: at most %d`},
		{"job meta", MaxMapKeys, func(j *Job, n int) { j.Meta = numberedKeys(n) }, job + `%d meta keys are not allowed: at most %d`},
		{"group meta", MaxMapKeys, func(j *Job, n int) { j.TaskGroups[0].Meta = numberedKeys(n) }, group + `%d meta keys are not allowed: at most %d`},
		{"task meta", MaxMapKeys, func(j *Job, n int) { task(j).Meta = numberedKeys(n) }, tsk + `%d meta keys are not allowed: at most %d`},
		{"task env", MaxMapKeys, func(j *Job, n int) { task(j).Env = numberedKeys(n) }, tsk + `%d env keys are not allowed: at most %d`},
		{"job constraints", MaxRulesPerBlock, func(j *Job, n int) { j.Constraints = repeated(n, constraint) }, job + `%d constraints are not allowed: at most %d`},
		{"group constraints", MaxRulesPerBlock, func(j *Job, n int) { j.TaskGroups[0].Constraints = repeated(n, constraint) }, group + `%d constraints are not allowed: at most %d`},
		{"task constraints", MaxRulesPerBlock, func(j *Job, n int) { task(j).Constraints = repeated(n, constraint) }, tsk + `%d constraints are not allowed: at most %d`},
		{"job affinities", MaxRulesPerBlock, func(j *Job, n int) { j.Affinities = repeated(n, affinity) }, job + `%d affinities are not allowed: at most %d`},
		{"group affinities", MaxRulesPerBlock, func(j *Job, n int) { j.TaskGroups[0].Affinities = repeated(n, affinity) }, group + `%d affinities are not allowed: at most %d`},
		{"task affinities", MaxRulesPerBlock, func(j *Job, n int) { task(j).Affinities = repeated(n, affinity) }, tsk + `%d affinities are not allowed: at most %d`},
		{"job spreads", MaxRulesPerBlock, func(j *Job, n int) { j.Spreads = repeated(n, spread) }, job + `%d spreads are not allowed: at most %d`},
		{"group spreads", MaxRulesPerBlock, func(j *Job, n int) { j.TaskGroups[0].Spreads = repeated(n, spread) }, group + `%d spreads are not allowed: at most %d`},
		{"spread targets", MaxRulesPerBlock, func(j *Job, n int) {
			j.Spreads = []*Spread{{Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: repeated(n, func(i int) *SpreadTarget {
				return &SpreadTarget{Value: "dc" + strconv.Itoa(i)}
			})}}
		}, job + `spread "${node.datacenter}": %d targets are not allowed: at most %d`},
		{"datacenters", MaxListEntries, func(j *Job, n int) {
			j.Datacenters = repeated(n, func(i int) string { return "dc" + strconv.Itoa(i) })
		}, job + `%d datacenters are not allowed: at most %d`},
		{"periodic crons", MaxListEntries, func(j *Job, n int) {
			j.Periodic = &PeriodicConfig{Enabled: true, SpecType: PeriodicSpecCron, Specs: repeated(n, func(int) string { return "@daily" })}
		}, `Job periodic: %d crons are not allowed: at most %d`},
		{"network ports", MaxPortsPerNetwork, func(j *Job, n int) {
			j.TaskGroups[0].Networks = []*NetworkResource{{DynamicPorts: repeated(n, func(i int) Port { return Port{Label: "p" + strconv.Itoa(i)} })}}
		}, group + `%d network ports are not allowed: at most %d`},
		{"group services", MaxListEntries, func(j *Job, n int) {
			j.TaskGroups[0].Services = repeated(n, func(i int) *Service { return &Service{Name: "s" + strconv.Itoa(i), Provider: ServiceProviderNomad} })
		}, group + `%d services are not allowed: at most %d`},
		{"task services", MaxListEntries, func(j *Job, n int) {
			task(j).Services = repeated(n, func(i int) *Service { return &Service{Name: "s" + strconv.Itoa(i), Provider: ServiceProviderNomad} })
		}, tsk + `%d services are not allowed: at most %d`},
		{"volumes", MaxListEntries, func(j *Job, n int) {
			vols := make(map[string]*VolumeRequest, n)
			for i := range n {
				name := "v" + strconv.Itoa(i)
				vols[name] = &VolumeRequest{Name: name, Type: "host", Source: name}
			}
			j.TaskGroups[0].Volumes = vols
		}, group + `%d volumes are not allowed: at most %d`},
		{"volume mounts", MaxListEntries, func(j *Job, n int) {
			j.TaskGroups[0].Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: "host", Source: "data"}}
			task(j).VolumeMounts = repeated(n, func(i int) *VolumeMount {
				return &VolumeMount{Volume: "data", Destination: "/data" + strconv.Itoa(i)}
			})
		}, tsk + `%d volume mounts are not allowed: at most %d`},
		{"artifacts", MaxListEntries, func(j *Job, n int) {
			task(j).Artifacts = repeated(n, func(i int) *TaskArtifact {
				return &TaskArtifact{GetterSource: "https://example.com/f" + strconv.Itoa(i)}
			})
		}, tsk + `%d artifacts are not allowed: at most %d`},
		{"templates", MaxListEntries, func(j *Job, n int) {
			task(j).Templates = repeated(n, func(i int) *Template {
				return &Template{EmbeddedTmpl: "x", DestPath: "local/f" + strconv.Itoa(i), ChangeMode: TemplateChangeModeNoop}
			})
		}, tsk + `%d templates are not allowed: at most %d`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob(JobTypeBatch)
			tc.set(j, tc.limit)
			must.NoError(t, j.Validate())

			j = validJob(JobTypeBatch)
			tc.set(j, tc.limit+1)
			must.EqError(t, j.Validate(), fmt.Sprintf(tc.want, tc.limit+1, tc.limit))
		})
	}
}

// A list over its limit is refused as a whole: its items are not checked
// one by one, so the answer stays one line however large the job is.
func TestValidate_SizeLimitSkipsItems(t *testing.T) {
	j := validJob(JobTypeBatch)
	j.Constraints = repeated(MaxRulesPerBlock+1, func(int) *Constraint { return &Constraint{Operand: "bogus"} })
	must.EqError(t, j.Validate(), fmt.Sprintf("Job: %d constraints are not allowed: at most %d", MaxRulesPerBlock+1, MaxRulesPerBlock))
}

func TestJob_CheckMaxCount(t *testing.T) {
	withCounts := func(counts ...int) *Job {
		j := validJob(JobTypeBatch)
		j.TaskGroups = repeated(len(counts), func(i int) *TaskGroup {
			tg := j.TaskGroups[0].Copy()
			tg.Name = []string{"web", "db", "cache"}[i]
			tg.Count = counts[i]
			return tg
		})
		return j
	}
	half := math.MaxInt/2 + 1
	cases := []struct {
		name  string
		job   *Job
		limit int
		want  string // "" means accepted
	}{
		{"0 means no limit", withCounts(2147483648), 0, ""},
		{"at the limit", withCounts(JobDefaultMaxCount), JobDefaultMaxCount, ""},
		{"group above the limit", withCounts(2147483648), JobDefaultMaxCount,
			`task group "web" count 2147483648 is more than the server's job_max_count 50000`},
		{"total above the limit", withCounts(30000, 30000), JobDefaultMaxCount,
			`total count of the job's task groups 60000 is more than the server's job_max_count 50000`},
		{"a smaller limit", withCounts(11), 10,
			`task group "web" count 11 is more than the server's job_max_count 10`},
		{"every group above is named", withCounts(11, 5, 12), 10, `2 errors occurred:
	* task group "web" count 11 is more than the server's job_max_count 10
	* task group "cache" count 12 is more than the server's job_max_count 10`},
		{"a sum that would wrap is refused", withCounts(half, half, half), half,
			fmt.Sprintf(`total count of the job's task groups %d is more than the server's job_max_count %d`, math.MaxInt, half)},
		{"negative counts are Validate's", withCounts(-1, 10), 10, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.job.CheckMaxCount(tc.limit)
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.EqError(t, err, tc.want)
		})
	}
}

func TestJob_CheckPriority(t *testing.T) {
	cases := []struct {
		name     string
		typ      string
		priority int
		max      int
		want     string // "" means accepted
	}{
		{"the default limit", JobTypeService, 100, JobMaxPriority, ""},
		{"above the default limit", JobTypeBatch, 101, JobMaxPriority,
			"job priority must be between [1, 100], got 101 (the server's job_max_priority is 100)"},
		{"a raised limit", JobTypeBatch, 250, 500, ""},
		{"above a raised limit", JobTypeService, 501, 500,
			"job priority must be between [1, 500], got 501 (the server's job_max_priority is 500)"},
		{"below 1", JobTypeService, -3, 500,
			"job priority must be between [1, 500], got -3 (the server's job_max_priority is 500)"},
		{"core jobs are the server's own", JobTypeCore, CoreJobPriority, JobMaxPriority, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob(tc.typ)
			j.Priority = tc.priority
			err := j.CheckPriority(tc.max)
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.EqError(t, err, tc.want)
		})
	}
}

// nested returns a value that nests depth levels of maps and lists,
// alternating, as decoded JSON or HCL does.
func nested(depth int) any {
	var v any = "leaf"
	for i := range depth {
		if i%2 == 0 {
			v = []any{v}
		} else {
			v = map[string]any{"a": v}
		}
	}
	return v
}

// A free-form value nested past MaxValueDepth is refused: the Raft codec
// would not decode it again (found by fuzzing the job register body,
// issue 41), so a job holding one would be accepted and then fail to
// apply on every server.
func TestValidate_ValueDepth(t *testing.T) {
	cases := []struct {
		name string
		set  func(j *Job, v any)
		want string
	}{
		{"task config", func(j *Job, v any) {
			j.TaskGroups[0].Tasks[0].Config["deep"] = v
		}, `Task group "g", task "t": config nests more than 100 levels of maps and lists: at most 100 are allowed`},
		{"scaling policy", func(j *Job, v any) {
			tg := j.TaskGroups[0]
			tg.Scaling = &ScalingPolicy{Type: ScalingPolicyTypeHorizontal, Min: int64(tg.Count), Max: int64(tg.Count), Policy: map[string]any{"deep": v}}
		}, `Task group "g": scaling policy nests more than 100 levels of maps and lists: at most 100 are allowed`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// The map holding the value is one level.
			j := validJob(JobTypeBatch)
			tc.set(j, nested(MaxValueDepth-1))
			must.NoError(t, j.Validate())

			j = validJob(JobTypeBatch)
			tc.set(j, nested(MaxValueDepth))
			must.EqError(t, j.Validate(), tc.want)

			j = validJob(JobTypeBatch)
			tc.set(j, nested(5000))
			must.EqError(t, j.Validate(), tc.want)
		})
	}
}

func TestValueDepth_CountsLevels(t *testing.T) {
	must.Eq(t, 0, valueDepth("x", 10))
	must.Eq(t, 1, valueDepth(map[string]any{}, 10))
	must.Eq(t, 2, valueDepth([]map[string]any{{"a": 1}}, 10))
	must.Eq(t, 3, valueDepth(map[string]any{"a": 1, "b": []any{[]any{}}}, 10))
	must.Eq(t, 11, valueDepth(nested(5000), 10))
}
