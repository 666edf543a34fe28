package config

import (
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/nomadq/nomadq/structs"
	"github.com/nomadq/nomadq/tlsutil"
)

// The sections of an agent config file: for each block, the keys nomadq
// implements (and where they land in Config) and the Nomad keys it
// accepts but ignores with a warning. schema.go turns each into
// an hcl.BodySchema; the same tables serve HCL and JSON files.

func (d *cfgDecoder) top(c *Config, body hcl.Body) {
	d.decode(body, section{
		attrs: map[string]setter{
			"name":       d.str("name", &c.Name),
			"region":     d.str("region", &c.Region),
			"datacenter": d.str("datacenter", &c.Datacenter),
			"data_dir":   d.str("data_dir", &c.DataDir),
			"bind_addr":  d.str("bind_addr", &c.BindAddr),
			"log_level":  d.str("log_level", &c.LogLevel),
			"log_json":   d.enable("log_json", &c.LogJSON),
			// enable_debug opens /v1/agent/pprof/ and /v1/agent/host.
			"enable_debug": d.enable("enable_debug", &c.EnableDebug),
		},
		blocks: map[string]blockReader{
			"ports": block(func(b *hcl.Block) {
				d.decode(b.Body, section{path: "ports", attrs: map[string]setter{
					"http": d.integer("ports.http", &c.Ports.HTTP),
					"rpc":  d.integer("ports.rpc", &c.Ports.RPC),
					"serf": d.integer("ports.serf", &c.Ports.Serf),
				}})
			}),
			"addresses": block(func(b *hcl.Block) { d.addresses(b, "addresses", c.Addresses) }),
			"advertise": block(func(b *hcl.Block) { d.addresses(b, "advertise", c.AdvertiseAddrs) }),
			"server":    block(func(b *hcl.Block) { d.server(b, c.Server) }),
			"client":    block(func(b *hcl.Block) { d.client(b, c.Client) }),
			"plugin":    {labels: []string{"name"}, read: func(b *hcl.Block) { d.plugin(b, c) }},
			"telemetry": block(func(b *hcl.Block) { d.telemetry(b, c.Telemetry) }),
			"acl":       block(func(b *hcl.Block) { d.acl(b, c.ACL) }),
			"tls":       block(func(b *hcl.Block) { d.tls(b, c.TLS) }),
			"limits":    block(func(b *hcl.Block) { d.limits(b, c) }),
		},
		ignored: []string{
			"audit", "autopilot", "consul", "consuls", "vault", "vaults", "ui", "sentinel",
			"reporting", "keyring", "leave_on_interrupt", "leave_on_terminate", "enable_syslog",
			"syslog_facility", "disable_update_check", "disable_anonymous_signature", "http_api_response_headers",
			"plugin_dir", "log_file", "log_rotate_bytes", "log_rotate_duration", "log_rotate_max_files",
			"log_include_location", "rpc", "eventlog", "vault_namespace",
		},
	})
}

// limits reads the limits block: Nomad's four keys, and nomadq's own
// http_max_request_bytes (the request body cap) and the per-address caps
// on blocking queries and log streams.
func (d *cfgDecoder) limits(b *hcl.Block, c *Config) {
	p := "limits"
	l := &c.Limits
	maxBody := int(c.MaxRequestBody)
	d.decode(b.Body, section{
		path: p,
		attrs: map[string]setter{
			"https_handshake_timeout":              d.duration(p+".https_handshake_timeout", &l.HTTPSHandshakeTimeout),
			"http_max_conns_per_client":            d.integer(p+".http_max_conns_per_client", &l.HTTPMaxConnsPerClient),
			"rpc_handshake_timeout":                d.duration(p+".rpc_handshake_timeout", &l.RPCHandshakeTimeout),
			"rpc_max_conns_per_client":             d.integer(p+".rpc_max_conns_per_client", &l.RPCMaxConnsPerClient),
			"http_max_request_bytes":               d.integer(p+".http_max_request_bytes", &maxBody),
			"http_max_blocking_queries_per_client": d.integer(p+".http_max_blocking_queries_per_client", &l.HTTPMaxBlockingQueriesPerClient),
			"http_max_log_streams_per_client":      d.integer(p+".http_max_log_streams_per_client", &l.HTTPMaxLogStreamsPerClient),
		},
	})
	c.MaxRequestBody = int64(maxBody)
}

