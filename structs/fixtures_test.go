package structs

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
				PortLabel: "metrics",
			}},
			Meta:          map[string]string{"group": "frontend"},
			ShutdownDelay: new(5 * time.Second),
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
				Env:         map[string]string{"PORT": "${NOMAD_PORT_http}", "MODE": "prod"},
				Meta:        map[string]string{"task": "server"},
				Constraints: []*api.Constraint{{LTarget: "${attr.cpu.arch}", RTarget: "amd64", Operand: "=="}},
				Affinities:  []*api.Affinity{{LTarget: "${attr.cpu.numcores}", RTarget: "8", Operand: ">="}},
				Services: []*api.Service{{
					Name:              "server-internal",
					PortLabel:         "admin",
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

// testJob returns a canonicalized, valid internal service job.
func testJob() *Job {
	aj := apiServiceJob()
	aj.Canonicalize()
	j := ApiJobToStructJob(aj)
	j.Canonicalize()
	return j
}

// testBatchJob returns a canonicalized, valid internal batch job with a
// max_run_duration.
func testBatchJob() *Job {
	aj := apiBatchJob()
	aj.Canonicalize()
	j := ApiJobToStructJob(aj)
	j.Canonicalize()
	return j
}

// testTime is a wall-clock time without monotonic reading, in UTC.
func testTime(sec int64) time.Time {
	return time.Unix(1_700_000_000+sec, 123456789).UTC()
}

func testEval() *Evaluation {
	return &Evaluation{
		ID:                "8d3c2f6e-1b0a-4c1e-9f3a-0d2b7c6e5a41",
		Namespace:         "default",
		Priority:          50,
		Type:              JobTypeBatch,
		TriggeredBy:       EvalTriggerJobRegister,
		JobID:             "report",
		JobModifyIndex:    7,
		Status:            EvalStatusBlocked,
		StatusDescription: "created to place remaining allocations",
		Wait:              3 * time.Second,
		WaitUntil:         testTime(60),
		PreviousEval:      "f1c6a0b2-3d4e-4f5a-8b9c-0d1e2f3a4b5c",
		FailedTGAllocs: map[string]*AllocMetric{
			"build": {
				NodesEvaluated:     4,
				NodesFiltered:      1,
				NodesInPool:        4,
				NodePool:           "default",
				NodesAvailable:     map[string]int{"dc1": 4},
				ClassFiltered:      map[string]int{"gpu": 1},
				ConstraintFiltered: map[string]int{"${attr.kernel.name} = linux": 1},
				NodesExhausted:     3,
				DimensionExhausted: map[string]int{"memory": 3},
				QuotaExhausted:     []string{},
				Scores:             map[string]float64{"binpack": 0.75},
				ScoreMetaData: []*NodeScoreMeta{
					{NodeID: "n1", Scores: map[string]float64{"binpack": 0.5}, NormScore: 0.5},
				},
				AllocationTime:    1500 * time.Microsecond,
				CoalescedFailures: 2,
				Infeasible:        true,
				InfeasibleReason:  "memory exceeds every node's total",
			},
		},
		ClassEligibility:  map[string]bool{"v1:123": true, "v1:456": false},
		QueuedAllocations: map[string]int{"build": 3},
		SnapshotIndex:     41,
		CreateIndex:       42,
		ModifyIndex:       43,
		CreateTime:        testTime(0).UnixNano(),
		ModifyTime:        testTime(1).UnixNano(),
	}
}

func testAlloc(j *Job) *Allocation {
	return &Allocation{
		ID:        "0b7a3c3e-5a0f-4a57-a1f0-2f5a9a3b8c11",
		Namespace: j.Namespace,
		EvalID:    "8d3c2f6e-1b0a-4c1e-9f3a-0d2b7c6e5a41",
		Name:      AllocName(j.ID, "build", 0),
		NodeID:    "c4a1f6a9-3d57-4d0e-8e7a-8c2b8c6a1f00",
		NodeName:  "worker-1",
		JobID:     j.ID,
		Job:       j,
		TaskGroup: "build",
		Resources: &Resources{CPU: 1100, MemoryMB: 1324, DiskMB: 300},
		TaskResources: map[string]*Resources{
			"main": {CPU: 1000, MemoryMB: 1024, Networks: []*NetworkResource{{IP: "10.0.0.5", DynamicPorts: []Port{{Label: "http", Value: 23456}}}}},
		},
		AllocatedResources: &AllocatedResources{
			Tasks: map[string]*AllocatedTaskResources{
				"main": {
					Cpu:    AllocatedCpuResources{CpuShares: 1000, ReservedCores: []uint16{2, 3}},
					Memory: AllocatedMemoryResources{MemoryMB: 1024, MemoryMaxMB: 2048},
				},
			},
			Shared: AllocatedSharedResources{DiskMB: 300},
		},
		Metrics:            &AllocMetric{NodesEvaluated: 2, Scores: map[string]float64{"binpack": 0.9}},
		DesiredStatus:      AllocDesiredStatusRun,
		DesiredDescription: "",
		DesiredTransition:  DesiredTransition{Reschedule: new(true)},
		ClientStatus:       AllocClientStatusRunning,
		ClientDescription:  "Tasks are running",
		TaskStates: map[string]*TaskState{
			"main": {
				State:       TaskStateRunning,
				Restarts:    1,
				LastRestart: testTime(30),
				StartedAt:   testTime(31),
				Events: []*TaskEvent{
					{Type: TaskReceived, Time: testTime(2).UnixNano(), DisplayMessage: "Task received by client"},
					{Type: TaskStarted, Time: testTime(31).UnixNano(), Details: map[string]string{"pid": "4242"}},
				},
			},
			"prepare": {
				State:      TaskStateDead,
				StartedAt:  testTime(3),
				FinishedAt: testTime(29),
				Events: []*TaskEvent{
					{Type: TaskTerminated, Time: testTime(29).UnixNano(), ExitCode: 0, KillTimeout: 5 * time.Second},
				},
			},
		},
		PreviousAllocation: "5e1d2c3b-4a59-4687-9a0b-c1d2e3f4a5b6",
		RescheduleTracker: &RescheduleTracker{Events: []*RescheduleEvent{
			{RescheduleTime: testTime(-100).UnixNano(), PrevAllocID: "5e1d2c3b-4a59-4687-9a0b-c1d2e3f4a5b6", PrevNodeID: "n0", Delay: 5 * time.Second},
		}},
		CreateIndex:      50,
		ModifyIndex:      55,
		AllocModifyIndex: 50,
		CreateTime:       testTime(1).UnixNano(),
		ModifyTime:       testTime(40).UnixNano(),
	}
}

func testNode() *Node {
	return &Node{
		ID:         "c4a1f6a9-3d57-4d0e-8e7a-8c2b8c6a1f00",
		SecretID:   "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d",
		Datacenter: "dc1",
		Name:       "worker-1",
		HTTPAddr:   "10.0.0.5:4646",
		Attributes: map[string]string{"kernel.name": "linux", "cpu.arch": "amd64", "nomad.version": "1.9.0"},
		Meta:       map[string]string{"rack": "r1"},
		NodeClass:  "general",
		NodePool:   "default",

		ComputedClass: "v1:123",
		NodeResources: &NodeResources{
			Cpu:            NodeCpuResources{CpuShares: 8000, TotalCpuCores: 4, ReservableCpuCores: []uint16{0, 1, 2, 3}},
			Memory:         NodeMemoryResources{MemoryMB: 16384},
			Disk:           NodeDiskResources{DiskMB: 100000},
			Networks:       []*NetworkResource{{Mode: "host", Device: "eth0", CIDR: "10.0.0.5/32", IP: "10.0.0.5", MBits: 1000}},
			MinDynamicPort: 20000,
			MaxDynamicPort: 32000,
		},
		ReservedResources: &NodeReservedResources{
			Cpu:      NodeReservedCpuResources{CpuShares: 500},
			Memory:   NodeReservedMemoryResources{MemoryMB: 512},
			Networks: NodeReservedNetworkResources{ReservedHostPorts: "22,80"},
		},
		Drivers: map[string]*DriverInfo{
			"raw_exec": {Attributes: map[string]string{"driver.raw_exec": "1"}, Detected: true, Healthy: true, HealthDescription: "Healthy", UpdateTime: testTime(5)},
		},
		SchedulingEligibility: NodeSchedulingEligible,
		Status:                NodeStatusReady,
		StatusUpdatedAt:       testTime(6).Unix(),
		Events: []*NodeEvent{
			{Message: "Node registered", Subsystem: "Cluster", Timestamp: testTime(0), CreateIndex: 3},
		},
		CreateIndex: 3,
		ModifyIndex: 9,
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
