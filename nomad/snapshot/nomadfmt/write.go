package nomadfmt

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// NomadqExtrasField is the key, inside the SchedulerConfig record, under
// which Write keeps the state that Nomad has no notion of (see Extras).
// Nomad's decoder skips map keys its struct lacks, so real Nomad restores
// the record and drops the key; Read restores it into nomadq's tables.
// The name and the layout of Extras are part of the file format: keep
// them stable.
const NomadqExtrasField = "Nomadq"

// Extras is the nomadq-only state a snapshot carries, encoded with Handle
// under NomadqExtrasField in the SchedulerConfig record. The scheduler
// configuration's own batch queue settings travel as the record's
// "BatchQueue" key (a field of structs.SchedulerConfiguration), which
// Nomad skips the same way.
//
// Fields (msgpack keys):
//   - AutopilotConfig: the autopilot configuration row, nil if never set
//     (Nomad keeps it out of its snapshots).
//   - BatchQueue: the rows of the batch queue table, in table order.
//   - BatchQueueStats: the queue table's counter row.
//   - BatchQueueControls: the live hold and top controls of queued jobs.
//   - BatchQueueUsageResets: the per-namespace usage resets.
//
// One-time tokens are not written: they live for minutes, and Nomad's
// own snapshots leave them out too.
type Extras struct {
	AutopilotConfig       *structs.AutopilotConfig
	BatchQueue            []*structs.BatchQueueEntry
	BatchQueueStats       *state.BatchQueueStats
	BatchQueueControls    []*structs.BatchQueueControl
	BatchQueueUsageResets []*structs.BatchQueueUsageReset
}

// schedulerConfigRecord is the SchedulerConfig record Write emits: the
// configuration's own fields, flattened as Nomad writes them, and the
// extras beside them.
type schedulerConfigRecord struct {
	*structs.SchedulerConfiguration
	Nomadq *Extras
}

// periodicLaunch is Nomad's layout of a periodic launch: Launch is a
// time.Time there (nomadq keeps Unix nanoseconds).
type periodicLaunch struct {
	ID          string
	Namespace   string
	Launch      time.Time
	CreateIndex uint64
	ModifyIndex uint64
}

// indexedTables are the tables whose Raft index Write records, in the
// order of their index rows. Nomad restores an index row for a table it
// does not have as an inert row of its index table.
var indexedTables = []string{
	state.TableACLAuthMethods,
	state.TableACLBindingRules,
	state.TableACLPolicies,
	state.TableACLRoles,
	state.TableACLTokens,
	state.TableAllocs,
	state.TableAutopilotConfig,
	state.TableBatchQueue,
	state.TableBatchQueueControls,
	state.TableBatchQueueStats,
	state.TableBatchQueueUsageResets,
	state.TableEvals,
	state.TableJobSubmission,
	state.TableJobSummary,
	state.TableJobVersion,
	state.TableJobs,
	state.TableNamespaces,
	state.TableNodePools,
	state.TableNodes,
	state.TableOneTimeTokens,
	state.TablePeriodicLaunch,
	state.TableRootKeys,
	state.TableScalingEvent,
	state.TableSchedulerConfig,
	state.TableServiceRegistrations,
	state.TableVariables,
}

// aclBootstrapIndexKey is the index-table row of the ACL bootstrap, in
// Nomad and in nomadq.
const aclBootstrapIndexKey = "acl_token_bootstrap"