func (d *cfgDecoder) acl(b *hcl.Block, a *ACL) {
	p := "acl"
	d.decode(b.Body, section{
		path: p,
		attrs: map[string]setter{
			"enabled":                  d.enable(p+".enabled", &a.Enabled),
			"token_ttl":                d.duration(p+".token_ttl", &a.TokenTTL),
			"policy_ttl":               d.duration(p+".policy_ttl", &a.PolicyTTL),
			"role_ttl":                 d.duration(p+".role_ttl", &a.RoleTTL),
			"token_min_expiration_ttl": d.duration(p+".token_min_expiration_ttl", &a.TokenMinExpirationTTL),
			"token_max_expiration_ttl": d.duration(p+".token_max_expiration_ttl", &a.TokenMaxExpirationTTL),
		},
		ignored: []string{"replication_token"},
	})
}

// tls reads the tls block. Every key of Nomad's block is implemented, so
// anything else is an unknown key.
func (d *cfgDecoder) tls(b *hcl.Block, t *tlsutil.Config) {
	p := "tls"
	d.decode(b.Body, section{
		path: p,
		attrs: map[string]setter{
			"http":                   d.boolean(p+".http", &t.EnableHTTP),
			"rpc":                    d.boolean(p+".rpc", &t.EnableRPC),
			"ca_file":                d.str(p+".ca_file", &t.CAFile),
			"cert_file":              d.str(p+".cert_file", &t.CertFile),
			"key_file":               d.str(p+".key_file", &t.KeyFile),
			"verify_server_hostname": d.boolean(p+".verify_server_hostname", &t.VerifyServerHostname),
			"verify_https_client":    d.boolean(p+".verify_https_client", &t.VerifyHTTPSClient),
			"rpc_upgrade_mode":       d.boolean(p+".rpc_upgrade_mode", &t.RPCUpgradeMode),
			"tls_cipher_suites":      d.str(p+".tls_cipher_suites", &t.CipherSuites),
			"tls_min_version":        d.str(p+".tls_min_version", &t.MinVersion),
		},
	})
}

func (d *cfgDecoder) addresses(b *hcl.Block, path string, a *Addresses) {
	d.decode(b.Body, section{path: path, attrs: map[string]setter{
		"http": d.str(path+".http", &a.HTTP),
		"rpc":  d.str(path+".rpc", &a.RPC),
		"serf": d.str(path+".serf", &a.Serf),
	}})
}

