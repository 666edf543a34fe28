package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// validJob is the smallest valid job of the type, canonicalized.
func validJob(typ string) *Job {
	j := minimalStructJob(typ)
	j.Canonicalize()
	return j
}

func TestValidate_SingleErrors(t *testing.T) {
	cases := []struct {
		name   string
		typ    string // default batch
		mutate func(j *Job)
		err    string
	}{
		{
			name:   "missing id",
			mutate: func(j *Job) { j.ID = "" },
			err:    `Job id must not be empty`,
		},
		{
			name:   "id with space",
			mutate: func(j *Job) { j.ID = "my job" },
			err:    `Job id "my job" is not allowed: must not contain spaces`,
		},
		{
			name:   "id with null byte",
			mutate: func(j *Job) { j.ID = "my\x00job" },
			err:    `Job id "my\x00job" is not allowed: must not contain null bytes`,
		},
		{
			name:   "empty name",
			mutate: func(j *Job) { j.Name = "" },
			err:    `Job name must not be empty`,
		},
		{
			name:   "unknown type",
			mutate: func(j *Job) { j.Type = "cron" },
			err:    `Job type "cron" is not allowed: must be one of service, batch, system, sysbatch`,
		},
		{
			name:   "priority too low",
			mutate: func(j *Job) { j.Priority = 0 },
			err:    `Job priority 0 is not allowed: must be at least 1`,
		},
		{
			// Above job_max_priority is the server's to refuse
			// (CheckPriority); this is above any job_max_priority.
			name:   "priority too high",
			mutate: func(j *Job) { j.Priority = 32767 },
			err:    `Job priority 32767 is not allowed: must be at most 32766, the highest job_max_priority a server takes`,
		},
		{
			name:   "no datacenters",
			mutate: func(j *Job) { j.Datacenters = nil },
			err:    `Job datacenters must list at least one datacenter, got none`,
		},
		{
			name:   "no task groups",
			mutate: func(j *Job) { j.TaskGroups = nil },
			err:    `Job must have at least one task group, got none`,
		},
		{
			name:   "duplicate group",
			mutate: func(j *Job) { j.TaskGroups = append(j.TaskGroups, j.TaskGroups[0].Copy()) },
			err:    `Task group "g" is defined 2 times: group names must be unique`,
		},
		{
			name:   "negative count",
			mutate: func(j *Job) { j.TaskGroups[0].Count = -1 },
			err:    `Task group "g": count -1 is not allowed: must be zero or more`,
		},
		{
			name:   "system count above one",
			typ:    JobTypeSystem,
			mutate: func(j *Job) { j.TaskGroups[0].Count = 3 },
			err:    `Task group "g": count 3 is not allowed for system jobs: must be 0 or 1 (one allocation runs per node)`,
		},
		{
			name:   "group without tasks",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks = nil },
			err:    `Task group "g" has no tasks: at least one task is required`,
		},
		{
			name: "duplicate task",
			mutate: func(j *Job) {
				tg := j.TaskGroups[0]
				tg.Tasks = append(tg.Tasks, tg.Tasks[0].Copy())
			},
			err: `Task group "g": task "t" is defined 2 times: task names must be unique`,
		},
		{
			name:   "task without driver",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Driver = "" },
			err:    `Task group "g", task "t": driver must not be empty`,
		},
		{
			name:   "cpu zero",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Resources.CPU = 0 },
			err:    `Task group "g", task "t": resources cpu 0 is not allowed: must be at least 1 MHz, or set cores`,
		},
		{
			name: "cores instead of cpu",
			mutate: func(j *Job) {
				r := j.TaskGroups[0].Tasks[0].Resources
				r.CPU, r.Cores = 0, 2
			},
		},
		{
			name:   "memory too small",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMB = 5 },
			err:    `Task group "g", task "t": resources memory 5 is not allowed: must be at least 10 MB`,
		},
		{
			name:   "memory_max below memory",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = 100 },
			err:    `Task group "g", task "t": resources memory_max 100 is not allowed: must be 0 or at least memory 300`,
		},
		{
			name: "restart mode",
			mutate: func(j *Job) {
				j.TaskGroups[0].RestartPolicy.Mode = "retry"
				j.TaskGroups[0].Tasks[0].RestartPolicy.Mode = "retry"
			},
			err: `Task group "g": restart mode "retry" is not allowed: must be "delay" or "fail"`,
		},
		{
			name: "restart attempts negative",
			mutate: func(j *Job) {
				j.TaskGroups[0].RestartPolicy.Attempts = -1
				j.TaskGroups[0].Tasks[0].RestartPolicy.Attempts = -1
			},
			err: `Task group "g": restart attempts -1 is not allowed: must be zero or more`,
		},
		{
			name:   "task restart differing from group",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].RestartPolicy.Mode = "never" },
			err:    `Task group "g", task "t": restart mode "never" is not allowed: must be "delay" or "fail"`,
		},
		{
			name:   "reschedule delay function",
			mutate: func(j *Job) { j.TaskGroups[0].ReschedulePolicy.DelayFunction = "linear" },
			err:    `Task group "g": reschedule delay_function "linear" is not allowed: must be one of constant, exponential, fibonacci`,
		},
		{
			name:   "reschedule on system job",
			typ:    JobTypeSystem,
			mutate: func(j *Job) { j.TaskGroups[0].ReschedulePolicy = &ReschedulePolicy{Attempts: 2} },
			err:    `Task group "g": reschedule is not allowed for system jobs: system allocations are never rescheduled`,
		},
		{
			name:   "lifecycle hook",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].Lifecycle = &TaskLifecycle{Hook: "prerun"} },
			err:    `Task group "g", task "t": lifecycle hook "prerun" is not allowed: must be one of prestart, poststart, poststop`,
		},
		{
			name: "constraint operand",
			mutate: func(j *Job) {
				j.Constraints = []*Constraint{{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "like"}}
			},
			err: `Job: constraint "${attr.kernel.name} like linux": operator "like" is not allowed: must be one of ` +
				`=, ==, is, !=, not, <, <=, >, >=, regexp, version, semver, set_contains, set_contains_all, set_contains_any, ` +
				`distinct_hosts, distinct_property, is_set, is_not_set`,
		},
		{
			name: "constraint regexp",
			mutate: func(j *Job) {
				j.TaskGroups[0].Constraints = []*Constraint{{LTarget: "${meta.rack}", RTarget: "r[0-", Operand: "regexp"}}
			},
			err: `Task group "g": constraint "${meta.rack} regexp r[0-": value "r[0-" is not a valid regular expression: ` +
				"error parsing regexp: missing closing ]: `[0-`",
		},
		{
			name: "constraint version",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Constraints = []*Constraint{{LTarget: "${attr.nomad.version}", RTarget: ">= 1.x", Operand: "version"}}
			},
			err: `Task group "g", task "t": constraint "${attr.nomad.version} version >= 1.x": value ">= 1.x" is not a valid version constraint: malformed constraint: >= 1.x`,
		},
		{
			name: "constraint semver",
			mutate: func(j *Job) {
				j.Constraints = []*Constraint{{LTarget: "${attr.nomad.version}", RTarget: "~> 1.2", Operand: "semver"}}
			},
			err: `Job: constraint "${attr.nomad.version} semver ~> 1.2": value "~> 1.2" is not a valid semver constraint: malformed constraint: ~> 1.2`,
		},
		{
			name: "distinct_hosts on a task",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Constraints = []*Constraint{{Operand: "distinct_hosts"}}
			},
			err: `Task group "g", task "t": constraint "distinct_hosts": operator "distinct_hosts" is not allowed on a task: use it on the job or group`,
		},
		{
			name: "affinity weight",
			mutate: func(j *Job) {
				j.Affinities = []*Affinity{{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: 120}}
			},
			err: `Job: affinity "${node.class} = fast": weight 120 is not allowed: must be between -100 and 100 and not 0`,
		},
		{
			name: "spread percentages",
			mutate: func(j *Job) {
				j.Spreads = []*Spread{{Attribute: "${node.datacenter}", Weight: 50, SpreadTarget: []*SpreadTarget{{Value: "a", Percent: 70}, {Value: "b", Percent: 40}}}}
			},
			err: `Job: spread "${node.datacenter}" target percentages add up to 110: must be at most 100`,
		},
		{
			name:   "periodic without spec",
			mutate: func(j *Job) { j.Periodic = &PeriodicConfig{Enabled: true, SpecType: PeriodicSpecCron} },
			err:    `Job periodic must set cron or crons when enabled, got neither`,
		},
		{
			name: "periodic with bad cron",
			mutate: func(j *Job) {
				j.Periodic = &PeriodicConfig{Enabled: true, SpecType: PeriodicSpecCron, Spec: "every day"}
			},
			err: `Job periodic cron "every day" is not a valid cron expression: missing field(s)`,
		},
		{
			name:   "disabled periodic without spec",
			mutate: func(j *Job) { j.Periodic = &PeriodicConfig{SpecType: PeriodicSpecCron} },
		},
		{
			name:   "periodic on a service job",
			typ:    JobTypeService,
			mutate: func(j *Job) { j.Periodic = &PeriodicConfig{Enabled: true, SpecType: PeriodicSpecCron, Spec: "@hourly"} },
			err:    `Job periodic is only allowed for batch and sysbatch jobs, not service jobs`,
		},
		{
			name:   "parameterized on a system job",
			typ:    JobTypeSystem,
			mutate: func(j *Job) { j.ParameterizedJob = &ParameterizedJobConfig{Payload: DispatchPayloadOptional} },
			err:    `Job parameterized is only allowed for batch and sysbatch jobs, not system jobs`,
		},
		{
			name: "periodic and parameterized",
			mutate: func(j *Job) {
				j.Periodic = &PeriodicConfig{Enabled: true, SpecType: PeriodicSpecCron, Spec: "@hourly"}
				j.ParameterizedJob = &ParameterizedJobConfig{Payload: DispatchPayloadOptional}
			},
			err: `Job cannot be both periodic and parameterized: a job is either launched on a schedule or dispatched`,
		},
		{
			name:   "parameterized payload",
			mutate: func(j *Job) { j.ParameterizedJob = &ParameterizedJobConfig{Payload: "maybe"} },
			err:    `Job parameterized payload "maybe" is not allowed: must be one of optional, required, forbidden`,
		},
		{
			name:   "kill_timeout negative",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].KillTimeout = -time.Second },
			err:    `Task group "g", task "t": kill_timeout -1s is not allowed: must not be negative`,
		},
		{
			name:   "ephemeral disk too small",
			mutate: func(j *Job) { j.TaskGroups[0].EphemeralDisk.SizeMB = 5 },
			err:    `Task group "g": ephemeral_disk size 5 is not allowed: must be at least 10 MB`,
		},
		{
			name:   "logs larger than disk",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].LogConfig.MaxFiles = 40 },
			err:    `Task group "g", task "t": log storage of 400 MB (max_files x max_file_size) is not allowed: must be less than ephemeral_disk size 300 MB`,
		},
		{
			name:   "logs as large as the disk",
			mutate: func(j *Job) { j.TaskGroups[0].Tasks[0].LogConfig.MaxFiles = 30 },
			err:    `Task group "g", task "t": log storage of 300 MB (max_files x max_file_size) is not allowed: must be less than ephemeral_disk size 300 MB`,
		},
		{
			// Nomad holds each task's logs to the disk on their own: two
			// tasks of 200 MB each fit a 300 MB disk.
			name: "logs of two tasks together larger than the disk",
			mutate: func(j *Job) {
				tg := j.TaskGroups[0]
				tg.Tasks[0].LogConfig.MaxFiles = 20
				u := tg.Tasks[0].Copy()
				u.Name = "u"
				tg.Tasks = append(tg.Tasks, u)
			},
		},
		{
			name: "disabled logs larger than the disk",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].LogConfig = &LogConfig{MaxFiles: 40, MaxFileSizeMB: 10, Disabled: true}
			},
		},
		{
			name: "system job with canaries",
			typ:  JobTypeSystem,
			mutate: func(j *Job) {
				j.TaskGroups[0].Update.Canary = 1
				j.TaskGroups[0].Update.AutoPromote = true
			},
		},
		{
			name: "artifact into the shared alloc dir",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{
					{GetterSource: "https://x", GetterMode: "any", RelativeDest: "../alloc/data"},
					{GetterSource: "https://y", GetterMode: "any", RelativeDest: "/local/y"},
				}
			},
		},
		{
			name: "two leaders",
			mutate: func(j *Job) {
				tg := j.TaskGroups[0]
				tg.Tasks[0].Leader = true
				u := tg.Tasks[0].Copy()
				u.Name = "u"
				tg.Tasks = append(tg.Tasks, u)
			},
			err: `Task group "g": tasks "t", "u" are all marked leader: at most one task may be the leader`,
		},
		{
			name: "duplicate port label",
			mutate: func(j *Job) {
				j.TaskGroups[0].Networks = []*NetworkResource{{DynamicPorts: []Port{{Label: "http"}, {Label: "http"}}}}
			},
			err: `Task group "g": port "http" is defined more than once: port labels must be unique in a group`,
		},
		{
			name: "template change mode",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "reload"}}
			},
			err: `Task group "g", task "t": template 1 change_mode "reload" is not allowed: must be one of noop, restart, signal, script`,
		},
		{
			name: "artifact escapes",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{{GetterSource: "https://x", GetterMode: "any", RelativeDest: "../../etc"}}
			},
			err: `Task group "g", task "t": artifact 1 destination "../../etc" is not allowed: must stay inside the allocation directory (the task directory, or ../alloc for the shared one)`,
		},
		{
			name: "artifact escapes through the alloc dir",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{{GetterSource: "https://x", GetterMode: "any", RelativeDest: "../alloc/../../x"}}
			},
			err: `Task group "g", task "t": artifact 1 destination "../alloc/../../x" is not allowed: must stay inside the allocation directory (the task directory, or ../alloc for the shared one)`,
		},
		{
			name: "template bad perms",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "noop", Perms: "rw-r--r--"}}
			},
			err: `Task group "g", task "t": template 1 perms "rw-r--r--" is not allowed: must be an octal file mode such as "0644"`,
		},
		{
			name: "template perms beyond file mode bits",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "noop", Perms: "17777"}}
			},
			err: `Task group "g", task "t": template 1 perms "17777" is not allowed: must be an octal file mode such as "0644"`,
		},
		{
			name: "template destination escapes",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "x", DestPath: "../other/x", ChangeMode: "noop"}}
			},
			err: `Task group "g", task "t": template 1 destination "../other/x" is not allowed: must stay inside the task directory`,
		},
		{
			name: "template source escapes",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{SourcePath: "../../etc/passwd", DestPath: "local/x", ChangeMode: "noop"}}
			},
			err: `Task group "g", task "t": template 1 source "../../etc/passwd" is not allowed: must stay inside the task directory`,
		},
		{
			name: "template source and data",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{SourcePath: "local/in.tpl", EmbeddedTmpl: "x", DestPath: "local/x", ChangeMode: "noop"}}
			},
			err: `Task group "g", task "t": template 1 sets both source "local/in.tpl" and data: set one of them`,
		},
		{
			name: "template every accepted field",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Templates = []*Template{{EmbeddedTmpl: "{{ env \"X\" }}", DestPath: "local/x", ChangeMode: "script",
					ChangeScript: &ChangeScript{Command: "/bin/true"}, Perms: "0600", Splay: time.Second, LeftDelim: "[[", RightDelim: "]]",
					ErrMissingKey: true, Once: true}}
			},
		},
		{
			name: "artifact s3 source",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{{GetterSource: "s3::https://s3.amazonaws.com/bucket/x.tgz", GetterMode: "any", RelativeDest: "local/"}}
			},
			err: `Task group "g", task "t": artifact 1 source "s3::https://s3.amazonaws.com/bucket/x.tgz" is not supported by nomadq: "s3" sources cannot be fetched; allowed are http, https, file, git`,
		},
		{
			name: "artifact gcs scheme",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{{GetterSource: "gcs://bucket/x.tgz", GetterMode: "any", RelativeDest: "local/"}}
			},
			err: `Task group "g", task "t": artifact 1 source "gcs://bucket/x.tgz" is not supported by nomadq: "gcs" sources cannot be fetched; allowed are http, https, file, git`,
		},
		{
			name: "artifact git and detected sources",
			mutate: func(j *Job) {
				j.TaskGroups[0].Tasks[0].Artifacts = []*TaskArtifact{
					{GetterSource: "git::https://example.com/repo.git", GetterMode: "dir", RelativeDest: "local/repo"},
					{GetterSource: "github.com/hashicorp/nomad", GetterMode: "dir", RelativeDest: "local/n"},
					{GetterSource: "HTTPS://example.com/a.tgz?checksum=sha256:00", GetterMode: "any", RelativeDest: "local/"},
				}
			},
		},
		{
			name:   "update health check",
			typ:    JobTypeService,
			mutate: func(j *Job) { j.TaskGroups[0].Update.HealthCheck = "http" },
			err:    `Task group "g": update health_check "http" is not allowed: must be one of checks, task_states, manual`,
		},

		// max_run_duration
		{
			name:   "max_run_duration zero",
			typ:    JobTypeBatch,
			mutate: func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(time.Duration(0)) },
			err:    `Task group "g": max_run_duration must be greater than zero, got 0s`,
		},
		{
			name:   "max_run_duration negative",
			typ:    JobTypeSysBatch,
			mutate: func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(-5 * time.Second) },
			err:    `Task group "g": max_run_duration must be greater than zero, got -5s`,
		},
		{
			name:   "max_run_duration on service",
			typ:    JobTypeService,
			mutate: func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(10 * time.Minute) },
			err:    `Task group "g": max_run_duration is only allowed for batch and sysbatch jobs, not service jobs`,
		},
		{
			name:   "max_run_duration on system",
			typ:    JobTypeSystem,
			mutate: func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(10 * time.Minute) },
			err:    `Task group "g": max_run_duration is only allowed for batch and sysbatch jobs, not system jobs`,
		},
		{
			name:   "max_run_duration on batch",
			typ:    JobTypeBatch,
			mutate: func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(10 * time.Minute) },
		},
		{
			name:   "max_run_duration on sysbatch",
			typ:    JobTypeSysBatch,
			mutate: func(j *Job) { j.TaskGroups[0].MaxRunDuration = new(10 * time.Minute) },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			typ := tc.typ
			if typ == "" {
				typ = JobTypeBatch
			}
			j := validJob(typ)
			tc.mutate(j)
			err := j.Validate()
			if tc.err == "" {
				must.NoError(t, err)
				return
			}
			must.Error(t, err)
			var m *MultiError
			must.ErrorAs[*MultiError](t, err, &m)
			must.Len(t, 1, m.Errors, must.Sprintf("errors: %v", err))
			must.EqError(t, err, tc.err)
		})
	}
}