// Write encodes a state snapshot as a Nomad FSM snapshot stream
// (state.bin) that Nomad 2.0 restores, and returns the bytes written.
//
// Records come in the order of Nomad's own snapshots, each of a type Nomad
// 2.0 knows. Root keys are wrapped with a fresh key encryption key by
// Nomad's "aead" provider and variables sealed as Nomad seals them, so
// that Nomad reads both; nomadq-only state rides in the SchedulerConfig
// record (see Extras).
func Write(w io.Writer, snap *state.StateSnapshot) (int64, error) {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	enc := codec.NewEncoder(bw, Handle)
	if err := enc.Encode(struct{}{}); err != nil {
		return cw.n, fmt.Errorf("write Nomad snapshot header: %w", err)
	}
	sw := &streamWriter{bw: bw, enc: enc, now: time.Now()}
	steps := []struct {
		name string
		fn   func(*streamWriter, *state.StateSnapshot) error
	}{
		{"indexes", writeIndexes},
		{"nodes", writeNodes},
		{"node pools", writeNodePools},
		{"jobs", writeJobs},
		{"evaluations", writeEvals},
		{"allocations", writeAllocs},
		{"periodic launches", writePeriodicLaunches},
		{"job summaries", writeJobSummaries},
		{"job versions", writeJobVersions},
		{"scaling events", writeScalingEvents},
		{"ACL policies", writeACLPolicies},
		{"ACL tokens", writeACLTokens},
		{"namespaces", writeNamespaces},
		{"scheduler configuration", writeSchedulerConfig},
		{"service registrations", writeServiceRegistrations},
		{"variables", writeVariables},
		{"root keys", writeRootKeys},
		{"ACL roles", writeACLRoles},
		{"ACL auth methods", writeACLAuthMethods},
		{"ACL binding rules", writeACLBindingRules},
		{"job submissions", writeJobSubmissions},
	}
	for _, s := range steps {
		if err := s.fn(sw, snap); err != nil {
			return cw.n, fmt.Errorf("write Nomad snapshot: %s: %w", s.name, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("write Nomad snapshot: %w", err)
	}
	return cw.n, nil
}

// streamWriter writes records: a type byte, then the msgpack object.
type streamWriter struct {
	bw  *bufio.Writer
	enc *codec.Encoder
	now time.Time // when the snapshot is written
}

func (s *streamWriter) record(t SnapshotType, v any) error {
	if err := s.bw.WriteByte(byte(t)); err != nil {
		return err
	}
	if err := s.enc.Encode(v); err != nil {
		return fmt.Errorf("encode %s record: %w", t, err)
	}
	return nil
}

// records writes one record of type t per row, each as conv turns it
// into Nomad's layout (nil: as it is); err is the error of reading rows.
func records[T any](s *streamWriter, t SnapshotType, rows []T, err error, conv func(T) (any, error)) error {
	if err != nil {
		return err
	}
	for _, row := range rows {
		var rec any = row
		if conv != nil {
			if rec, err = conv(row); err != nil {
				return err
			}
		}
		if err := s.record(t, rec); err != nil {
			return err
		}
	}
	return nil
}

func writeIndexes(s *streamWriter, snap *state.StateSnapshot) error {
	for _, table := range indexedTables {
		idx, err := snap.Index(table)
		if err != nil {
			return err
		}
		if idx == 0 {
			continue
		}
		if err := s.record(IndexSnapshot, &state.IndexEntry{Key: table, Value: idx}); err != nil {
			return err
		}
	}
	boot, err := snap.ACLBootstrapIndex()
	if err != nil {
		return err
	}
	if boot == 0 {
		return nil
	}
	return s.record(IndexSnapshot, &state.IndexEntry{Key: aclBootstrapIndexKey, Value: boot})
}

func writeNodes(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.Nodes(nil)
	return records(s, NodeSnapshot, rows, err, nil)
}

func writeNodePools(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.NodePoolsByNamePrefix(nil, "")
	return records(s, NodePoolSnapshot, rows, err, nil)
}

func writeJobs(s *streamWriter, snap *state.StateSnapshot) error {
	jobs, err := snap.Jobs(nil)
	return records(s, JobSnapshot, jobs, err, func(j *structs.Job) (any, error) { return withSubmitTime(j, s.now), nil })
}

// withSubmitTime returns j, or a copy with the snapshot's time as its
// submit time when it has none: Nomad's garbage collector ages jobs by
// it, and would take a zero for a job submitted in 1970.
func withSubmitTime(j *structs.Job, now time.Time) *structs.Job {
	if j.SubmitTime != 0 {
		return j
	}
	c := *j
	c.SubmitTime = now.UnixNano()
	return &c
}

func writeEvals(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.Evals(nil)
	return records(s, EvalSnapshot, rows, err, nil)
}

func writeAllocs(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.Allocs(nil)
	return records(s, AllocSnapshot, rows, err, nil)
}

func writePeriodicLaunches(s *streamWriter, snap *state.StateSnapshot) error {
	launches, err := snap.PeriodicLaunches(nil)
	if err != nil {
		return err
	}
	recs := make([]*periodicLaunch, 0, len(launches))
	have := make(map[[2]string]bool, len(launches))
	for _, l := range launches {
		have[[2]string{l.Namespace, l.ID}] = true
		recs = append(recs, &periodicLaunch{
			ID:          l.ID,
			Namespace:   l.Namespace,
			Launch:      unixNanoTime(l.Launch),
			CreateIndex: l.CreateIndex,
			ModifyIndex: l.ModifyIndex,
		})
	}
	// Nomad records a periodic job's registration as its first launch and
	// its leader refuses to start ("no recorded periodic launch time")
	// without one; nomadq anchors a job never launched at its submit time
	// instead, so that time stands in.
	jobs, err := snap.PeriodicJobs(nil)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.ParameterizedJob != nil || have[[2]string{j.Namespace, j.ID}] {
			continue
		}
		submitted := withSubmitTime(j, s.now).SubmitTime
		recs = append(recs, &periodicLaunch{
			ID:          j.ID,
			Namespace:   j.Namespace,
			Launch:      unixNanoTime(submitted),
			CreateIndex: j.CreateIndex,
			ModifyIndex: j.CreateIndex,
		})
	}
	sort.Slice(recs, func(a, b int) bool {
		if recs[a].Namespace != recs[b].Namespace {
			return recs[a].Namespace < recs[b].Namespace
		}
		return recs[a].ID < recs[b].ID
	})
	for _, rec := range recs {
		if err := s.record(PeriodicLaunchSnapshot, rec); err != nil {
			return err
		}
	}
	return nil
}

func writeJobSummaries(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.JobSummaries(nil)
	return records(s, JobSummarySnapshot, rows, err, nil)
}

func writeJobVersions(s *streamWriter, snap *state.StateSnapshot) error {
	return eachJobVersion(snap, func(v *structs.Job) error {
		return s.record(JobVersionSnapshot, withSubmitTime(v, s.now))
	})
}

// eachJobVersion calls fn with every job version, job by job, each job's
// versions oldest first, as Nomad writes them.
func eachJobVersion(snap *state.StateSnapshot, fn func(*structs.Job) error) error {
	jobs, err := snap.Jobs(nil)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		versions, err := snap.JobVersionsByID(nil, j.Namespace, j.ID)
		if err != nil {
			return err
		}
		sort.Slice(versions, func(a, b int) bool { return versions[a].Version < versions[b].Version })
		for _, v := range versions {
			if err := fn(v); err != nil {
				return err
			}
		}
	}
	return nil
}

