package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// minimalStructJob is minimalApiJob built directly in the internal model.
func minimalStructJob(typ string) *Job {
	return &Job{
		ID:          "j",
		Type:        typ,
		Datacenters: []string{"dc1"},
		TaskGroups: []*TaskGroup{{
			Name:  "g",
			Count: 1,
			Tasks: []*Task{{
				Name:   "t",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/true"},
			}},
		}},
	}
}

func TestCanonicalize_Direct(t *testing.T) {
	j := &Job{
		ID:   "periodic",
		Type: JobTypeBatch,
		Periodic: &PeriodicConfig{
			Enabled: true,
			Spec:    "@daily",
			Specs:   []string{},
		},
		Reschedule: &ReschedulePolicy{Attempts: 7, Interval: time.Hour, Delay: 10 * time.Second, DelayFunction: RescheduleDelayConstant},
		Constraints: []*Constraint{
			{LTarget: "${attr.kernel.name}", RTarget: "linux"},
		},
		Affinities: []*Affinity{{LTarget: "${node.class}", RTarget: "fast"}},
		Spreads:    []*Spread{{Attribute: "${node.datacenter}"}},
		TaskGroups: []*TaskGroup{{
			Name:          "g",
			RestartPolicy: &RestartPolicy{Attempts: 1, Interval: time.Minute, Delay: time.Second, Mode: RestartPolicyModeDelay},
			Services:      []*Service{{PortLabel: "http"}},
			Tasks: []*Task{{
				Name:      "t",
				Services:  []*Service{{PortLabel: "admin", Provider: "nomad"}},
				Artifacts: []*TaskArtifact{{GetterSource: "https://x/y/app.bin", GetterMode: "file"}, {GetterSource: "https://x/dir"}},
				Templates: []*Template{{DestPath: "local/a", ChangeMode: "signal"}},
			}},
		}},
	}
	j.Canonicalize()

	must.Eq(t, &PeriodicConfig{Enabled: true, Spec: "@daily", SpecType: PeriodicSpecCron, TimeZone: "UTC"}, j.Periodic)
	must.Eq(t, "=", j.Constraints[0].Operand)
	must.Eq(t, &Affinity{LTarget: "${node.class}", RTarget: "fast", Operand: "=", Weight: 50}, j.Affinities[0])
	must.Eq(t, 50, j.Spreads[0].Weight)

	tg := j.TaskGroups[0]
	// The job-level reschedule policy is inherited by a group without one.
	must.Eq(t, j.Reschedule, tg.ReschedulePolicy)
	must.False(t, j.Reschedule == tg.ReschedulePolicy)
	// The group restart policy is copied to the task.
	task := tg.Tasks[0]
	must.Eq(t, tg.RestartPolicy, task.RestartPolicy)
	must.False(t, tg.RestartPolicy == task.RestartPolicy)

	must.Eq(t, &Service{Name: "periodic-g", PortLabel: "http", Provider: "consul", AddressMode: "auto", OnUpdate: "require_healthy", Cluster: "default"}, tg.Services[0])
	must.Eq(t, "periodic-g-t", task.Services[0].Name)
	must.Eq(t, "nomad", task.Services[0].Provider)
	must.Eq(t, "local/app.bin", task.Artifacts[0].RelativeDest)
	must.Eq(t, "local/", task.Artifacts[1].RelativeDest)
	must.Eq(t, "any", task.Artifacts[1].GetterMode)
	must.Eq(t, &Template{DestPath: "local/a", ChangeMode: "signal", ChangeSignal: "SIGHUP", Perms: "0644", LeftDelim: "{{", RightDelim: "}}"}, task.Templates[0])
}