func TestValidate_MultiError(t *testing.T) {
	j := validJob(JobTypeService)
	j.ID = "bad id"
	j.Priority = 50000
	tg := j.TaskGroups[0]
	tg.MaxRunDuration = new(time.Minute)
	tg.Tasks[0].Driver = ""
	tg.Tasks[0].Resources.MemoryMB = 1

	err := j.Validate()
	must.EqError(t, err, `5 errors occurred:
	* Job id "bad id" is not allowed: must not contain spaces
	* Job priority 50000 is not allowed: must be at most 32766, the highest job_max_priority a server takes
	* Task group "g": max_run_duration is only allowed for batch and sysbatch jobs, not service jobs
	* Task group "g", task "t": driver must not be empty
	* Task group "g", task "t": resources memory 1 is not allowed: must be at least 10 MB`)
}

func TestValidate_RichJobs(t *testing.T) {
	must.NoError(t, withoutRefusedTemplateFields(testJob()).Validate())
	must.NoError(t, testBatchJob().Validate())
	must.NoError(t, testDispatchedChild().Validate())
}

// withoutRefusedTemplateFields clears the template setting the fixture
// sets to cover every field but that validation refuses because it cannot
// take effect (TestValidate covers the refusal).
func withoutRefusedTemplateFields(j *Job) *Job {
	for _, tg := range j.TaskGroups {
		for _, task := range tg.Tasks {
			for _, tmpl := range task.Templates {
				if tmpl.Envvars && tmpl.ChangeMode == TemplateChangeModeSignal {
					tmpl.ChangeMode = TemplateChangeModeRestart
				}
			}
		}
	}
	return j
}

