package structs

import "time"

// testJob returns a canonicalized, valid internal service job that sets
// nearly every field of the model.
func testJob() *Job {
	return &Job{
		Region:    "europe",
		Namespace: "team-a",
		ID:        "web",
		Name:      "web-frontend",
		Type:      "service",
		Priority:  70,
		AllAtOnce: true,
		Datacenters: []string{
			"dc1",
			"dc2",
		},
		NodePool: "edge",
		Constraints: []*Constraint{
			{
				LTarget: "${attr.kernel.name}",
				RTarget: "linux",
				Operand: "=",
			},
			{
				LTarget: "${attr.nomad.version}",
				RTarget: ">= 1.6.0, < 2.0",
				Operand: "version",
			},
			{
				RTarget: "true",
				Operand: "distinct_hosts",
			},
		},
		Affinities: []*Affinity{
			{
				LTarget: "${node.datacenter}",
				RTarget: "dc1",
				Operand: "=",
				Weight:  80,
			},
		},
		Spreads: []*Spread{
			{
				Attribute: "${node.datacenter}",
				Weight:    60,
				SpreadTarget: []*SpreadTarget{
					{
						Value:   "dc1",
						Percent: 70,
					},
					{
						Value:   "dc2",
						Percent: 30,
					},
				},
			},
		},
		TaskGroups: []*TaskGroup{
			{
				Name:  "frontend",
				Count: 3,
				Constraints: []*Constraint{
					{
						LTarget: "${meta.rack}",
						RTarget: "r[0-9]+",
						Operand: "regexp",
					},
					{
						LTarget: "${meta.rack}",
						RTarget: "2",
						Operand: "distinct_property",
					},
				},
				Affinities: []*Affinity{
					{
						LTarget: "${node.class}",
						RTarget: "fast,ssd",
						Operand: "set_contains_any",
						Weight:  50,
					},
				},
				Spreads: []*Spread{
					{
						Attribute: "${meta.rack}",
						Weight:    50,
					},
				},
				Tasks: []*Task{
					{
						Name:   "server",
						Driver: "raw_exec",
						User:   "nobody",
						Config: map[string]interface{}{
							"args": []interface{}{
								"-listen",
								":8080",
								"-v",
							},
							"command": "/usr/local/bin/server",
							"mount": map[string]interface{}{
								"options": map[string]interface{}{
									"labels": []interface{}{
										"a",
										"b",
									},
									"ratio": float64(0.75),
								},
								"readonly": true,
								"type":     "bind",
							},
							"port_map": []interface{}{
								map[string]interface{}{
									"admin": int64(9000),
									"http":  int64(8080),
								},
							},
						},
						Env: map[string]string{
							"MODE": "prod",
							"PORT": "${NOMAD_PORT_http}",
						},
						Services: []*Service{
							{
								Name:              "server-internal",
								PortLabel:         "admin",
								Provider:          "nomad",
								AddressMode:       "host",
								EnableTagOverride: true,
								CanaryMeta: map[string]string{
									"canary": "yes",
								},
								OnUpdate: "ignore",
								Cluster:  "default",
							},
						},
						Constraints: []*Constraint{
							{
								LTarget: "${attr.cpu.arch}",
								RTarget: "amd64",
								Operand: "==",
							},
						},
						Affinities: []*Affinity{
							{
								LTarget: "${attr.cpu.numcores}",
								RTarget: "8",
								Operand: ">=",
								Weight:  50,
							},
						},
						Resources: &Resources{
							CPU:         500,
							MemoryMB:    256,
							MemoryMaxMB: 512,
							DiskMB:      100,
						},
						RestartPolicy: &RestartPolicy{
							Attempts:        1,
							Interval:        30 * time.Minute,
							Delay:           15 * time.Second,
							Mode:            "delay",
							RenderTemplates: true,
						},
						Meta: map[string]string{
							"task": "server",
						},
						KillTimeout: 30 * time.Second,
						LogConfig: &LogConfig{
							MaxFiles:      3,
							MaxFileSizeMB: 20,
						},
						Artifacts: []*TaskArtifact{
							{
								GetterSource: "https://example.com/server.tar.gz",
								GetterOptions: map[string]string{
									"checksum": "sha256:abcd",
								},
								GetterHeaders: map[string]string{
									"Authorization": "Bearer x",
								},
								GetterMode:   "any",
								RelativeDest: "local/",
							},
							{
								GetterSource:   "https://example.com/config.json",
								GetterMode:     "file",
								RelativeDest:   "local/config.json",
								GetterInsecure: true,
								Chown:          true,
							},
						},
						Templates: []*Template{
							{
								DestPath:     "secrets/env",
								EmbeddedTmpl: "PORT={{ env \"NOMAD_PORT_http\" }}\n",
								ChangeMode:   "signal",
								ChangeSignal: "SIGUSR1",
								Splay:        5 * time.Second,
								Perms:        "0644",
								LeftDelim:    "{{",
								RightDelim:   "}}",
								Envvars:      true,
								Uid:          new(int(1000)),
								Gid:          new(int(1000)),
								Wait: &WaitConfig{
									Min: new(2 * time.Second),
									Max: new(10 * time.Second),
								},
							},
							{
								SourcePath: "local/app.tpl",
								DestPath:   "local/app.conf",
								ChangeMode: "script",
								Perms:      "0600",
								LeftDelim:  "[[",
								RightDelim: "]]",
								ChangeScript: &ChangeScript{
									Command: "/bin/reload",
									Args: []string{
										"-q",
									},
									Timeout:          5 * time.Second,
									FailOnError:      true,
									RunOnFirstRender: true,
								},
								Once:          true,
								ErrMissingKey: true,
							},
						},
						Leader:        true,
						ShutdownDelay: 2 * time.Second,
						KillSignal:    "SIGINT",
						Identity: &WorkloadIdentity{
							Name: "default",
							Audience: []string{
								"nomadproject.io",
							},
							Env:  true,
							File: true,
						},
					},
					{
						Name:   "log-shipper",
						Driver: "raw_exec",
						Config: map[string]interface{}{
							"command": "/bin/ship",
						},
						Resources: &Resources{
							Cores:    1,
							MemoryMB: 300,
						},
						RestartPolicy: &RestartPolicy{
							Attempts: 5,
							Interval: 30 * time.Minute,
							Delay:    15 * time.Second,
							Mode:     "delay",
						},
						Lifecycle: &TaskLifecycle{
							Hook:    "poststart",
							Sidecar: true,
						},
						KillTimeout: 5 * time.Second,
						LogConfig: &LogConfig{
							MaxFiles:      10,
							MaxFileSizeMB: 10,
							Disabled:      true,
						},
						Kind: "connect-proxy:web",
					},
				},
				RestartPolicy: &RestartPolicy{
					Attempts: 5,
					Interval: 30 * time.Minute,
					Delay:    15 * time.Second,
					Mode:     "delay",
				},
				ReschedulePolicy: &ReschedulePolicy{
					Delay:         20 * time.Second,
					DelayFunction: "fibonacci",
					MaxDelay:      30 * time.Minute,
					Unlimited:     true,
				},
				EphemeralDisk: &EphemeralDisk{
					Sticky:  true,
					SizeMB:  500,
					Migrate: true,
				},
				Update: &UpdateStrategy{
					Stagger:          30 * time.Second,
					MaxParallel:      2,
					HealthCheck:      "task_states",
					MinHealthyTime:   15 * time.Second,
					HealthyDeadline:  3 * time.Minute,
					ProgressDeadline: 10 * time.Minute,
					AutoRevert:       true,
					AutoPromote:      true,
					Canary:           2,
				},
				Migrate: &MigrateStrategy{
					MaxParallel:     3,
					HealthCheck:     "task_states",
					MinHealthyTime:  20 * time.Second,
					HealthyDeadline: 4 * time.Minute,
				},
				Networks: []*NetworkResource{
					{
						Mode:     "bridge",
						Hostname: "web-${NOMAD_ALLOC_INDEX}",
						ReservedPorts: []Port{
							{
								Label:           "admin",
								Value:           9000,
								To:              9000,
								HostNetwork:     "private",
								IgnoreCollision: true,
							},
						},
						DynamicPorts: []Port{
							{
								Label: "http",
								To:    8080,
							},
							{
								Label: "metrics",
								To:    -1,
							},
						},
						DNS: &DNSConfig{
							Servers: []string{
								"10.0.0.53",
							},
							Searches: []string{
								"svc",
							},
							Options: []string{
								"ndots:2",
							},
						},
						CNI: &CNIConfig{
							Args: map[string]string{
								"IgnoreUnknown": "true",
							},
						},
					},
				},
				Services: []*Service{
					{
						Name:      "web",
						PortLabel: "http",
						Tags: []string{
							"http",
							"public",
						},
						Provider:    "nomad",
						AddressMode: "auto",
						TaskName:    "server",
						CanaryTags: []string{
							"canary",
						},
						Address: "10.1.2.3",
						Meta: map[string]string{
							"version": "2",
						},
						TaggedAddresses: map[string]string{
							"lan": "10.1.2.3",
						},
						OnUpdate: "require_healthy",
						Cluster:  "default",
					},
					{
						Name:        "web-frontend-frontend",
						PortLabel:   "metrics",
						Provider:    "nomad",
						AddressMode: "auto",
						OnUpdate:    "require_healthy",
						Cluster:     "default",
					},
				},
				Meta: map[string]string{
					"group": "frontend",
				},
				ShutdownDelay: new(5 * time.Second),
			},
		},
		Update: UpdateStrategy{
			Stagger:          30 * time.Second,
			MaxParallel:      2,
			HealthCheck:      "task_states",
			MinHealthyTime:   15 * time.Second,
			HealthyDeadline:  3 * time.Minute,
			ProgressDeadline: 10 * time.Minute,
			AutoRevert:       true,
			Canary:           1,
		},
		Reschedule: &ReschedulePolicy{
			Delay:         20 * time.Second,
			DelayFunction: "fibonacci",
			MaxDelay:      30 * time.Minute,
			Unlimited:     true,
		},
		Migrate: &MigrateStrategy{
			MaxParallel:     3,
			HealthCheck:     "task_states",
			MinHealthyTime:  20 * time.Second,
			HealthyDeadline: 4 * time.Minute,
		},
		Meta: map[string]string{
			"owner": "team-a",
			"tier":  "frontend",
		},
	}
}

