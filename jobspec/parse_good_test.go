package jobspec

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// parseTestFile parses a file under testdata with the base test
// configuration (strict, filesystem functions on, empty environment), then
// lets mod adjust it.
func parseTestFile(path string, mod func(*ParseConfig)) (*api.Job, error) {
	cfg := &ParseConfig{Path: path, Strict: true, AllowFS: true}
	if mod != nil {
		mod(cfg)
	}
	return ParseWithConfig(cfg)
}

func group(t *testing.T, job *api.Job, name string) *api.TaskGroup {
	t.Helper()
	for _, tg := range job.TaskGroups {
		if *tg.Name == name {
			return tg
		}
	}
	t.Fatalf("group %q not found", name)
	return nil
}

func task(t *testing.T, tg *api.TaskGroup, name string) *api.Task {
	t.Helper()
	for _, tk := range tg.Tasks {
		if tk.Name == name {
			return tk
		}
	}
	t.Fatalf("task %q not found in group %q", name, *tg.Name)
	return nil
}

func TestParse_Good(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		mod   func(*ParseConfig)
		check func(t *testing.T, job *api.Job)
	}{
		{
			name: "batch with max_run_duration and client interpolation",
			file: "batch_basic.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "batch-basic", *job.ID)
				must.Eq(t, "batch-basic", *job.Name)
				must.Eq(t, "batch", *job.Type)
				must.Eq(t, []string{"dc1"}, job.Datacenters)
				must.Nil(t, job.Priority) // no defaults filled in
				must.Nil(t, job.Region)
				tg := group(t, job, "work")
				must.Eq(t, 2, *tg.Count)
				must.Eq(t, 10*time.Minute, *tg.MaxRunDuration)
				tk := task(t, tg, "run")
				must.Eq(t, "raw_exec", tk.Driver)
				must.Eq(t, map[string]any{
					"command": "/bin/sh",
					"args":    []any{"-c", "${NOMAD_TASK_DIR}/run.sh --alloc ${NOMAD_ALLOC_ID}"},
				}, tk.Config)
				must.Eq(t, 200, *tk.Resources.CPU)
				must.Eq(t, 128, *tk.Resources.MemoryMB)
				must.Nil(t, tk.KillTimeout)
			},
		},
		{
			name: "sysbatch with attribute constraint",
			file: "sysbatch.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "sysbatch", *job.Type)
				must.Eq(t, []string{"*"}, job.Datacenters)
				must.Eq(t, "all", *job.NodePool)
				must.Eq(t, []*api.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}, job.Constraints)
				must.Eq(t, 5*time.Second, *group(t, job, "sweep").MaxRunDuration)
			},
		},
		{
			name: "service with update, ports and service block",
			file: "service_web.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "service", *job.Type)
				must.Eq(t, "eu", *job.Region)
				must.Eq(t, "frontend", *job.Namespace)
				must.Eq(t, 70, *job.Priority)
				must.Eq(t, 2, *job.Update.MaxParallel)
				must.Eq(t, 15*time.Second, *job.Update.MinHealthyTime)
				must.Eq(t, 5*time.Minute, *job.Update.HealthyDeadline)
				must.Eq(t, 10*time.Minute, *job.Update.ProgressDeadline)
				must.True(t, *job.Update.AutoRevert)
				must.Eq(t, 1, *job.Update.Canary)
				must.Nil(t, job.Update.Stagger)

				tg := group(t, job, "frontend")
				must.Eq(t, 3, *tg.Count)
				must.Eq(t, 8*time.Second, *tg.ShutdownDelay)
				must.Nil(t, tg.MaxRunDuration)
				must.Len(t, 1, tg.Networks)
				must.Eq(t, "bridge", tg.Networks[0].Mode)
				must.Eq(t, []api.Port{{Label: "http", To: 8080}}, tg.Networks[0].DynamicPorts)
				must.Eq(t, []api.Port{{Label: "https", Value: 443, To: 8443}}, tg.Networks[0].ReservedPorts)

				must.Len(t, 1, tg.Services)
				svc := tg.Services[0]
				must.Eq(t, "web", svc.Name)
				must.Eq(t, "http", svc.PortLabel)
				must.Eq(t, []string{"public", "v2"}, svc.Tags)
				must.Eq(t, "nomad", svc.Provider)
				must.Len(t, 1, svc.Checks)
				must.Eq(t, "/health", svc.Checks[0].Path)
				must.Eq(t, 10*time.Second, svc.Checks[0].Interval)
				must.Eq(t, 2*time.Second, svc.Checks[0].Timeout)

				tk := task(t, tg, "nginx")
				must.Eq[any](t, []any{"http", "https"}, tk.Config["ports"])
				must.Eq(t, 512, *tk.Resources.MemoryMaxMB)
			},
		},
		{
			name: "system job with static port and cores",
			file: "system.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "system", *job.Type)
				tg := group(t, job, "exporter")
				must.Nil(t, tg.Count)
				must.Eq(t, []api.Port{{Label: "metrics", Value: 9100}}, tg.Networks[0].ReservedPorts)
				must.SliceEmpty(t, tg.Networks[0].DynamicPorts)
				tk := task(t, tg, "exporter")
				must.Eq(t, 1, *tk.Resources.Cores)
				must.Nil(t, tk.Resources.CPU)
				must.Eq[any](t, []any{"--web.listen-address=:${NOMAD_PORT_metrics}"}, tk.Config["args"])
			},
		},
		{
			name: "periodic with a single cron",
			file: "periodic_cron.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				p := job.Periodic
				must.NotNil(t, p)
				must.Eq(t, "0 3 * * *", *p.Spec)
				must.Eq(t, "cron", *p.SpecType)
				must.True(t, *p.ProhibitOverlap)
				must.Eq(t, "Europe/Paris", *p.TimeZone)
				must.Nil(t, p.Enabled)
			},
		},
		{
			name: "periodic with crons",
			file: "periodic_crons.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				p := job.Periodic
				must.Nil(t, p.Spec)
				must.Eq(t, []string{"0 8 * * 1-5", "0 12 * * 6,0"}, p.Specs)
				must.Eq(t, "cron", *p.SpecType)
				must.False(t, *p.Enabled)
			},
		},
		{
			name: "parameterized with dispatch payload",
			file: "parameterized.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				pj := job.ParameterizedJob
				must.Eq(t, "required", pj.Payload)
				must.Eq(t, []string{"input"}, pj.MetaRequired)
				must.Eq(t, []string{"profile", "quality"}, pj.MetaOptional)
				tk := task(t, group(t, job, "transcode"), "ffmpeg")
				must.Eq(t, "input.json", tk.DispatchPayload.File)
				must.Eq[any](t, []any{"-i", "${NOMAD_META_input}", "-preset", "${NOMAD_META_profile}"}, tk.Config["args"])
			},
		},
		{
			name: "lifecycle hooks",
			file: "lifecycle.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "pipeline")
				must.Eq(t, 30*time.Minute, *tg.MaxRunDuration)
				must.Eq(t, &api.TaskLifecycle{Hook: "prestart"}, task(t, tg, "fetch").Lifecycle)
				must.Eq(t, &api.TaskLifecycle{Hook: "poststart", Sidecar: true}, task(t, tg, "proxy").Lifecycle)
				must.Eq(t, &api.TaskLifecycle{Hook: "poststop"}, task(t, tg, "upload").Lifecycle)
				main := task(t, tg, "transform")
				must.Nil(t, main.Lifecycle)
				must.True(t, main.Leader)
			},
		},
		{
			name: "typed variables with defaults",
			file: "variables_typed.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, []string{"dc1", "dc2"}, job.Datacenters)
				must.Eq(t, map[string]string{"team": "data", "tier": "gold"}, job.Meta)
				tg := group(t, job, "g")
				must.Eq(t, 3, *tg.Count)
				tk := task(t, tg, "t")
				must.Eq(t, 300, *tk.Resources.CPU)
				must.Eq(t, 256, *tk.Resources.MemoryMB) // "256" converted by the object type
				must.Eq[any](t, []any{"--debug=false"}, tk.Config["args"])
			},
		},
		{
			name: "typed variables overridden by -var",
			file: "variables_typed.nomad.hcl",
			mod: func(c *ParseConfig) {
				c.ArgVars = []string{
					`datacenters=["west"]`,
					"count=7",
					`labels={ team = "infra" }`,
					"debug=true",
				}
			},
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, []string{"west"}, job.Datacenters)
				must.Eq(t, map[string]string{"team": "infra"}, job.Meta)
				tg := group(t, job, "g")
				must.Eq(t, 7, *tg.Count)
				must.Eq[any](t, []any{"--debug=true"}, task(t, tg, "t").Config["args"])
			},
		},
		{
			name: "variable defaults only",
			file: "variables_sources.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "g")
				must.Eq(t, 1, *tg.Count)
				must.Eq[any](t, "app:default", task(t, tg, "t").Config["image"])
				must.Eq[any](t, []any{"a"}, task(t, tg, "t").Config["zones"])
			},
		},
		{
			name: "NOMAD_VAR_ environment overrides defaults",
			file: "variables_sources.nomad.hcl",
			mod: func(c *ParseConfig) {
				c.Envs = []string{"PATH=/bin", "NOMAD_VAR_image=app:env", `NOMAD_VAR_zones=["e1","e2"]`, "NOMAD_VAR_other=ignored"}
			},
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Eq[any](t, "app:env", tk.Config["image"])
				must.Eq[any](t, []any{"e1", "e2"}, tk.Config["zones"])
			},
		},
		{
			name: "-var-file overrides environment, later file wins",
			file: "variables_sources.nomad.hcl",
			mod: func(c *ParseConfig) {
				c.Envs = []string{"NOMAD_VAR_image=app:env", "NOMAD_VAR_replicas=2"}
				c.VarFiles = []string{"testdata/varfiles/sources.hcl", "testdata/varfiles/sources.json"}
			},
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "g")
				must.Eq(t, 4, *tg.Count)
				tk := task(t, tg, "t")
				must.Eq[any](t, "app:json", tk.Config["image"])
				must.Eq[any](t, []any{"b", "c"}, tk.Config["zones"])
			},
		},
		{
			name: "-var overrides everything, later -var wins",
			file: "variables_sources.nomad.hcl",
			mod: func(c *ParseConfig) {
				c.Envs = []string{"NOMAD_VAR_image=app:env"}
				c.VarFiles = []string{"testdata/varfiles/sources.hcl"}
				c.ArgVars = []string{"image=app:arg1", "replicas=9", "image=app:arg2=x"}
			},
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "g")
				must.Eq(t, 9, *tg.Count)
				must.Eq[any](t, "app:arg2=x", task(t, tg, "t").Config["image"])
			},
		},
		{
			name: "undeclared values are ignored when not strict",
			file: "variables_sources.nomad.hcl",
			mod: func(c *ParseConfig) {
				c.Strict = false
				c.VarFiles = []string{"testdata/varfiles/undeclared.hcl"}
				c.ArgVars = []string{"unknown=1"}
			},
			check: func(t *testing.T, job *api.Job) {
				must.Eq[any](t, "app:file", task(t, group(t, job, "g"), "t").Config["image"])
			},
		},
		{
			name: "variable validation passes",
			file: "variables_validation.nomad.hcl",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"env=prod"} },
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, 60, *job.Priority)
				must.Eq(t, map[string]string{"env": "prod"}, job.Meta)
			},
		},
		{
			name: "variables block",
			file: "variables_block.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, map[string]string{"owner": "platform", "tags": "x,y"}, job.Meta)
				must.Eq(t, 4, *group(t, job, "g").RestartPolicy.Attempts)
			},
		},
		{
			name: "locals resolve in any order",
			file: "locals.nomad.hcl",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"env=prod"} },
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "locals", *job.ID)
				must.Eq(t, "svc-prod", *job.Name)
				must.Eq(t, map[string]string{"owner": "ops", "env": "prod", "name": "svc-prod"}, job.Meta)
			},
		},
		{
			name: "functions",
			file: "functions.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, map[string]string{
					"format":      "node-007",
					"join":        "alpha,beta,gamma",
					"upper":       "SHOUT",
					"lower":       "quiet",
					"title":       "Hello World",
					"json":        `{"a":1,"b":["x"]}`,
					"jsondecode":  "v",
					"merged":      `{"a":3,"b":2}`,
					"regex_repl":  "a_b_c",
					"replace":     "a/b/c",
					"split_len":   "4",
					"element":     "beta",
					"concat":      "a b c",
					"formatlist":  "x=1;y=2",
					"coalesce":    "fallback",
					"trimspace":   "padded",
					"trimprefix":  "1.2.3",
					"trimsuffix":  "file",
					"substr":      "bcd",
					"strrev":      "cba",
					"minmax":      "2/9",
					"abs":         "5",
					"ceilfloor":   "2/1",
					"keys":        "a,b",
					"values":      "2,1",
					"zipmap":      `{"a":1,"b":2}`,
					"range":       "[0,1,2]",
					"reverse":     "gamma,beta,alpha",
					"distinct":    "a,b",
					"flatten":     `["a","b","c"]`,
					"contains":    "true",
					"sort":        "a,b,c",
					"setunion":    "a,b",
					"parseint":    "255",
					"pow":         "1024",
					"signum":      "-1",
					"lookup":      "dflt",
					"compact":     "a,b",
					"base64":      "aGVsbG8=",
					"base64dec":   "hello",
					"urlencode":   "a+b%26c",
					"md5":         "5d41402abc4b2a76b9719d911017c592",
					"sha1":        "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d",
					"sha256":      "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
					"sha512":      "9b71d224bd62f378",
					"uuidv5":      "cfbff0d1-9375-5685-968c-48ce8b15ae17",
					"uuidv4_len":  "36",
					"cidrhost":    "10.0.0.5",
					"cidrnetmask": "255.240.0.0",
					"cidrsubnet":  "10.1.3.0/24",
					"cidrsubnets": "10.1.0.0/24,10.1.16.0/20",
					"try":         "tried",
					"can":         "false",
					"convert":     "[1,2]",
					"timeadd":     "2024-01-01T01:30:00Z",
					"formatdate":  "2024-03-05",
					"indent":      "a\n  b",
					"chomp":       "line",
					"log":         "3",
					"slice":       "alpha,beta",
					"regex":       "abc",
				}, job.Meta)
			},
		},
		{
			name: "dynamic blocks",
			file: "dynamic.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Len(t, 2, job.TaskGroups)
				api := group(t, job, "api")
				must.Eq(t, 2, *api.Count)
				must.Eq[any](t, "/bin/api", task(t, api, "main").Config["command"])
				must.Eq(t, map[string]string{"GROUP": "api"}, task(t, api, "main").Env)
				worker := group(t, job, "worker")
				must.Eq(t, 4, *worker.Count)
				must.Eq[any](t, "/bin/worker", task(t, worker, "main").Config["command"])
				must.Len(t, 2, worker.Networks[0].DynamicPorts)
				must.Eq(t, "http", worker.Networks[0].DynamicPorts[0].Label)
				must.Eq(t, "grpc", worker.Networks[0].DynamicPorts[1].Label)
				must.Len(t, 1, worker.Constraints)
				must.Eq(t, "${attr.kernel.name}", worker.Constraints[0].LTarget)
				must.Eq(t, "linux", worker.Constraints[0].RTarget)
			},
		},
		{
			name: "constraint shorthands",
			file: "constraints.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, []*api.Constraint{
					{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"},
					{LTarget: "${attr.nomad.version}", Operand: "version", RTarget: ">= 1.6"},
					{LTarget: "${attr.os.version}", Operand: "semver", RTarget: "~> 22.04"},
					{LTarget: "${node.class}", Operand: "regexp", RTarget: "^gpu-.*"},
					{LTarget: "${meta.zones}", Operand: "set_contains", RTarget: "a,b"},
					{LTarget: "${meta.tags}", Operand: "set_contains_any", RTarget: "ssd,nvme"},
					{LTarget: "${meta.features}", Operand: "set_contains_all", RTarget: "avx2,sse4"},
					{Operand: "distinct_hosts"},
					{LTarget: "${meta.rack}", Operand: "distinct_property", RTarget: "2"},
					{LTarget: "${attr.unique.network.ip-address}", Operand: "is_set"},
					{LTarget: "${meta.maintenance}", Operand: "is_not_set"},
					{LTarget: "${attr.cpu.arch}", Operand: "!=", RTarget: "arm64"},
				}, job.Constraints)
				tk := task(t, group(t, job, "g"), "t")
				must.Eq(t, []*api.Constraint{{LTarget: "${attr.driver.raw_exec}", Operand: "is_set"}}, tk.Constraints)
			},
		},
		{
			name: "affinities with weights",
			file: "affinity.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				w := func(n int8) *int8 { return &n }
				must.Eq(t, []*api.Affinity{{LTarget: "${node.datacenter}", Operand: "=", RTarget: "dc1", Weight: w(80)}}, job.Affinities)
				tg := group(t, job, "g")
				must.Eq(t, []*api.Affinity{
					{LTarget: "${meta.tags}", Operand: "set_contains_any", RTarget: "ssd,nvme", Weight: w(-50)},
					{LTarget: "${attr.kernel.version}", Operand: "version", RTarget: ">= 5.10", Weight: w(25)},
				}, tg.Affinities)
				must.Eq(t, []*api.Affinity{{LTarget: "${node.class}", Operand: "regexp", RTarget: "large$", Weight: w(10)}},
					task(t, tg, "t").Affinities)
			},
		},
		{
			name: "spread with targets",
			file: "spread.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Len(t, 1, job.Spreads)
				s := job.Spreads[0]
				must.Eq(t, "${node.datacenter}", s.Attribute)
				must.Eq(t, int8(100), *s.Weight)
				must.Eq(t, []*api.SpreadTarget{{Value: "us-east1", Percent: 60}, {Value: "us-west1", Percent: 40}}, s.SpreadTarget)
				tg := group(t, job, "g")
				must.Eq(t, "${meta.rack}", tg.Spreads[0].Attribute)
				must.Nil(t, tg.Spreads[0].Weight)
			},
		},
		{
			name: "restart, reschedule and migrate",
			file: "restart_reschedule.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, 30*time.Second, *job.Reschedule.Delay)
				must.Eq(t, "exponential", *job.Reschedule.DelayFunction)
				must.Eq(t, time.Hour, *job.Reschedule.MaxDelay)
				must.True(t, *job.Reschedule.Unlimited)
				must.Nil(t, job.Reschedule.Attempts)

				tg := group(t, job, "g")
				must.Eq(t, 3, *tg.RestartPolicy.Attempts)
				must.Eq(t, 30*time.Minute, *tg.RestartPolicy.Interval)
				must.Eq(t, 15*time.Second, *tg.RestartPolicy.Delay)
				must.Eq(t, "delay", *tg.RestartPolicy.Mode)
				must.Eq(t, 5, *tg.ReschedulePolicy.Attempts)
				must.Eq(t, 90*time.Minute, *tg.ReschedulePolicy.Interval)
				must.Eq(t, 10*time.Second, *tg.ReschedulePolicy.Delay)
				must.False(t, *tg.ReschedulePolicy.Unlimited)
				must.Eq(t, 2, *tg.Migrate.MaxParallel)
				must.Eq(t, "checks", *tg.Migrate.HealthCheck)
				must.Eq(t, 20*time.Second, *tg.Migrate.MinHealthyTime)
				must.Eq(t, 4*time.Minute, *tg.Migrate.HealthyDeadline)

				tk := task(t, tg, "t")
				must.Eq(t, 45*time.Second, *tk.KillTimeout)
				must.Eq(t, "SIGINT", tk.KillSignal)
				must.Eq(t, 1, *tk.RestartPolicy.Attempts)
				must.Eq(t, 5*time.Second, *tk.RestartPolicy.Delay)
				must.Nil(t, tk.RestartPolicy.Interval)
			},
		},
		{
			name: "ephemeral disk and logs",
			file: "disk_logs.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "g")
				must.Eq(t, 1024, *tg.EphemeralDisk.SizeMB)
				must.True(t, *tg.EphemeralDisk.Sticky)
				must.True(t, *tg.EphemeralDisk.Migrate)
				logs := task(t, tg, "t").LogConfig
				must.Eq(t, 3, *logs.MaxFiles)
				must.Eq(t, 15, *logs.MaxFileSizeMB)
			},
		},
		{
			name: "meta and env as blocks",
			file: "meta_env_blocks.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, map[string]string{"owner": "team-a", "cost": "42"}, job.Meta)
				tg := group(t, job, "g")
				must.Eq(t, map[string]string{"tier": "backend"}, tg.Meta)
				tk := task(t, tg, "t")
				must.Eq(t, map[string]string{"role": "primary"}, tk.Meta)
				must.Eq(t, map[string]string{"LOG_LEVEL": "debug", "PORT": "8080", "NODE": "${node.unique.name}"}, tk.Env)
			},
		},
		{
			name: "meta and env as map attributes",
			file: "meta_env_attrs.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, map[string]string{"owner": "team-b", "dotted.key": "yes"}, job.Meta)
				tg := group(t, job, "g")
				must.Eq(t, map[string]string{"tier": "frontend"}, tg.Meta)
				tk := task(t, tg, "t")
				must.Eq(t, map[string]string{"role": "replica"}, tk.Meta)
				must.Eq(t, map[string]string{"LOG_LEVEL": "info", "WORKERS": "4", "EXTRA": "block"}, tk.Env)
			},
		},
		{
			name: "free-form config with nested blocks",
			file: "config_nested.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "app")
				must.Eq(t, map[string]any{
					"image":      "redis:7",
					"privileged": false,
					"shm_size":   67108864,
					"cpu_ratio":  0.5,
					"labels":     map[string]any{"team": "cache"},
					"args":       []any{"--port", "6379"},
					"mount": []map[string]any{
						{"type": "bind", "source": "local/redis.conf", "target": "/etc/redis.conf"},
						{"type": "tmpfs", "target": "/scratch", "readonly": true},
					},
					"logging": []map[string]any{
						{"type": "syslog", "config": []map[string]any{{"tag": "redis"}}},
					},
					"auth": []map[string]any{
						{"registry": map[string]any{"username": "u"}},
					},
				}, tk.Config)
			},
		},
		{
			name: "task services and checks",
			file: "service_checks.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "api")
				must.Eq(t, []api.Port{{Label: "grpc"}}, tg.Networks[0].DynamicPorts)
				must.Eq(t, []api.Port{{Label: "admin", Value: 9000, HostNetwork: "private"}}, tg.Networks[0].ReservedPorts)
				tk := task(t, tg, "api")
				must.Len(t, 2, tk.Services)
				grpc := tk.Services[0]
				must.Eq(t, "api-grpc", grpc.Name)
				must.Eq(t, "consul", grpc.Provider)
				must.Eq(t, 5*time.Second, grpc.Checks[0].Interval)
				must.Eq(t, time.Second, grpc.Checks[0].Timeout)
				must.Eq(t, 3, grpc.Checks[0].CheckRestart.Limit)
				must.Eq(t, 30*time.Second, *grpc.Checks[0].CheckRestart.Grace)
				must.Eq(t, map[string]string{"path": "/admin"}, tk.Services[1].Meta)
			},
		},
		{
			name: "durations as strings and nanoseconds",
			file: "duration_forms.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "g")
				must.Eq(t, 90*time.Second, *tg.MaxRunDuration)
				must.Eq(t, 90*time.Minute, *tg.ShutdownDelay)
				must.Eq(t, 2*time.Minute, *tg.StopAfterClientDisconnect)
				tk := task(t, tg, "t")
				must.Eq(t, 250*time.Millisecond, *tk.KillTimeout)
				must.Eq(t, 2*time.Second, tk.ShutdownDelay)
			},
		},
		{
			name: "task under job becomes a group",
			file: "task_promotion.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Len(t, 1, job.TaskGroups)
				tg := job.TaskGroups[0]
				must.Eq(t, "solo", *tg.Name)
				must.Nil(t, tg.Count)
				must.Len(t, 1, tg.Tasks)
				must.Eq[any](t, []any{"alone"}, tg.Tasks[0].Config["args"])
			},
		},
		{
			name: "templates get the job language defaults",
			file: "templates.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Len(t, 2, tk.Templates)
				a := tk.Templates[0]
				must.Eq(t, "local/app.env", *a.DestPath)
				must.Eq(t, "NODE={{ env \"node.unique.name\" }}\nDIR=${NOMAD_TASK_DIR}\n", *a.EmbeddedTmpl)
				must.True(t, *a.Envvars)
				must.Eq(t, "restart", *a.ChangeMode)
				must.Eq(t, "0644", *a.Perms)
				must.Eq(t, 5*time.Second, *a.Splay)
				must.False(t, *a.ErrMissingKey)
				b := tk.Templates[1]
				must.Eq(t, "local/in.tpl", *b.SourcePath)
				must.Eq(t, "signal", *b.ChangeMode)
				must.Eq(t, "SIGHUP", *b.ChangeSignal)
				must.Eq(t, "0600", *b.Perms)
				must.Eq(t, 10*time.Second, *b.Splay)
				must.Eq(t, 2*time.Second, *b.Wait.Min)
				must.Eq(t, 10*time.Second, *b.Wait.Max)
			},
		},
		{
			name: "every template and artifact attribute",
			file: "template_all_fields.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Len(t, 2, tk.Artifacts)
				git := tk.Artifacts[0]
				must.Eq(t, "git::https://example.com/repo.git", *git.GetterSource)
				must.Eq(t, "dir", *git.GetterMode)
				must.Eq(t, map[string]string{"ref": "v1.2.0"}, git.GetterOptions)
				file := tk.Artifacts[1]
				must.Eq(t, "file", *file.GetterMode)
				must.Eq(t, "local/tool.tar.gz", *file.RelativeDest)
				must.True(t, file.Chown)
				must.Eq(t, map[string]string{"archive": "false"}, file.GetterOptions)
				must.Eq(t, map[string]string{"Authorization": "Bearer ${NOMAD_META_token}", "X-Trace": "1"}, file.GetterHeaders)
				must.Len(t, 1, tk.Templates)
				tmpl := tk.Templates[0]
				must.Eq(t, `[[ env "NOMAD_TASK_NAME" ]]`, *tmpl.EmbeddedTmpl)
				must.Eq(t, "[[", *tmpl.LeftDelim)
				must.Eq(t, "]]", *tmpl.RightDelim)
				must.True(t, *tmpl.ErrMissingKey)
				must.True(t, *tmpl.Once)
				must.Eq(t, 1000, *tmpl.Uid)
				must.Eq(t, 1000, *tmpl.Gid)
				must.Eq(t, "script", *tmpl.ChangeMode)
				must.Eq(t, "/bin/reload", *tmpl.ChangeScript.Command)
				must.Eq(t, []string{"-f"}, tmpl.ChangeScript.Args)
				must.Eq(t, 5*time.Second, *tmpl.ChangeScript.Timeout)
				must.True(t, *tmpl.ChangeScript.FailOnError)
			},
		},
		{
			name: "artifact with options and headers",
			file: "artifact.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Len(t, 1, tk.Artifacts)
				a := tk.Artifacts[0]
				must.Eq(t, "https://example.com/tool.tar.gz", *a.GetterSource)
				must.Eq(t, "local/tool", *a.RelativeDest)
				must.Eq(t, "any", *a.GetterMode)
				must.Eq(t, map[string]string{"checksum": "sha256:abcd"}, a.GetterOptions)
				must.Eq(t, map[string]string{"User-Agent": "nomadq"}, a.GetterHeaders)
			},
		},
		{
			name: "filesystem functions relative to the job file",
			file: "fs_functions.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, map[string]string{
					"exists":  "true",
					"missing": "false",
					"base":    "agent.hcl",
					"dir":     "/etc/nomad.d",
					"set":     "files/motd.txt",
					"b64":     "d2VsY29tZSB0byBub21hZHEK",
				}, job.Meta)
				tk := task(t, group(t, job, "g"), "t")
				must.Eq(t, "welcome to nomadq\n", *tk.Templates[0].EmbeddedTmpl)
			},
		},
		{
			name: "runtime references stay literal",
			file: "runtime_interpolation.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Eq(t, map[string]string{
					"NODE":    "${node.unique.name}",
					"DC":      "${node.datacenter}",
					"RACK":    "${meta.rack}",
					"HOME":    `${env["HOME"]}`,
					"ALLOC":   "${NOMAD_ALLOC_ID}",
					"COMBO":   "${attr.kernel.name}-${attr.cpu.arch}",
					"ESCAPED": "${literal}",
				}, tk.Env)
				must.Eq[any](t, "${NOMAD_TASK_DIR}/bin/run", tk.Config["command"])
				must.Eq[any](t, []any{"--index", "${NOMAD_ALLOC_INDEX}", "--gpu", "${device.model}"}, tk.Config["args"])
			},
		},
		{
			name: "job fields and several groups",
			file: "multi_group.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "multi", *job.ID)
				must.Eq(t, "multi-display", *job.Name)
				must.Eq(t, 30, *job.Priority)
				must.True(t, *job.AllAtOnce)
				must.Eq(t, "gpu", *job.NodePool)
				must.Len(t, 2, job.TaskGroups)
				must.Eq(t, "a", *job.TaskGroups[0].Name)
				must.Eq(t, "b", *job.TaskGroups[1].Name)
				b := group(t, job, "b")
				must.Eq(t, 5, *b.Count)
				must.Len(t, 2, b.Tasks)
				must.Eq(t, "nobody", task(t, b, "b1").User)
			},
		},
		{
			name: "HCL-JSON job",
			file: "hcl_json.nomad.json",
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, "json-job", *job.ID)
				must.Eq(t, "batch", *job.Type)
				must.Eq(t, map[string]string{"source": "json"}, job.Meta)
				must.Eq(t, []*api.Constraint{{LTarget: "${attr.kernel.name}", Operand: "=", RTarget: "linux"}}, job.Constraints)
				tg := group(t, job, "work")
				must.Eq(t, 2, *tg.Count)
				must.Eq(t, 2*time.Minute, *tg.MaxRunDuration)
				must.Eq(t, 15*time.Second, *tg.RestartPolicy.Delay)
				tk := task(t, tg, "run")
				must.Eq(t, map[string]any{
					"command": "/bin/sh",
					"args":    []any{"-c", "echo ${NOMAD_ALLOC_ID}"},
					"mount":   []any{map[string]any{"type": "bind", "target": "/x"}},
				}, tk.Config)
				must.Eq(t, map[string]string{"MODE": "json"}, tk.Env)
			},
		},
		{
			name: "HCL-JSON job with -var",
			file: "hcl_json.nomad.json",
			mod:  func(c *ParseConfig) { c.ArgVars = []string{"count=6"} },
			check: func(t *testing.T, job *api.Job) {
				must.Eq(t, 6, *group(t, job, "work").Count)
			},
		},
		{
			name: "vault defaults and the default identity",
			file: "vault_identity.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Eq(t, "app", tk.Vault.Role)
				must.True(t, *tk.Vault.Env)
				must.Eq(t, "restart", *tk.Vault.ChangeMode)
				must.NotNil(t, tk.Identity)
				must.True(t, tk.Identity.Env)
				must.True(t, tk.Identity.File)
				must.Len(t, 1, tk.Identities)
				must.Eq(t, "consul", tk.Identities[0].Name)
				must.Eq(t, time.Hour, tk.Identities[0].TTL)
				must.Eq(t, []string{"consul.io"}, tk.Identities[0].Audience)
			},
		},
		{
			// A change_script's defaults, written out as Nomad's parser
			// writes them.
			name: "change_script defaults",
			file: "change_script_defaults.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				cs := task(t, group(t, job, "g"), "t").Templates[0].ChangeScript
				must.Eq(t, "/bin/true", *cs.Command)
				must.NotNil(t, cs.Args)
				must.Len(t, 0, cs.Args)
				must.Eq(t, 5*time.Second, *cs.Timeout)
				must.False(t, *cs.FailOnError)
				must.False(t, *cs.RunOnFirstRender)
			},
		},
		{
			// The only identity block becomes the default identity and
			// leaves an empty list, which Nomad's parser writes as [].
			name: "the default identity alone",
			file: "default_identity.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.NotNil(t, tk.Identity)
				must.True(t, tk.Identity.Env)
				must.NotNil(t, tk.Identities)
				must.Len(t, 0, tk.Identities)
				buf, err := json.Marshal(tk)
				must.NoError(t, err)
				must.StrContains(t, string(buf), `"Identities":[]`)
			},
		},
		{
			// Both are kept, so that the server's check can refuse them;
			// taking one as the default identity would drop the other.
			name: "two default identity blocks",
			file: "two_default_identities.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tk := task(t, group(t, job, "g"), "t")
				must.Nil(t, tk.Identity)
				must.Len(t, 2, tk.Identities)
				must.True(t, tk.Identities[0].Env)
				must.True(t, tk.Identities[1].File)
			},
		},
		{
			name: "ports, host volumes, cores and stopping",
			file: "ports_volumes.nomad.hcl",
			check: func(t *testing.T, job *api.Job) {
				tg := group(t, job, "web")
				must.Eq(t, 3*time.Second, *tg.ShutdownDelay)
				must.Eq(t, []*api.NetworkResource{{
					Mode:          "host",
					ReservedPorts: []api.Port{{Label: "admin", Value: 8080}},
					DynamicPorts:  []api.Port{{Label: "http"}},
				}}, tg.Networks)
				must.Eq(t, map[string]*api.VolumeRequest{"certs": {Name: "certs", Type: "host", Source: "tls", ReadOnly: true}}, tg.Volumes)
				tk := task(t, tg, "server")
				must.Eq(t, time.Second, tk.ShutdownDelay)
				must.Eq(t, "SIGUSR1", tk.KillSignal)
				must.Eq(t, 20*time.Second, *tk.KillTimeout)
				must.Eq(t, []*api.VolumeMount{{Volume: new("certs"), Destination: new("/etc/tls"), ReadOnly: new(true)}}, tk.VolumeMounts)
				must.True(t, *tk.LogConfig.Disabled)
				must.Eq(t, 2, *tk.Resources.Cores)
				must.Eq(t, 256, *tk.Resources.MemoryMaxMB)
			},
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			job, err := parseTestFile(filepath.Join("testdata", "good", tc.file), tc.mod)
			must.NoError(t, err)
			tc.check(t, job)
		})
	}
}

