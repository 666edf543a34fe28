package agent

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/nomadq/nomadq/structs"
)

// LoadConfig reads the given files and directories in order on top of c;
// a directory contributes its *.hcl and *.json files in lexical order.
// Later files override earlier ones key by key. Keys Nomad has but nomadq
// does not implement are reported through warn and otherwise ignored; a
// key Nomad does not have is an error naming the key and its position.
func LoadConfig(c *Config, paths []string, warn func(string)) error {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("error loading configuration from %s: %w", p, err)
		}
		files := []string{p}
		if fi.IsDir() {
			entries, err := os.ReadDir(p)
			if err != nil {
				return fmt.Errorf("error loading configuration from %s: %w", p, err)
			}
			files = files[:0]
			for _, e := range entries {
				ext := filepath.Ext(e.Name())
				if !e.IsDir() && (ext == ".hcl" || ext == ".json") {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
			sort.Strings(files)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("error loading configuration from %s: %w", f, err)
			}
			if err := ParseConfig(c, f, src, warn); err != nil {
				return err
			}
			c.Files = append(c.Files, f)
		}
	}
	return nil
}

// ParseConfig applies one HCL config file's settings to c.
func ParseConfig(c *Config, filename string, src []byte, warn func(string)) error {
	if warn == nil {
		warn = func(string) {}
	}
	if strings.HasSuffix(filename, ".json") {
		return fmt.Errorf("error loading configuration from %s: JSON agent configuration is not supported; use HCL", filename)
	}
	f, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		return fmt.Errorf("error parsing %s: %s", filename, diags.Error())
	}
	d := &cfgDecoder{warn: warn}
	d.top(c, f.Body.(*hclsyntax.Body))
	return d.err()
}

// cfgDecoder walks the HCL syntax tree of an agent config file. Walking
// the tree (rather than decoding into tagged structs) lets it tell the
// three kinds of keys apart: implemented, Nomad's but not implemented
// (warned about), and unknown (an error with the key's position).
type cfgDecoder struct {
	warn  func(string)
	diags []string
}

func (d *cfgDecoder) err() error {
	if len(d.diags) == 0 {
		return nil
	}
	return errors.New(strings.Join(d.diags, "\n"))
}

func (d *cfgDecoder) errorf(rng hcl.Range, format string, args ...any) {
	d.diags = append(d.diags, fmt.Sprintf("%s:%d,%d: %s", rng.Filename, rng.Start.Line, rng.Start.Column, fmt.Sprintf(format, args...)))
}

// blockSpec says how to read one block's contents.
type blockSpec struct {
	path   string // for messages, e.g. "server.server_join"
	attrs  map[string]func(cty.Value, hcl.Range)
	blocks map[string]func(*hclsyntax.Block)
	// ignored are Nomad keys (attributes or blocks) nomadq accepts and
	// ignores with a warning.
	ignored []string
}

func (d *cfgDecoder) walk(body *hclsyntax.Body, spec blockSpec) {
	names := make([]string, 0, len(body.Attributes))
	for name := range body.Attributes {
		names = append(names, name)
	}
	sort.Slice(names, func(a, b int) bool {
		return body.Attributes[names[a]].SrcRange.Start.Byte < body.Attributes[names[b]].SrcRange.Start.Byte
	})
	for _, name := range names {
		attr := body.Attributes[name]
		if set, ok := spec.attrs[name]; ok {
			v, diags := attr.Expr.Value(nil)
			if diags.HasErrors() {
				d.errorf(attr.SrcRange, "%s: %s", d.key(spec, name), diags.Error())
				continue
			}
			set(v, attr.SrcRange)
			continue
		}
		d.unknownOrIgnored(spec, name, attr.SrcRange)
	}
	for _, b := range body.Blocks {
		if read, ok := spec.blocks[b.Type]; ok {
			read(b)
			continue
		}
		d.unknownOrIgnored(spec, b.Type, b.TypeRange)
	}
}

func (d *cfgDecoder) key(spec blockSpec, name string) string {
	if spec.path == "" {
		return name
	}
	return spec.path + "." + name
}

func (d *cfgDecoder) unknownOrIgnored(spec blockSpec, name string, rng hcl.Range) {
	for _, ig := range spec.ignored {
		if ig == name {
			d.warn(fmt.Sprintf("%s:%d,%d: config key %q is not implemented by nomadq and is ignored", rng.Filename, rng.Start.Line, rng.Start.Column, d.key(spec, name)))
			return
		}
	}
	d.errorf(rng, "unknown config key %q", d.key(spec, name))
}