func (d *cfgDecoder) server(b *hcl.Block, s *Server) {
	join := func(path string) map[string]setter {
		return map[string]setter{
			"retry_join":     d.strList(path+".retry_join", &s.RetryJoin),
			"retry_interval": d.duration(path+".retry_interval", &s.RetryInterval),
			"retry_max":      d.integer(path+".retry_max", &s.RetryMax),
		}
	}
	attrs := join("server")
	attrs["enabled"] = d.enable("server.enabled", &s.Enabled)
	attrs["bootstrap_expect"] = d.positive("server.bootstrap_expect", &s.BootstrapExpect)
	attrs["num_schedulers"] = d.integer("server.num_schedulers", &s.NumSchedulers)
	attrs["encrypt"] = d.str("server.encrypt", &s.EncryptKey)
	attrs["event_buffer_size"] = d.integer("server.event_buffer_size", &s.EventBufferSize)
	// Not positive: 0 is a setting of its own (no limit), as in Nomad.
	attrs["job_max_count"] = d.integer("server.job_max_count", &s.JobMaxCount)
	attrs["job_max_priority"] = d.integer("server.job_max_priority", &s.JobMaxPriority)
	attrs["job_default_priority"] = d.integer("server.job_default_priority", &s.JobDefaultPriority)
	attrs["enable_event_broker"] = func(v cty.Value, rng hcl.Range) {
		enabled := !s.DisableEventBroker
		d.boolean("server.enable_event_broker", &enabled)(v, rng)
		s.DisableEventBroker = !enabled
	}
	// Nomad refuses a job_gc_interval of 0 or less and raft values
	// below 1 (an interval below 5ms); a threshold of 0 or less could
	// only mean "collect at once", so it is refused too. The heartbeat
	// keys keep Nomad's meaning of 0, the default.
	d.serverTuning(attrs, s)
	d.decode(b.Body, section{
		path:  "server",
		attrs: attrs,
		blocks: map[string]blockReader{
			"server_join": block(func(b *hcl.Block) {
				d.decode(b.Body, section{path: "server.server_join", attrs: join("server.server_join"), ignored: []string{"start_join"}})
			}),
			"client_introduction": block(func(b *hcl.Block) {
				if s.ClientIntroduction == nil {
					s.ClientIntroduction = structs.DefaultNodeIntroductionConfig()
				}
				ci := s.ClientIntroduction
				p := "server.client_introduction"
				d.decode(b.Body, section{path: p, attrs: map[string]setter{
					"enforcement":          d.str(p+".enforcement", &ci.Enforcement),
					"default_identity_ttl": d.duration(p+".default_identity_ttl", &ci.DefaultIdentityTTL),
					"max_identity_ttl":     d.duration(p+".max_identity_ttl", &ci.MaxIdentityTTL),
				}})
			}),
			"default_scheduler_config": block(func(b *hcl.Block) {
				if s.DefaultSchedulerConfig == nil {
					s.DefaultSchedulerConfig = structs.DefaultSchedulerConfiguration()
				}
				d.schedulerConfig(b, s.DefaultSchedulerConfig)
			}),
		},
		ignored: []string{
			"raft_protocol", "raft_multiplier", "deployment_gc_threshold", "csi_volume_claim_gc_interval",
			"csi_volume_claim_gc_threshold", "csi_plugin_gc_threshold", "acl_token_gc_threshold", "root_key_gc_interval",
			"root_key_gc_threshold", "root_key_rotation_threshold", "rejoin_after_leave", "enabled_schedulers",
			"data_dir", "start_join", "authoritative_region", "non_voting_server", "redundancy_zone",
			"upgrade_version", "license_path", "plan_rejection_tracker", "raft_boltdb", "raft_logstore", "search",
			"job_max_source_size", "job_tracked_versions",
			"deployment_query_rate_limit", "license_env",
			"node_threshold", "oidc_issuer",
		},
	})
}

