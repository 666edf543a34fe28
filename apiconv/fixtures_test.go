package apiconv

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// apiServiceJob is a service job as the jobspec parser would produce it,
// setting every field of the job, groups and tasks that nomadq models.
func apiServiceJob() *api.Job {
	return &api.Job{
		Region:      new("europe"),
		Namespace:   new("team-a"),
		ID:          new("web"),
		Name:        new("web-frontend"),
		Type:        new("service"),
		Priority:    new(70),
		AllAtOnce:   new(true),
		Datacenters: []string{"dc1", "dc2"},
		NodePool:    new("edge"),
		Constraints: []*api.Constraint{
			{LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "="},
			{LTarget: "${attr.nomad.version}", RTarget: ">= 1.6.0, < 2.0", Operand: "version"},
			{Operand: "distinct_hosts", RTarget: "true"},
		},
		Affinities: []*api.Affinity{
			{LTarget: "${node.datacenter}", RTarget: "dc1", Operand: "=", Weight: new(int8(80))},
		},
		Spreads: []*api.Spread{{
			Attribute: "${node.datacenter}",
			Weight:    new(int8(60)),
			SpreadTarget: []*api.SpreadTarget{
				{Value: "dc1", Percent: 70},
				{Value: "dc2", Percent: 30},
			},
		}},
		Update: &api.UpdateStrategy{
			MaxParallel:     new(2),
			HealthCheck:     new("task_states"),
			MinHealthyTime:  new(15 * time.Second),
			HealthyDeadline: new(3 * time.Minute),
			AutoRevert:      new(true),
			Canary:          new(1),
		},
		Reschedule: &api.ReschedulePolicy{
			Attempts:      new(0),
			Interval:      new(time.Duration(0)),
			Delay:         new(20 * time.Second),
			DelayFunction: new("fibonacci"),
			MaxDelay:      new(30 * time.Minute),
			Unlimited:     new(true),
		},
		Migrate: &api.MigrateStrategy{
			MaxParallel:     new(3),
			HealthCheck:     new("task_states"),
			MinHealthyTime:  new(20 * time.Second),
			HealthyDeadline: new(4 * time.Minute),
		},
		Meta: map[string]string{"owner": "team-a", "tier": "frontend"},
		TaskGroups: []*api.TaskGroup{{
			Name:  new("frontend"),
			Count: new(3),
			Constraints: []*api.Constraint{
				{LTarget: "${meta.rack}", RTarget: "r[0-9]+", Operand: "regexp"},
				{LTarget: "${meta.rack}", RTarget: "2", Operand: "distinct_property"},
			},
			Affinities: []*api.Affinity{
				{LTarget: "${node.class}", RTarget: "fast,ssd", Operand: "set_contains_any"},
			},
			Spreads: []*api.Spread{{Attribute: "${meta.rack}"}},
			RestartPolicy: &api.RestartPolicy{
				Attempts: new(5),
				Mode:     new("delay"),
			},
			EphemeralDisk: &api.EphemeralDisk{SizeMB: new(500), Sticky: new(true), Migrate: new(true)},
			Update:        &api.UpdateStrategy{Canary: new(2), AutoPromote: new(true)},
			Networks: []*api.NetworkResource{{
				Mode:          "bridge",
				Hostname:      "web-${NOMAD_ALLOC_INDEX}",
				DNS:           &api.DNSConfig{Servers: []string{"10.0.0.53"}, Searches: []string{"svc"}, Options: []string{"ndots:2"}},
				ReservedPorts: []api.Port{{Label: "admin", Value: 9000, To: 9000, HostNetwork: "private", IgnoreCollision: true}},
				DynamicPorts:  []api.Port{{Label: "http", To: 8080}, {Label: "metrics", To: -1}},
				CNI:           &api.CNIConfig{Args: map[string]string{"IgnoreUnknown": "true"}},
			}},
			Services: []*api.Service{{
				Name:            "web",
				Tags:            []string{"http", "public"},
				CanaryTags:      []string{"canary"},
				PortLabel:       "http",
				TaskName:        "server",
				Provider:        "nomad",
				Address:         "10.1.2.3",
				Meta:            map[string]string{"version": "2"},
				TaggedAddresses: map[string]string{"lan": "10.1.2.3"},
			}, {
				PortLabel:    "metrics",
				Provider:     "nomad",
				CheckRestart: &api.CheckRestart{Limit: 2, Grace: new(5 * time.Second)},
				Checks: []api.ServiceCheck{{
					Name:          "metrics-http",
					Type:          "http",
					Path:          "/metrics",
					Protocol:      "https",
					Method:        "POST",
					Body:          "{}",
					Header:        map[string][]string{"X-Probe": {"1"}},
					TLSSkipVerify: true,
					PortLabel:     "http",
					AddressMode:   "alloc",
					Interval:      10 * time.Second,
					Timeout:       2 * time.Second,
					OnUpdate:      "require_healthy",
					CheckRestart:  &api.CheckRestart{Limit: 3, Grace: new(30 * time.Second)},
				}, {
					Name:     "metrics-script",
					Type:     "script",
					Command:  "/bin/check",
					Args:     []string{"-q"},
					TaskName: "server",
					Interval: 30 * time.Second,
					Timeout:  5 * time.Second,
				}},
			}},
			Meta:          map[string]string{"group": "frontend"},
			ShutdownDelay: new(5 * time.Second),
			Scaling: &api.ScalingPolicy{Min: new(int64(1)), Max: new(int64(10)), Enabled: new(true), Type: "horizontal",
				Policy: map[string]any{"cooldown": "1m"}},
			Volumes: map[string]*api.VolumeRequest{
				"certs": {Name: "certs", Type: "host", Source: "tls", ReadOnly: true},
			},
			Tasks: []*api.Task{{
				Name:   "server",
				Driver: "raw_exec",
				User:   "nobody",
				Config: map[string]any{
					"command": "/usr/local/bin/server",
					"args":    []any{"-listen", ":8080", "-v"},
					"port_map": []any{
						map[string]any{"http": int64(8080), "admin": int64(9000)},
					},
					"mount": map[string]any{
						"type":     "bind",
						"readonly": true,
						"options":  map[string]any{"ratio": 0.75, "labels": []any{"a", "b"}},
					},
				},
				Env:          map[string]string{"PORT": "${NOMAD_PORT_http}", "MODE": "prod"},
				VolumeMounts: []*api.VolumeMount{{Volume: new("certs"), Destination: new("/etc/tls"), ReadOnly: new(true)}},
				Meta:         map[string]string{"task": "server"},
				Constraints:  []*api.Constraint{{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "=="}},
				Affinities:   []*api.Affinity{{LTarget: "${attr.cpu.numcores}", RTarget: "8", Operand: ">="}},
				Services: []*api.Service{{
					Name:              "server-internal",
					PortLabel:         "admin",
					Provider:          "nomad",
					TaskName:          "server",
					EnableTagOverride: true,
					AddressMode:       "host",
					OnUpdate:          "ignore",
					CanaryMeta:        map[string]string{"canary": "yes"},
					Kind:              "",
				}},
				Resources: &api.Resources{
					CPU:         new(500),
					MemoryMB:    new(256),
					MemoryMaxMB: new(512),
					DiskMB:      new(100),
				},
				RestartPolicy: &api.RestartPolicy{Attempts: new(1), RenderTemplates: new(true)},
				KillTimeout:   new(30 * time.Second),
				LogConfig:     &api.LogConfig{MaxFiles: new(3), MaxFileSizeMB: new(20)},
				Identity:      &api.WorkloadIdentity{Name: "default", Audience: []string{"nomadproject.io"}, Env: true, File: true},
				Artifacts: []*api.TaskArtifact{{
					GetterSource:  new("https://example.com/server.tar.gz"),
					GetterOptions: map[string]string{"checksum": "sha256:abcd"},
					GetterHeaders: map[string]string{"Authorization": "Bearer x"},
				}, {
					GetterSource:   new("https://example.com/config.json"),
					GetterMode:     new("file"),
					Chown:          true,
					GetterInsecure: new(true),
				}},
				Templates: []*api.Template{{
					EmbeddedTmpl: new("PORT={{ env \"NOMAD_PORT_http\" }}\n"),
					DestPath:     new("secrets/env"),
					Envvars:      new(true),
					ChangeMode:   new("signal"),
					ChangeSignal: new("sigusr1"),
					Uid:          new(1000),
					Gid:          new(1000),
					Wait:         &api.WaitConfig{Min: new(2 * time.Second), Max: new(10 * time.Second)},
				}, {
					SourcePath: new("local/app.tpl"),
					DestPath:   new("local/app.conf"),
					ChangeMode: new("script"),
					ChangeScript: &api.ChangeScript{
						Command:          new("/bin/reload"),
						Args:             []string{"-q"},
						FailOnError:      new(true),
						RunOnFirstRender: new(true),
					},
					Once:          new(true),
					Perms:         new("0600"),
					LeftDelim:     new("[["),
					RightDelim:    new("]]"),
					ErrMissingKey: new(true),
					Splay:         new(time.Duration(0)),
				}},
				Leader:        true,
				ShutdownDelay: 2 * time.Second,
				KillSignal:    "SIGINT",
			}, {
				Name:      "log-shipper",
				Driver:    "raw_exec",
				Config:    map[string]any{"command": "/bin/ship"},
				Lifecycle: &api.TaskLifecycle{Hook: "poststart", Sidecar: true},
				Resources: &api.Resources{Cores: new(1)},
				LogConfig: &api.LogConfig{Disabled: new(true)},
				Kind:      "connect-proxy:web",
			}},
		}},
	}
}