func (d *cfgDecoder) top(c *Config, body *hclsyntax.Body) {
	d.walk(body, blockSpec{
		attrs: map[string]func(cty.Value, hcl.Range){
			"name":       d.str("name", &c.Name),
			"region":     d.str("region", &c.Region),
			"datacenter": d.str("datacenter", &c.Datacenter),
			"data_dir":   d.str("data_dir", &c.DataDir),
			"bind_addr":  d.str("bind_addr", &c.BindAddr),
			"log_level":  d.str("log_level", &c.LogLevel),
			"log_json":   d.boolean("log_json", &c.LogJSON),
		},
		blocks: map[string]func(*hclsyntax.Block){
			"ports": func(b *hclsyntax.Block) {
				d.walk(b.Body, blockSpec{path: "ports", attrs: map[string]func(cty.Value, hcl.Range){
					"http": d.integer("ports.http", &c.Ports.HTTP),
					"rpc":  d.integer("ports.rpc", &c.Ports.RPC),
					"serf": d.integer("ports.serf", &c.Ports.Serf),
				}})
			},
			"addresses": func(b *hclsyntax.Block) { d.addresses(b, "addresses", c.Addresses) },
			"advertise": func(b *hclsyntax.Block) { d.addresses(b, "advertise", c.AdvertiseAddrs) },
			"server":    func(b *hclsyntax.Block) { d.server(b, c.Server) },
			"client":    func(b *hclsyntax.Block) { d.client(b, c.Client) },
			"plugin":    func(b *hclsyntax.Block) { d.plugin(b, c) },
			"telemetry": func(b *hclsyntax.Block) { d.telemetry(b, c.Telemetry) },
		},
		ignored: []string{
			"acl", "audit", "autopilot", "consul", "consuls", "vault", "vaults", "tls", "ui", "sentinel",
			"reporting", "keyring", "limits", "leave_on_interrupt", "leave_on_terminate", "enable_syslog",
			"syslog_facility", "disable_update_check", "disable_anonymous_signature", "http_api_response_headers",
			"enable_debug", "plugin_dir", "log_file", "log_rotate_bytes", "log_rotate_duration", "log_rotate_max_files",
			"log_include_location", "rpc", "eventlog", "vault_namespace",
		},
	})
}

func (d *cfgDecoder) addresses(b *hclsyntax.Block, path string, a *Addresses) {
	d.walk(b.Body, blockSpec{path: path, attrs: map[string]func(cty.Value, hcl.Range){
		"http": d.str(path+".http", &a.HTTP),
		"rpc":  d.str(path+".rpc", &a.RPC),
		"serf": d.str(path+".serf", &a.Serf),
	}})
}

func (d *cfgDecoder) server(b *hclsyntax.Block, s *ServerConfig) {
	join := func(path string) map[string]func(cty.Value, hcl.Range) {
		return map[string]func(cty.Value, hcl.Range){
			"retry_join":     d.strList(path+".retry_join", &s.RetryJoin),
			"retry_interval": d.duration(path+".retry_interval", &s.RetryInterval),
			"retry_max":      d.integer(path+".retry_max", &s.RetryMax),
		}
	}
	attrs := join("server")
	attrs["enabled"] = d.boolean("server.enabled", &s.Enabled)
	attrs["bootstrap_expect"] = d.integer("server.bootstrap_expect", &s.BootstrapExpect)
	attrs["num_schedulers"] = d.integer("server.num_schedulers", &s.NumSchedulers)
	d.walk(b.Body, blockSpec{
		path:  "server",
		attrs: attrs,
		blocks: map[string]func(*hclsyntax.Block){
			"server_join": func(b *hclsyntax.Block) {
				d.walk(b.Body, blockSpec{path: "server.server_join", attrs: join("server.server_join"), ignored: []string{"start_join"}})
			},
			"default_scheduler_config": func(b *hclsyntax.Block) {
				if s.DefaultSchedulerConfig == nil {
					s.DefaultSchedulerConfig = structs.DefaultSchedulerConfiguration()
				}
				d.schedulerConfig(b, s.DefaultSchedulerConfig)
			},
		},
		ignored: []string{
			"raft_protocol", "raft_multiplier", "encrypt", "node_gc_threshold", "job_gc_interval", "job_gc_threshold",
			"eval_gc_threshold", "batch_eval_gc_threshold", "deployment_gc_threshold", "csi_volume_claim_gc_interval",
			"csi_volume_claim_gc_threshold", "csi_plugin_gc_threshold", "acl_token_gc_threshold", "root_key_gc_interval",
			"root_key_gc_threshold", "root_key_rotation_threshold", "heartbeat_grace", "min_heartbeat_ttl",
			"max_heartbeats_per_second", "failover_heartbeat_ttl", "rejoin_after_leave", "enabled_schedulers",
			"data_dir", "start_join", "authoritative_region", "non_voting_server", "redundancy_zone",
			"upgrade_version", "license_path", "plan_rejection_tracker", "raft_boltdb", "raft_logstore", "search",
			"job_max_priority", "job_default_priority", "job_max_source_size", "job_tracked_versions",
			"event_buffer_size", "enable_event_broker", "deployment_query_rate_limit", "license_env",
			"node_threshold", "client_introduction", "oidc_issuer", "raft_snapshot_threshold", "raft_snapshot_interval",
			"raft_trailing_logs",
		},
	})
}