// serverTuning adds the server's garbage collection, heartbeat and Raft
// snapshot keys to attrs.
func (d *cfgDecoder) serverTuning(attrs map[string]setter, s *Server) {
	// atLeast reads a duration and refuses one below least (or, when
	// zeroOK, a negative one; 0 then keeps the default).
	atLeast := func(name string, into *time.Duration, least time.Duration, zeroOK bool) setter {
		key := "server." + name
		return func(v cty.Value, rng hcl.Range) {
			before := len(d.diags)
			dur := *into
			if d.duration(key, &dur)(v, rng); len(d.diags) > before {
				return
			}
			switch {
			case zeroOK && dur < 0:
				d.errorf(rng, "%s = %s: must be 0 (the default) or more", key, dur)
			case !zeroOK && dur < least:
				d.errorf(rng, "%s = %s: must be at least %s", key, dur, least)
			default:
				*into = dur
			}
		}
	}
	count := func(name string, into *int) setter {
		key := "server." + name
		return func(v cty.Value, rng hcl.Range) {
			before := len(d.diags)
			n := *into
			if d.integer(key, &n)(v, rng); len(d.diags) > before {
				return
			}
			if n < 1 {
				d.errorf(rng, "%s = %d: must be 1 or more", key, n)
				return
			}
			*into = n
		}
	}
	const tick = time.Nanosecond
	attrs["node_gc_threshold"] = atLeast("node_gc_threshold", &s.NodeGCThreshold, tick, false)
	attrs["job_gc_interval"] = atLeast("job_gc_interval", &s.JobGCInterval, tick, false)
	attrs["job_gc_threshold"] = atLeast("job_gc_threshold", &s.JobGCThreshold, tick, false)
	attrs["eval_gc_threshold"] = atLeast("eval_gc_threshold", &s.EvalGCThreshold, tick, false)
	attrs["batch_eval_gc_threshold"] = atLeast("batch_eval_gc_threshold", &s.BatchEvalGCThreshold, tick, false)
	attrs["heartbeat_grace"] = atLeast("heartbeat_grace", &s.HeartbeatGrace, 0, true)
	attrs["min_heartbeat_ttl"] = atLeast("min_heartbeat_ttl", &s.MinHeartbeatTTL, 0, true)
	attrs["failover_heartbeat_ttl"] = atLeast("failover_heartbeat_ttl", &s.FailoverHeartbeatTTL, 0, true)
	attrs["max_heartbeats_per_second"] = func(v cty.Value, rng hcl.Range) {
		const key = "server.max_heartbeats_per_second"
		if v.IsNull() || v.Type() != cty.Number {
			d.errorf(rng, "%s must be a number, got %s", key, friendly(v))
			return
		}
		f, _ := v.AsBigFloat().Float64()
		if f < 0 {
			d.errorf(rng, "%s = %g: must be 0 (the default) or more", key, f)
			return
		}
		s.MaxHeartbeatsPerSecond = f
	}
	attrs["raft_snapshot_threshold"] = count("raft_snapshot_threshold", &s.RaftSnapshotThreshold)
	attrs["raft_snapshot_interval"] = atLeast("raft_snapshot_interval", &s.RaftSnapshotInterval, 5*time.Millisecond, false)
	attrs["raft_trailing_logs"] = count("raft_trailing_logs", &s.RaftTrailingLogs)
}