func TestValidate_Warnings(t *testing.T) {
	j := validJob(JobTypeBatch)
	must.NoError(t, j.Warnings())
	j.TaskGroups[0].Update = &UpdateStrategy{MaxParallel: 1}
	must.EqError(t, j.Warnings(), `Task group "g": update is ignored for batch jobs`)
}

func TestCheckVersionConstraint(t *testing.T) {
	cases := []struct {
		value           string
		version, semver bool // valid as a version, as a semver constraint
	}{
		{"1.2.3", true, true},
		{">= 1.0, < 2.0", true, true},
		{">=1.0,<2.0", true, true},
		{"!= 1.2.3-beta.1", true, true},
		{"= v1.0+build.5", true, true},
		{">1", true, true},
		{"1.2.3.4", true, true},
		{"~> 1.4", true, false},    // semver has no pessimistic operator
		{"1.2.3beta", true, false}, // semver needs "-" before a pre-release
		{"== 1.0", false, false},   // neither has "=="
		{"", false, false},
		{"latest", false, false},
		{">= ", false, false},
		{"1..2", false, false},
		{">= 1.0,", false, false},
		{">= 1.0 < 2.0", false, false}, // terms need a comma
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			must.Eq(t, tc.version, checkVersionConstraint(tc.value, false) == nil, must.Sprint("version"))
			must.Eq(t, tc.semver, checkVersionConstraint(tc.value, true) == nil, must.Sprint("semver"))
		})
	}
}