func (d *cfgDecoder) schedulerConfig(b *hclsyntax.Block, sc *structs.SchedulerConfiguration) {
	p := "server.default_scheduler_config"
	d.walk(b.Body, blockSpec{
		path: p,
		attrs: map[string]func(cty.Value, hcl.Range){
			"scheduler_algorithm":             d.str(p+".scheduler_algorithm", &sc.SchedulerAlgorithm),
			"memory_oversubscription_enabled": d.boolean(p+".memory_oversubscription_enabled", &sc.MemoryOversubscriptionEnabled),
			"reject_job_registration":         d.boolean(p+".reject_job_registration", &sc.RejectJobRegistration),
			"pause_eval_broker":               d.boolean(p+".pause_eval_broker", &sc.PauseEvalBroker),
		},
		blocks: map[string]func(*hclsyntax.Block){
			"preemption_config": func(b *hclsyntax.Block) {
				pp := p + ".preemption_config"
				pc := &sc.PreemptionConfig
				d.walk(b.Body, blockSpec{path: pp, attrs: map[string]func(cty.Value, hcl.Range){
					"system_scheduler_enabled":   d.boolean(pp+".system_scheduler_enabled", &pc.SystemSchedulerEnabled),
					"sysbatch_scheduler_enabled": d.boolean(pp+".sysbatch_scheduler_enabled", &pc.SysBatchSchedulerEnabled),
					"batch_scheduler_enabled":    d.boolean(pp+".batch_scheduler_enabled", &pc.BatchSchedulerEnabled),
					"service_scheduler_enabled":  d.boolean(pp+".service_scheduler_enabled", &pc.ServiceSchedulerEnabled),
				}})
			},
			"batch_queue": func(b *hclsyntax.Block) {
				bp := p + ".batch_queue"
				bq := &sc.BatchQueue
				d.walk(b.Body, blockSpec{path: bp, attrs: map[string]func(cty.Value, hcl.Range){
					"enabled":               d.boolean(bp+".enabled", &bq.Enabled),
					"order":                 d.str(bp+".order", &bq.Order),
					"concurrent_placements": d.integer(bp+".concurrent_placements", &bq.ConcurrentPlacements),
					"workload_timeout":      d.duration(bp+".workload_timeout", &bq.WorkloadTimeout),
				}})
				bq.Canonicalize()
			},
		},
		ignored: []string{"node_limit_for_feasibility_checks"},
	})
}

func (d *cfgDecoder) client(b *hclsyntax.Block, c *ClientConfig) {
	d.walk(b.Body, blockSpec{
		path: "client",
		attrs: map[string]func(cty.Value, hcl.Range){
			"enabled":    d.boolean("client.enabled", &c.Enabled),
			"servers":    d.strList("client.servers", &c.Servers),
			"node_pool":  d.str("client.node_pool", &c.NodePool),
			"node_class": d.str("client.node_class", &c.NodeClass),
			"meta":       d.strMap("client.meta", c.Meta),
			"options":    d.strMap("client.options", c.Options),
		},
		blocks: map[string]func(*hclsyntax.Block){
			"meta":    func(b *hclsyntax.Block) { d.mapBlock(b, "client.meta", c.Meta) },
			"options": func(b *hclsyntax.Block) { d.mapBlock(b, "client.options", c.Options) },
		},
		ignored: []string{
			"state_dir", "alloc_dir", "alloc_mounts_dir", "network_interface", "network_speed", "cpu_total_compute",
			"cpu_disable_dmidecode", "memory_total_mb", "disk_total_mb", "disk_free_mb", "max_kill_timeout",
			"reserved", "gc_interval", "gc_disk_usage_threshold", "gc_inode_usage_threshold", "gc_max_allocs",
			"gc_parallel_destroys", "gc_volumes_on_node_gc", "host_volume", "host_network", "chroot_env",
			"template", "drain_on_shutdown", "cni_path", "cni_config_dir", "bridge_network_name",
			"bridge_network_subnet", "bridge_network_subnet_ipv6", "bridge_network_hairpin_mode", "artifact",
			"disable_remote_exec", "no_host_uuid", "server_join", "node_max_allocs", "min_dynamic_port",
			"max_dynamic_port", "preferred_address_family", "cgroup_parent", "nomad_service_discovery",
			"intro_token", "host_volumes_dir", "host_volume_plugin_dir", "common_plugin_dir", "users",
			"consul", "vault", "fingerprint_plugins",
		},
	})
}