func (d *cfgDecoder) schedulerConfig(b *hcl.Block, sc *structs.SchedulerConfiguration) {
	p := "server.default_scheduler_config"
	d.decode(b.Body, section{
		path: p,
		attrs: map[string]setter{
			"scheduler_algorithm":             d.str(p+".scheduler_algorithm", &sc.SchedulerAlgorithm),
			"memory_oversubscription_enabled": d.boolean(p+".memory_oversubscription_enabled", &sc.MemoryOversubscriptionEnabled),
			"reject_job_registration":         d.boolean(p+".reject_job_registration", &sc.RejectJobRegistration),
			"pause_eval_broker":               d.boolean(p+".pause_eval_broker", &sc.PauseEvalBroker),
		},
		blocks: map[string]blockReader{
			"preemption_config": block(func(b *hcl.Block) {
				pp := p + ".preemption_config"
				pc := &sc.PreemptionConfig
				d.decode(b.Body, section{path: pp, attrs: map[string]setter{
					"system_scheduler_enabled":   d.boolean(pp+".system_scheduler_enabled", &pc.SystemSchedulerEnabled),
					"sysbatch_scheduler_enabled": d.boolean(pp+".sysbatch_scheduler_enabled", &pc.SysBatchSchedulerEnabled),
					"batch_scheduler_enabled":    d.boolean(pp+".batch_scheduler_enabled", &pc.BatchSchedulerEnabled),
					"service_scheduler_enabled":  d.boolean(pp+".service_scheduler_enabled", &pc.ServiceSchedulerEnabled),
				}})
			}),
			"batch_queue": block(func(b *hcl.Block) {
				bp := p + ".batch_queue"
				bq := &sc.BatchQueue
				backfill, backfillSet := d.boolean(bp+".backfill", &bq.Backfill), false
				d.decode(b.Body, section{path: bp, attrs: map[string]setter{
					"enabled":               d.boolean(bp+".enabled", &bq.Enabled),
					"order":                 d.str(bp+".order", &bq.Order),
					"concurrent_placements": d.integer(bp+".concurrent_placements", &bq.ConcurrentPlacements),
					"workload_timeout":      d.duration(bp+".workload_timeout", &bq.WorkloadTimeout),
					"backfill": func(v cty.Value, rng hcl.Range) {
						backfillSet = true
						backfill(v, rng)
					},
				}, blocks: map[string]blockReader{
					// A block given starts from no weights, so a weight left
					// out does not count; left out whole, the defaults stay.
					"multifactor": block(func(b *hcl.Block) {
						mp := bp + ".multifactor"
						m := &bq.Multifactor
						*m = structs.BatchQueueMultifactor{MaxAge: structs.DefaultBatchQueueMaxAge, UsageHalfLife: structs.DefaultBatchQueueUsageHalfLife}
						weight := func(key string, into *float64) setter {
							return func(v cty.Value, rng hcl.Range) {
								if v.IsNull() || v.Type() != cty.Number {
									d.errorf(rng, "%s must be a number, got %s", key, friendly(v))
									return
								}
								*into, _ = v.AsBigFloat().Float64()
							}
						}
						d.decode(b.Body, section{path: mp, attrs: map[string]setter{
							"priority_weight":   weight(mp+".priority_weight", &m.PriorityWeight),
							"age_weight":        weight(mp+".age_weight", &m.AgeWeight),
							"fair_share_weight": weight(mp+".fair_share_weight", &m.FairShareWeight),
							"size_weight":       weight(mp+".size_weight", &m.SizeWeight),
							"max_age":           d.duration(mp+".max_age", &m.MaxAge),
							"usage_half_life":   d.duration(mp+".usage_half_life", &m.UsageHalfLife),
						}})
					}),
				}})
				bq.Canonicalize()
				if !backfillSet {
					bq.Backfill = structs.DefaultBatchQueueBackfill(bq.Order)
				}
			}),
		},
		ignored: []string{"node_limit_for_feasibility_checks"},
	})
}

func (d *cfgDecoder) client(b *hcl.Block, c *Client) {
	d.decode(b.Body, section{
		path: "client",
		attrs: map[string]setter{
			"enabled":           d.enable("client.enabled", &c.Enabled),
			"servers":           d.strList("client.servers", &c.Servers),
			"node_pool":         d.str("client.node_pool", &c.NodePool),
			"node_class":        d.str("client.node_class", &c.NodeClass),
			"meta":              d.strMap("client.meta", c.Meta),
			"options":           d.strMap("client.options", c.Options),
			"chroot_env":        d.strMap("client.chroot_env", c.ChrootEnv),
			"min_dynamic_port":  d.integer("client.min_dynamic_port", &c.MinDynamicPort),
			"max_dynamic_port":  d.integer("client.max_dynamic_port", &c.MaxDynamicPort),
			"network_interface": d.str("client.network_interface", &c.NetworkInterface),
			// Bridge and CNI networks (website/networking.md).
			"cni_path":                    d.str("client.cni_path", &c.CNIPath),
			"cni_config_dir":              d.str("client.cni_config_dir", &c.CNIConfigDir),
			"bridge_network_name":         d.str("client.bridge_network_name", &c.BridgeNetworkName),
			"bridge_network_subnet":       d.str("client.bridge_network_subnet", &c.BridgeNetworkSubnet),
			"bridge_network_subnet_ipv6":  d.str("client.bridge_network_subnet_ipv6", &c.BridgeNetworkSubnetIPv6),
			"bridge_network_hairpin_mode": d.boolean("client.bridge_network_hairpin_mode", &c.BridgeNetworkHairpinMode),
			// nomadq only: the node simulator.
			"sim_nodes":          d.integer("client.sim_nodes", &c.SimNodes),
			"sim_node_cpu":       d.integer("client.sim_node_cpu", &c.SimNodeCPU),
			"sim_node_memory_mb": d.integer("client.sim_node_memory_mb", &c.SimNodeMemoryMB),
		},
		blocks: map[string]blockReader{
			"meta":    block(func(b *hcl.Block) { d.mapBlock(b, "client.meta", c.Meta) }),
			"options": block(func(b *hcl.Block) { d.mapBlock(b, "client.options", c.Options) }),
			"chroot_env": block(func(b *hcl.Block) {
				d.mapBlock(b, "client.chroot_env", c.ChrootEnv)
			}),
			"host_volume": {labels: []string{"name"}, read: func(b *hcl.Block) { d.hostVolume(b, c) }},
		},
		ignored: []string{
			"state_dir", "alloc_dir", "alloc_mounts_dir", "network_speed", "cpu_total_compute",
			"cpu_disable_dmidecode", "memory_total_mb", "disk_total_mb", "disk_free_mb", "max_kill_timeout",
			"reserved", "gc_interval", "gc_disk_usage_threshold", "gc_inode_usage_threshold", "gc_max_allocs",
			"gc_parallel_destroys", "gc_volumes_on_node_gc", "host_network",
			"template", "drain_on_shutdown",
			"artifact",
			"disable_remote_exec", "no_host_uuid", "server_join", "node_max_allocs", "preferred_address_family",
			"cgroup_parent", "nomad_service_discovery",
			"intro_token", "host_volumes_dir", "host_volume_plugin_dir", "common_plugin_dir", "users",
			"consul", "vault", "fingerprint_plugins",
		},
	})
}