// TestParse_Reader checks the io.Reader entry point and the file name used in
// errors.
func TestParse_Reader(t *testing.T) {
	job, err := Parse("inline.hcl", strings.NewReader("job \"inline\" {\n  group \"g\" {\n    count = 2\n  }\n}\n"))
	must.NoError(t, err)
	must.Eq(t, "inline", *job.Name)
	must.Eq(t, 2, *job.TaskGroups[0].Count)

	_, err = Parse("inline.hcl", strings.NewReader("job \"inline\" {\n  group \"g\" {\n    count = \"x\"\n  }\n}\n"))
	must.EqError(t, err, `inline.hcl:3,13-16: Unsuitable value type; count: a number is required`)
}

// TestParse_Examples parses every job file shipped in examples/ and checks
// the values the demo relies on.
func TestParse_Examples(t *testing.T) {
	checks := map[string]func(t *testing.T, job *api.Job){
		"hello.nomad.hcl": func(t *testing.T, job *api.Job) {
			must.Eq(t, "batch", *job.Type)
			must.Eq[any](t, []any{"-c", "echo hello; sleep 1"}, job.TaskGroups[0].Tasks[0].Config["args"])
		},
		"timeout.nomad.hcl": func(t *testing.T, job *api.Job) {
			tg := job.TaskGroups[0]
			must.Eq(t, 3*time.Second, *tg.MaxRunDuration)
			must.Eq(t, 3, *tg.RestartPolicy.Attempts)
		},
		"report.nomad.hcl": func(t *testing.T, job *api.Job) {
			tg := job.TaskGroups[0]
			must.Eq(t, 30*time.Second, *tg.MaxRunDuration)
			must.Eq(t, "prestart", task(t, tg, "prepare").Lifecycle.Hook)
			must.Eq(t, "poststop", task(t, tg, "publish").Lifecycle.Hook)
		},
		"sysbatch.nomad.hcl": func(t *testing.T, job *api.Job) {
			must.Eq(t, "sysbatch", *job.Type)
			must.Eq(t, 5*time.Second, *job.TaskGroups[0].MaxRunDuration)
		},
		"priority.nomad.hcl": func(t *testing.T, job *api.Job) {
			must.Eq(t, 80, *job.Priority)
			must.Eq[any](t, []any{"-c", "echo 'high priority work'; sleep 2"}, job.TaskGroups[0].Tasks[0].Config["args"])
		},
	}
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.nomad.hcl"))
	must.NoError(t, err)
	must.SliceNotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			job, err := ParseWithConfig(&ParseConfig{Path: f, Strict: true})
			must.NoError(t, err)
			must.SliceNotEmpty(t, job.TaskGroups)
			if check := checks[filepath.Base(f)]; check != nil {
				check(t, job)
			}
		})
	}
}