func (d *cfgDecoder) mapBlock(b *hclsyntax.Block, path string, into map[string]string) {
	attrs := map[string]func(cty.Value, hcl.Range){}
	for name := range b.Body.Attributes {
		k := name
		attrs[k] = func(v cty.Value, rng hcl.Range) {
			s, ok := d.toString(path+"."+k, v, rng)
			if ok {
				into[k] = s
			}
		}
	}
	d.walk(b.Body, blockSpec{path: path, attrs: attrs})
}

func (d *cfgDecoder) plugin(b *hclsyntax.Block, c *Config) {
	if len(b.Labels) != 1 {
		d.errorf(b.TypeRange, `plugin block needs exactly one label, the plugin name (plugin "raw_exec" { ... })`)
		return
	}
	pc := &PluginConfig{Name: b.Labels[0], Config: map[string]any{}}
	path := "plugin." + pc.Name
	d.walk(b.Body, blockSpec{
		path: path,
		blocks: map[string]func(*hclsyntax.Block){
			"config": func(cb *hclsyntax.Block) {
				for name, attr := range cb.Body.Attributes {
					v, diags := attr.Expr.Value(nil)
					if diags.HasErrors() {
						d.errorf(attr.SrcRange, "%s.config.%s: %s", path, name, diags.Error())
						continue
					}
					pc.Config[name] = ctyToGo(v)
				}
				for _, nb := range cb.Body.Blocks {
					d.warn(fmt.Sprintf("%s:%d,%d: plugin config block %q is ignored", nb.TypeRange.Filename, nb.TypeRange.Start.Line, nb.TypeRange.Start.Column, path+".config."+nb.Type))
				}
			},
		},
		ignored: []string{"args"},
	})
	if pc.Name != "raw_exec" && pc.Name != "mock_driver" {
		d.warn(fmt.Sprintf("%s:%d,%d: plugin %q is not available in nomadq; only raw_exec and mock_driver are", b.TypeRange.Filename, b.TypeRange.Start.Line, b.TypeRange.Start.Column, pc.Name))
	}
	for i, existing := range c.Plugins {
		if existing.Name == pc.Name {
			for k, v := range pc.Config {
				existing.Config[k] = v
			}
			c.Plugins[i] = existing
			return
		}
	}
	c.Plugins = append(c.Plugins, pc)
}