// testBatchJob returns a canonicalized, valid internal batch job with a
// max_run_duration.
func testBatchJob() *Job {
	return &Job{
		Region:    "global",
		Namespace: "default",
		ID:        "report",
		Name:      "report",
		Type:      "batch",
		Priority:  50,
		Datacenters: []string{
			"*",
		},
		NodePool: "default",
		TaskGroups: []*TaskGroup{
			{
				Name:  "build",
				Count: 1,
				Tasks: []*Task{
					{
						Name:   "prepare",
						Driver: "raw_exec",
						Config: map[string]interface{}{
							"command": "/bin/prepare",
						},
						Resources: &Resources{
							CPU:      100,
							MemoryMB: 300,
						},
						RestartPolicy: &RestartPolicy{
							Attempts: 3,
							Interval: 24 * time.Hour,
							Delay:    15 * time.Second,
							Mode:     "fail",
						},
						Lifecycle: &TaskLifecycle{
							Hook: "prestart",
						},
						KillTimeout: 5 * time.Second,
						LogConfig: &LogConfig{
							MaxFiles:      10,
							MaxFileSizeMB: 10,
						},
					},
					{
						Name:   "main",
						Driver: "raw_exec",
						Config: map[string]interface{}{
							"args": []interface{}{
								"--since",
								"24h",
							},
							"command": "/bin/report",
						},
						Resources: &Resources{
							CPU:      1000,
							MemoryMB: 1024,
							Networks: []*NetworkResource{
								{
									Device: "eth0",
									CIDR:   "10.0.0.0/24",
									IP:     "10.0.0.9",
									DynamicPorts: []Port{
										{
											Label: "rpc",
										},
									},
								},
							},
						},
						RestartPolicy: &RestartPolicy{
							Attempts: 3,
							Interval: 24 * time.Hour,
							Delay:    15 * time.Second,
							Mode:     "fail",
						},
						DispatchPayload: &DispatchPayloadConfig{
							File: "input.json",
						},
						KillTimeout: 5 * time.Second,
						LogConfig: &LogConfig{
							MaxFiles:      10,
							MaxFileSizeMB: 10,
						},
					},
					{
						Name:   "upload",
						Driver: "raw_exec",
						Config: map[string]interface{}{
							"command": "/bin/upload",
						},
						Resources: &Resources{
							CPU:      100,
							MemoryMB: 300,
						},
						RestartPolicy: &RestartPolicy{
							Attempts: 3,
							Interval: 24 * time.Hour,
							Delay:    15 * time.Second,
							Mode:     "fail",
						},
						Lifecycle: &TaskLifecycle{
							Hook: "poststop",
						},
						KillTimeout: 5 * time.Second,
						LogConfig: &LogConfig{
							MaxFiles:      10,
							MaxFileSizeMB: 10,
						},
					},
				},
				RestartPolicy: &RestartPolicy{
					Attempts: 3,
					Interval: 24 * time.Hour,
					Delay:    15 * time.Second,
					Mode:     "fail",
				},
				ReschedulePolicy: &ReschedulePolicy{
					Attempts:      3,
					Interval:      24 * time.Hour,
					Delay:         10 * time.Second,
					DelayFunction: "constant",
				},
				EphemeralDisk: &EphemeralDisk{
					SizeMB: 300,
				},
				MaxRunDuration: new(10 * time.Minute),
			},
		},
		Periodic: &PeriodicConfig{
			Enabled: true,
			Specs: []string{
				"0 2 * * *",
				"30 14 * * 1-5",
			},
			SpecType:        "cron",
			ProhibitOverlap: true,
			TimeZone:        "Europe/Berlin",
		},
	}
}