// apiBatchJob is a periodic batch job with max_run_duration, lifecycle
// hooks and a dispatch payload task.
func apiBatchJob() *api.Job {
	return &api.Job{
		ID:          new("report"),
		Type:        new("batch"),
		Datacenters: []string{"*"},
		Periodic: &api.PeriodicConfig{
			Specs:           []string{"0 2 * * *", "30 14 * * 1-5"},
			ProhibitOverlap: new(true),
			TimeZone:        new("Europe/Berlin"),
		},
		TaskGroups: []*api.TaskGroup{{
			Name:             new("build"),
			MaxRunDuration:   new(10 * time.Minute),
			ReschedulePolicy: &api.ReschedulePolicy{Attempts: new(3), Delay: new(10 * time.Second)},
			Tasks: []*api.Task{{
				Name:      "prepare",
				Driver:    "raw_exec",
				Config:    map[string]any{"command": "/bin/prepare"},
				Lifecycle: &api.TaskLifecycle{Hook: "prestart"},
			}, {
				Name:            "main",
				Driver:          "raw_exec",
				Config:          map[string]any{"command": "/bin/report", "args": []any{"--since", "24h"}},
				DispatchPayload: &api.DispatchPayloadConfig{File: "input.json"},
				Resources: &api.Resources{
					CPU:      new(1000),
					MemoryMB: new(1024),
					Networks: []*api.NetworkResource{{
						Device:       "eth0",
						CIDR:         "10.0.0.0/24",
						IP:           "10.0.0.9",
						DynamicPorts: []api.Port{{Label: "rpc"}},
					}},
				},
			}, {
				Name:      "upload",
				Driver:    "raw_exec",
				Config:    map[string]any{"command": "/bin/upload"},
				Lifecycle: &api.TaskLifecycle{Hook: "poststop"},
			}},
		}},
	}
}