// hostVolume reads one host_volume "name" { path, read_only } block; a
// later file's block of the same name replaces an earlier one.
func (d *cfgDecoder) hostVolume(b *hcl.Block, c *Client) {
	v := &structs.ClientHostVolumeConfig{Name: b.Labels[0]}
	path := "client.host_volume." + v.Name
	d.decode(b.Body, section{
		path: path,
		attrs: map[string]setter{
			"path":      d.str(path+".path", &v.Path),
			"read_only": d.boolean(path+".read_only", &v.ReadOnly),
		},
	})
	for i, existing := range c.HostVolumes {
		if existing.Name == v.Name {
			c.HostVolumes[i] = v
			return
		}
	}
	c.HostVolumes = append(c.HostVolumes, v)
}

func (d *cfgDecoder) mapBlock(b *hcl.Block, path string, into map[string]string) {
	nested := func(nb *hclsyntax.Block) { d.errorf(nb.TypeRange, "unknown config key %q", path+"."+nb.Type) }
	for _, a := range d.justAttributes(path, b.Body, nested) {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			d.errorf(a.Range, "%s.%s: %s", path, a.Name, diags.Error())
			continue
		}
		if s, ok := d.toString(path+"."+a.Name, v, a.Range); ok {
			into[a.Name] = s
		}
	}
}

func (d *cfgDecoder) plugin(b *hcl.Block, c *Config) {
	pc := &Plugin{Name: b.Labels[0], Config: map[string]any{}}
	path := "plugin." + pc.Name
	d.decode(b.Body, section{
		path: path,
		blocks: map[string]blockReader{
			"config": block(func(cb *hcl.Block) {
				d.pluginConfig(path+".config", pc.Name, cb.Body, pc.Config)
			}),
		},
		ignored: []string{"args"},
	})
	if !slices.Contains(knownPlugins, pc.Name) {
		d.warnf(b.TypeRange, "plugin %q is not available in nomadq; only %s are", pc.Name, strings.Join(knownPlugins, ", "))
	}
	for _, existing := range c.Plugins {
		if existing.Name == pc.Name {
			for k, v := range pc.Config {
				existing.Config[k] = v
			}
			return
		}
	}
	c.Plugins = append(c.Plugins, pc)
}

// knownPlugins are the plugin blocks the agent hands to a driver.
var knownPlugins = []string{"docker", "raw_exec", "mock_driver"}