func TestValidate_NetworksAndVolumes(t *testing.T) {
	cases := []struct {
		name   string
		change func(tg *TaskGroup)
		want   string // "" means valid
	}{
		{"host ports", func(tg *TaskGroup) {
			tg.Networks = []*NetworkResource{{Mode: "host", ReservedPorts: []Port{{Label: "a", Value: 8080, IgnoreCollision: true}}, DynamicPorts: []Port{{Label: "b"}}}}
		}, ""},
		{"ignore_collision on a dynamic port", func(tg *TaskGroup) {
			tg.Networks = []*NetworkResource{{DynamicPorts: []Port{{Label: "b", IgnoreCollision: true}}}}
		}, `port "b" ignore_collision is not allowed on a dynamic port: only a static port may be shared`},
		{"host volume and mount", func(tg *TaskGroup) {
			tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: "host", Source: "shared", ReadOnly: true}}
			tg.Tasks[0].VolumeMounts = []*VolumeMount{{Volume: "data", Destination: "/data"}}
		}, ""},
		{"volume without type", func(tg *TaskGroup) {
			tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Source: "shared"}}
		}, `volume "data" type must be set: only "host" volumes are supported`},
		{"volume without source", func(tg *TaskGroup) {
			tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: "host"}}
		}, `volume "data" source must not be empty`},
		{"mount of unknown volume", func(tg *TaskGroup) {
			tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: "host", Source: "s"}}
			tg.Tasks[0].VolumeMounts = []*VolumeMount{{Volume: "logs", Destination: "/logs"}}
		}, `volume_mount 1 volume "logs" is not allowed: it must name a volume block of the group (have "data")`},
		{"mount without destination", func(tg *TaskGroup) {
			tg.Volumes = map[string]*VolumeRequest{"data": {Name: "data", Type: "host", Source: "s"}}
			tg.Tasks[0].VolumeMounts = []*VolumeMount{{Volume: "data"}}
		}, `volume_mount 1 destination must not be empty`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j := validJob(JobTypeService)
			tc.change(j.TaskGroups[0])
			err := j.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
		})
	}
}