// apiParameterizedJob is a sysbatch job dispatched with a payload.
func apiParameterizedJob() *api.Job {
	return &api.Job{
		ID:          new("reindex"),
		Type:        new("sysbatch"),
		Datacenters: []string{"dc1"},
		ParameterizedJob: &api.ParameterizedJobConfig{
			Payload:      "required",
			MetaRequired: []string{"index"},
			MetaOptional: []string{"shard", "dry_run"},
		},
		TaskGroups: []*api.TaskGroup{{
			Name:           new("reindex"),
			MaxRunDuration: new(90 * time.Second),
			Tasks: []*api.Task{{
				Name:            "run",
				Driver:          "raw_exec",
				Config:          map[string]any{"command": "/bin/reindex"},
				DispatchPayload: &api.DispatchPayloadConfig{File: "payload"},
			}},
		}},
	}
}

// apiDispatchedChild is a dispatched child as the server stores it.
func apiDispatchedChild() *api.Job {
	j := apiParameterizedJob()
	j.ID = new("reindex/dispatch-1700000000-abcd1234")
	j.ParentID = new("reindex")
	j.Dispatched = true
	j.DispatchIdempotencyToken = new("tok-1")
	j.Payload = []byte(`{"index":"users"}`)
	j.Meta = map[string]string{"index": "users"}
	j.Stop = new(true)
	j.Status = new("dead")
	j.StatusDescription = new("")
	j.Stable = new(true)
	j.Version = new(uint64(3))
	j.SubmitTime = new(int64(1700000000123456789))
	j.CreateIndex = new(uint64(10))
	j.ModifyIndex = new(uint64(12))
	j.JobModifyIndex = new(uint64(11))
	return j
}

// apiSystemJob is a system job with a group-level network.
func apiSystemJob() *api.Job {
	return &api.Job{
		ID:          new("node-exporter"),
		Type:        new("system"),
		Datacenters: []string{"dc1"},
		TaskGroups: []*api.TaskGroup{{
			Name:     new("exporter"),
			Networks: []*api.NetworkResource{{ReservedPorts: []api.Port{{Label: "metrics", Value: 9100}}, MBits: new(10)}},
			Tasks: []*api.Task{{
				Name:   "exporter",
				Driver: "raw_exec",
				Config: map[string]any{"command": "/bin/node_exporter"},
			}},
		}},
	}
}

// apiCronJob is a periodic batch job with a single cron spec.
func apiCronJob() *api.Job {
	return &api.Job{
		ID:          new("cleanup"),
		Type:        new("batch"),
		Datacenters: []string{"dc1"},
		Periodic:    &api.PeriodicConfig{Spec: new("@hourly"), Enabled: new(false)},
		TaskGroups: []*api.TaskGroup{{
			Name:  new("cleanup"),
			Tasks: []*api.Task{{Name: "rm", Driver: "raw_exec", Config: map[string]any{"command": "/bin/rm"}}},
		}},
	}
}