// pluginConfig decodes a plugin's config body into into. The docker
// driver's config has blocks (auth, gc, volumes, logging, tls ...): each
// becomes a list holding one map per block, the shape task configs have,
// and the driver checks them (client/drivers/docker's ParsePluginConfig).
// The other plugins take attributes only; a block there is ignored with
// a warning.
func (d *cfgDecoder) pluginConfig(path, plugin string, body hcl.Body, into map[string]any) {
	nested := func(nb *hclsyntax.Block) {
		if plugin != "docker" {
			d.warnf(nb.TypeRange, "plugin config block %q is ignored", path+"."+nb.Type)
			return
		}
		if len(nb.Labels) > 0 {
			d.errorf(nb.LabelRanges[0], "%s.%s: a plugin config block takes no label, got %q", path, nb.Type, nb.Labels[0])
			return
		}
		m := map[string]any{}
		d.pluginConfig(path+"."+nb.Type, plugin, nb.Body, m)
		list, _ := into[nb.Type].([]any)
		into[nb.Type] = append(list, m)
	}
	for _, a := range d.justAttributes(path, body, nested) {
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() {
			d.errorf(a.Range, "%s.%s: %s", path, a.Name, diags.Error())
			continue
		}
		into[a.Name] = ctyToGo(v)
	}
}

func (d *cfgDecoder) telemetry(b *hcl.Block, t *Telemetry) {
	p := "telemetry"
	d.decode(b.Body, section{
		path: p,
		attrs: map[string]setter{
			"collection_interval": func(v cty.Value, rng hcl.Range) {
				if s, ok := d.toString(p+".collection_interval", v, rng); ok {
					dur, err := time.ParseDuration(s)
					if err != nil {
						d.errorf(rng, "telemetry.collection_interval %q is not a duration", s)
						return
					}
					t.CollectionInterval, t.CollectionIntervalDur = s, dur
				}
			},
			"disable_hostname":              d.enable(p+".disable_hostname", &t.DisableHostname),
			"use_node_name":                 d.enable(p+".use_node_name", &t.UseNodeName),
			"prometheus_metrics":            d.enable(p+".prometheus_metrics", &t.PrometheusMetrics),
			"publish_allocation_metrics":    d.enable(p+".publish_allocation_metrics", &t.PublishAllocationMetrics),
			"publish_node_metrics":          d.enable(p+".publish_node_metrics", &t.PublishNodeMetrics),
			"publish_job_metrics":           d.boolean(p+".publish_job_metrics", &t.PublishJobMetrics),
			"statsite_address":              d.str(p+".statsite_address", &t.StatsiteAddr),
			"statsd_address":                d.str(p+".statsd_address", &t.StatsdAddr),
			"datadog_address":               d.str(p+".datadog_address", &t.DataDogAddr),
			"datadog_tags":                  d.strList(p+".datadog_tags", &t.DataDogTags),
			"prefix_filter":                 d.strList(p+".prefix_filter", &t.PrefixFilter),
			"in_memory_collection_interval": d.str(p+".in_memory_collection_interval", &t.InMemoryCollectionInterval),
			"in_memory_retention_period":    d.str(p+".in_memory_retention_period", &t.InMemoryRetentionPeriod),
			"filter_default": func(v cty.Value, rng hcl.Range) {
				var b bool
				d.boolean(p+".filter_default", &b)(v, rng)
				t.FilterDefault = &b
			},
		},
		ignored: []string{
			"disable_dispatched_job_summary_metrics", "disable_quota_utilization_metrics", "disable_rpc_rate_metrics_labels",
			"include_alloc_metadata_in_metrics", "allowed_metadata_keys_in_metrics", "circonus_api_token",
			"circonus_api_app", "circonus_api_url", "circonus_submission_interval", "circonus_submission_url",
			"circonus_check_id", "circonus_check_force_metric_activation", "circonus_check_instance_id",
			"circonus_check_search_tag", "circonus_check_display_name", "circonus_check_tags",
			"circonus_broker_id", "circonus_broker_select_tag",
		},
	})
}