// testDispatchedChild returns a canonicalized, valid dispatched child of
// a parameterized job, with a payload.
func testDispatchedChild() *Job {
	return &Job{
		Region:    "global",
		Namespace: "default",
		ID:        "reindex/dispatch-1700000000-abcd1234",
		ParentID:  "reindex",
		Name:      "reindex/dispatch-1700000000-abcd1234",
		Type:      "sysbatch",
		Priority:  50,
		Datacenters: []string{
			"dc1",
		},
		NodePool: "default",
		TaskGroups: []*TaskGroup{
			{
				Name:  "reindex",
				Count: 1,
				Tasks: []*Task{
					{
						Name:   "run",
						Driver: "raw_exec",
						Config: map[string]interface{}{
							"command": "/bin/reindex",
						},
						Resources: &Resources{
							CPU:      100,
							MemoryMB: 300,
						},
						RestartPolicy: &RestartPolicy{
							Attempts: 3,
							Interval: 24 * time.Hour,
							Delay:    15 * time.Second,
							Mode:     "fail",
						},
						DispatchPayload: &DispatchPayloadConfig{
							File: "payload",
						},
						KillTimeout: 5 * time.Second,
						LogConfig: &LogConfig{
							MaxFiles:      10,
							MaxFileSizeMB: 10,
						},
					},
				},
				RestartPolicy: &RestartPolicy{
					Attempts: 3,
					Interval: 24 * time.Hour,
					Delay:    15 * time.Second,
					Mode:     "fail",
				},
				EphemeralDisk: &EphemeralDisk{
					SizeMB: 300,
				},
				MaxRunDuration: new(90 * time.Second),
			},
		},
		ParameterizedJob: &ParameterizedJobConfig{
			Payload: "required",
			MetaRequired: []string{
				"index",
			},
			MetaOptional: []string{
				"shard",
				"dry_run",
			},
		},
		Dispatched:               true,
		DispatchIdempotencyToken: "tok-1",
		Payload:                  []byte("{\"index\":\"users\"}"),
		Meta: map[string]string{
			"index": "users",
		},
		Stop:           true,
		Status:         "dead",
		Stable:         true,
		Version:        3,
		SubmitTime:     1700000000123456789,
		CreateIndex:    10,
		ModifyIndex:    12,
		JobModifyIndex: 11,
	}
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
					{NodeID: "n1", Scores: NodeScores{{Name: "binpack", Score: 0.5}}, NormScore: 0.5},
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