func (d *cfgDecoder) telemetry(b *hclsyntax.Block, t *Telemetry) {
	p := "telemetry"
	d.walk(b.Body, blockSpec{
		path: p,
		attrs: map[string]func(cty.Value, hcl.Range){
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
			"disable_hostname":              d.boolean(p+".disable_hostname", &t.DisableHostname),
			"use_node_name":                 d.boolean(p+".use_node_name", &t.UseNodeName),
			"prometheus_metrics":            d.boolean(p+".prometheus_metrics", &t.PrometheusMetrics),
			"publish_allocation_metrics":    d.boolean(p+".publish_allocation_metrics", &t.PublishAllocationMetrics),
			"publish_node_metrics":          d.boolean(p+".publish_node_metrics", &t.PublishNodeMetrics),
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

// Value converters. Each returns a setter that reports a type mismatch
// with the key's position.

func (d *cfgDecoder) str(key string, into *string) func(cty.Value, hcl.Range) {
	return func(v cty.Value, rng hcl.Range) {
		if s, ok := d.toString(key, v, rng); ok {
			*into = s
		}
	}
}

func (d *cfgDecoder) toString(key string, v cty.Value, rng hcl.Range) (string, bool) {
	if v.IsNull() || !v.IsKnown() {
		d.errorf(rng, "%s must be a string", key)
		return "", false
	}
	switch v.Type() {
	case cty.String:
		return v.AsString(), true
	case cty.Number:
		return v.AsBigFloat().Text('f', -1), true
	case cty.Bool:
		if v.True() {
			return "true", true
		}
		return "false", true
	}
	d.errorf(rng, "%s must be a string, got %s", key, v.Type().FriendlyName())
	return "", false
}

func (d *cfgDecoder) boolean(key string, into *bool) func(cty.Value, hcl.Range) {
	return func(v cty.Value, rng hcl.Range) {
		if !v.IsNull() && v.Type() == cty.Bool {
			*into = v.True()
			return
		}
		if !v.IsNull() && v.Type() == cty.String {
			switch v.AsString() {
			case "true":
				*into = true
				return
			case "false":
				*into = false
				return
			}
		}
		d.errorf(rng, "%s must be a bool (true or false), got %s", key, friendly(v))
	}
}

func (d *cfgDecoder) integer(key string, into *int) func(cty.Value, hcl.Range) {
	return func(v cty.Value, rng hcl.Range) {
		if !v.IsNull() && v.Type() == cty.Number {
			bf := v.AsBigFloat()
			if i, acc := bf.Int64(); acc == big.Exact {
				*into = int(i)
				return
			}
		}
		d.errorf(rng, "%s must be a whole number, got %s", key, friendly(v))
	}
}

func (d *cfgDecoder) duration(key string, into *time.Duration) func(cty.Value, hcl.Range) {
	return func(v cty.Value, rng hcl.Range) {
		if !v.IsNull() && v.Type() == cty.String {
			dur, err := time.ParseDuration(v.AsString())
			if err == nil {
				*into = dur
				return
			}
			d.errorf(rng, "%s %q is not a duration (for example \"30s\" or \"5m\")", key, v.AsString())
			return
		}
		if !v.IsNull() && v.Type() == cty.Number {
			i, _ := v.AsBigFloat().Int64()
			*into = time.Duration(i)
			return
		}
		d.errorf(rng, "%s must be a duration string, got %s", key, friendly(v))
	}
}

func (d *cfgDecoder) strList(key string, into *[]string) func(cty.Value, hcl.Range) {
	return func(v cty.Value, rng hcl.Range) {
		if v.IsNull() || !(v.Type().IsListType() || v.Type().IsTupleType() || v.Type().IsSetType()) {
			d.errorf(rng, "%s must be a list of strings, got %s", key, friendly(v))
			return
		}
		var out []string
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			s, ok := d.toString(key, ev, rng)
			if !ok {
				return
			}
			out = append(out, s)
		}
		*into = out
	}
}

func (d *cfgDecoder) strMap(key string, into map[string]string) func(cty.Value, hcl.Range) {
	return func(v cty.Value, rng hcl.Range) {
		if v.IsNull() || !(v.Type().IsMapType() || v.Type().IsObjectType()) {
			d.errorf(rng, "%s must be a map of strings, got %s", key, friendly(v))
			return
		}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			s, ok := d.toString(key+"."+k.AsString(), ev, rng)
			if ok {
				into[k.AsString()] = s
			}
		}
	}
}

func friendly(v cty.Value) string {
	if v.IsNull() {
		return "null"
	}
	return v.Type().FriendlyName()
}

// ctyToGo converts a plugin config value to plain Go values.
func ctyToGo(v cty.Value) any {
	if v.IsNull() || !v.IsKnown() {
		return nil
	}
	t := v.Type()
	switch {
	case t == cty.String:
		return v.AsString()
	case t == cty.Bool:
		return v.True()
	case t == cty.Number:
		bf := v.AsBigFloat()
		if i, acc := bf.Int64(); acc == big.Exact {
			return i
		}
		f, _ := bf.Float64()
		return f
	case t.IsListType() || t.IsTupleType() || t.IsSetType():
		var out []any
		for it := v.ElementIterator(); it.Next(); {
			_, ev := it.Element()
			out = append(out, ctyToGo(ev))
		}
		return out
	case t.IsMapType() || t.IsObjectType():
		out := map[string]any{}
		for it := v.ElementIterator(); it.Next(); {
			k, ev := it.Element()
			out[k.AsString()] = ctyToGo(ev)
		}
		return out
	}
	return nil
}