func writeScalingEvents(s *streamWriter, snap *state.StateSnapshot) error {
	jobs, err := snap.Jobs(nil)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		events, idx, err := snap.ScalingEventsByJob(nil, j.Namespace, j.ID)
		if err != nil {
			return err
		}
		if len(events) == 0 {
			continue
		}
		rec := &structs.JobScalingEvents{Namespace: j.Namespace, JobID: j.ID, ScalingEvents: events, ModifyIndex: idx}
		if err := s.record(ScalingEventsSnapshot, rec); err != nil {
			return err
		}
	}
	return nil
}

func writeACLPolicies(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.ACLPolicies(nil, "")
	return records(s, ACLPolicySnapshot, rows, err, nil)
}

func writeACLTokens(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.ACLTokens(nil, "", false)
	return records(s, ACLTokenSnapshot, rows, err, nil)
}

func writeNamespaces(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.NamespacesByNamePrefix(nil, "")
	return records(s, NamespaceSnapshot, rows, err, nil)
}

func writeSchedulerConfig(s *streamWriter, snap *state.StateSnapshot) error {
	_, cfg, err := snap.SchedulerConfig()
	if err != nil {
		return err
	}
	extras, err := readExtras(snap)
	if err != nil {
		return err
	}
	if cfg == nil {
		if extras.empty() {
			return nil
		}
		// The extras need a record to ride in; Nomad restores the
		// defaults its servers would use anyway.
		cfg = structs.DefaultSchedulerConfiguration()
	}
	return s.record(SchedulerConfigSnapshot, &schedulerConfigRecord{SchedulerConfiguration: cfg, Nomadq: extras})
}

// readExtras collects the nomadq-only state of snap.
func readExtras(snap *state.StateSnapshot) (*Extras, error) {
	var x Extras
	var err error
	if _, x.AutopilotConfig, err = snap.AutopilotConfig(nil); err != nil {
		return nil, err
	}
	if x.BatchQueue, err = snap.BatchQueueEntries(nil); err != nil {
		return nil, err
	}
	stats, err := snap.BatchQueueStats(nil)
	if err != nil {
		return nil, err
	}
	if stats != (state.BatchQueueStats{}) {
		x.BatchQueueStats = &stats
	}
	controls, err := snap.BatchQueueControls(nil)
	if err != nil {
		return nil, err
	}
	for _, key := range sortedKeys(controls) {
		x.BatchQueueControls = append(x.BatchQueueControls, controls[key])
	}
	resets, err := snap.BatchQueueUsageResets(nil)
	if err != nil {
		return nil, err
	}
	if len(resets) > 0 {
		// The reader gives the times only; the table's index stands in
		// for each row's modify index.
		idx, err := snap.Index(state.TableBatchQueueUsageResets)
		if err != nil {
			return nil, err
		}
		for _, ns := range sortedKeys(resets) {
			x.BatchQueueUsageResets = append(x.BatchQueueUsageResets,
				&structs.BatchQueueUsageReset{Namespace: ns, Time: resets[ns].UnixNano(), ModifyIndex: idx})
		}
	}
	return &x, nil
}

func (x *Extras) empty() bool {
	return x.AutopilotConfig == nil && len(x.BatchQueue) == 0 && x.BatchQueueStats == nil &&
		len(x.BatchQueueControls) == 0 && len(x.BatchQueueUsageResets) == 0
}

func writeServiceRegistrations(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.ServiceRegistrations(nil)
	return records(s, ServiceRegistrationSnapshot, rows, err, nil)
}

func writeVariables(s *streamWriter, snap *state.StateSnapshot) error {
	vars, err := snap.VariablesByPrefix(nil, "*", "")
	sealers := map[string]*variableSealer{}
	return records(s, VariablesSnapshot, vars, err, func(v *structs.VariableEncrypted) (any, error) {
		return exportVariable(snap, sealers, v)
	})
}

func writeRootKeys(s *streamWriter, snap *state.StateSnapshot) error {
	keys, err := snap.RootKeys(nil)
	return records(s, RootKeySnapshot, keys, err, func(k *structs.RootKey) (any, error) { return wrapRootKey(k) })
}

func writeACLRoles(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.ACLRoles(nil, "")
	return records(s, ACLRoleSnapshot, rows, err, nil)
}

func writeACLAuthMethods(s *streamWriter, snap *state.StateSnapshot) error {
	methods, err := snap.ACLAuthMethods(nil)
	return records(s, ACLAuthMethodSnapshot, methods, err, exportAuthMethod)
}

// authMethodConfig is Nomad's layout of an auth method's config: nomadq
// keeps OIDCClientAssertion as the JSON it was given, Nomad as an object.
type authMethodConfig struct {
	*structs.ACLAuthMethodConfig
	OIDCClientAssertion map[string]any
}

// authMethod is an auth method with its config in Nomad's layout.
type authMethod struct {
	*structs.ACLAuthMethod
	Config *authMethodConfig
}

func exportAuthMethod(m *structs.ACLAuthMethod) (any, error) {
	if m.Config == nil {
		return m, nil
	}
	cfg := &authMethodConfig{ACLAuthMethodConfig: m.Config}
	if len(m.Config.OIDCClientAssertion) > 0 {
		if err := json.Unmarshal(m.Config.OIDCClientAssertion, &cfg.OIDCClientAssertion); err != nil {
			return nil, fmt.Errorf("auth method %q: OIDCClientAssertion: %w", m.Name, err)
		}
	}
	return &authMethod{ACLAuthMethod: m, Config: cfg}, nil
}

func writeACLBindingRules(s *streamWriter, snap *state.StateSnapshot) error {
	rows, err := snap.ACLBindingRules(nil, "")
	return records(s, ACLBindingRuleSnapshot, rows, err, nil)
}

func writeJobSubmissions(s *streamWriter, snap *state.StateSnapshot) error {
	return eachJobVersion(snap, func(v *structs.Job) error {
		sub, err := snap.JobSubmission(nil, v.Namespace, v.ID, v.Version)
		if err != nil || sub == nil {
			return err
		}
		return s.record(JobSubmissionSnapshot, sub)
	})
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// unixNanoTime is the time of Unix nanoseconds n, the zero time for 0.
func unixNanoTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
