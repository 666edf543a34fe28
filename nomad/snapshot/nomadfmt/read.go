package nomadfmt

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// Read decodes a Nomad FSM snapshot stream (state.bin) into a new state
// store. It refuses, before anything is returned, a stream that is
// truncated, corrupt, or holds a record type Nomad 2.0 does not write.
//
// Records of the types nomadq models are converted to its rows: most
// decode straight into nomadq's structs, which keep Nomad's field names;
// a periodic launch's time, an auth method's OIDC client assertion and
// root keys (unwrapped with the key encryption key of Nomad's "aead"
// provider) are converted, and variables re-sealed from Nomad's layout
// into nomadq's under the same root key. Fields nomadq does not model
// are dropped by the decoder. Records of other types are decoded and
// counted in Skipped.
func Read(r io.Reader) (*Restored, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	prefix, err := br.Peek(1)
	if err != nil {
		return nil, fmt.Errorf("read snapshot header: %w", eofIsUnexpected(err))
	}
	if !IsNomad(prefix) {
		return nil, fmt.Errorf("read snapshot header: the stream does not start with Nomad's header (an empty msgpack map, byte 0x80) but with byte 0x%02x", prefix[0])
	}
	cr := &countingReader{r: br}
	// The decoder reads exactly one object from a plain io.Reader, so the
	// type bytes can be read from cr between objects.
	dec := codec.NewDecoder(cr, Handle)
	var header map[string]any
	if err := dec.Decode(&header); err != nil {
		return nil, fmt.Errorf("read snapshot header: %w", err)
	}
	rd := newStreamReader()
	typeByte := make([]byte, 1)
	for n := 0; ; n++ {
		start := cr.n
		got, err := io.ReadFull(cr, typeByte)
		if got == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read snapshot record %d: %w", n, err)
		}
		t := SnapshotType(typeByte[0])
		if !t.Known() {
			return nil, fmt.Errorf("read snapshot record %d: type byte %d is not a record type Nomad 2.0 writes (a snapshot of a newer Nomad?)", n, typeByte[0])
		}
		restored, err := rd.record(dec, t)
		if err != nil {
			return nil, fmt.Errorf("read snapshot record %d (%s): %w", n, t, eofIsUnexpected(err))
		}
		rd.count(t, restored, cr.n-start)
	}
	return rd.finish()
}

// eofIsUnexpected turns the end of the stream inside a record into
// io.ErrUnexpectedEOF, which says that the stream is cut short.
func eofIsUnexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// row is a decoded row for one table of the store.
type row struct {
	table string
	obj   any
}

// streamReader collects the rows of a stream and what it read.
type streamReader struct {
	rows      []row
	variables []*structs.VariableEncrypted
	keys      []*WrappedRootKey
	// legacyKeys are RootKeyMeta records: keys whose material Nomad kept
	// outside Raft, so the snapshot cannot carry it.
	legacyKeys []*structs.RootKeyMeta
	restored   map[SnapshotType]*TypeCount
	skipped    map[SnapshotType]*TypeCount
	jobs       *jobSharer
}

func newStreamReader() *streamReader {
	return &streamReader{
		restored: map[SnapshotType]*TypeCount{},
		skipped:  map[SnapshotType]*TypeCount{},
		jobs:     &jobSharer{seen: map[jobVersionKey][]*structs.Job{}},
	}
}

func (s *streamReader) count(t SnapshotType, restored bool, size int64) {
	m := s.skipped
	if restored {
		m = s.restored
	}
	tc := m[t]
	if tc == nil {
		tc = &TypeCount{Type: t, Name: t.String()}
		m[t] = tc
	}
	tc.Count++
	tc.Size += size
}

// add decodes one object of the stream into v and keeps it as a row of
// table.
func (s *streamReader) add(dec *codec.Decoder, table string, v any) error {
	if err := dec.Decode(v); err != nil {
		return err
	}
	s.rows = append(s.rows, row{table: table, obj: v})
	return nil
}

// record decodes one record of type t; restored reports whether it goes
// into the store (or, for the keyring, may: see finish).
func (s *streamReader) record(dec *codec.Decoder, t SnapshotType) (restored bool, err error) {
	switch t {
	case NodeSnapshot:
		return true, s.add(dec, state.TableNodes, new(structs.Node))
	case JobSnapshot, JobVersionSnapshot:
		return true, s.job(dec, t)
	case JobSummarySnapshot:
		return true, s.add(dec, state.TableJobSummary, new(structs.JobSummary))
	case EvalSnapshot:
		return true, s.add(dec, state.TableEvals, new(structs.Evaluation))
	case AllocSnapshot:
		return true, s.alloc(dec)
	case IndexSnapshot:
		// Every index row is kept, those of tables nomadq lacks too, so
		// that the restored store's latest index is the snapshot's.
		return true, s.add(dec, state.TableIndex, new(state.IndexEntry))
	case ACLPolicySnapshot:
		return true, s.add(dec, state.TableACLPolicies, new(structs.ACLPolicy))
	case ACLTokenSnapshot:
		return true, s.add(dec, state.TableACLTokens, new(structs.ACLToken))
	case ACLRoleSnapshot:
		return true, s.add(dec, state.TableACLRoles, new(structs.ACLRole))
	case ACLBindingRuleSnapshot:
		return true, s.add(dec, state.TableACLBindingRules, new(structs.ACLBindingRule))
	case NodePoolSnapshot:
		return true, s.add(dec, state.TableNodePools, new(structs.NodePool))
	case NamespaceSnapshot:
		return true, s.add(dec, state.TableNamespaces, new(structs.Namespace))
	case JobSubmissionSnapshot:
		return true, s.add(dec, state.TableJobSubmission, new(structs.JobSubmission))
	case ServiceRegistrationSnapshot:
		return true, s.add(dec, state.TableServiceRegistrations, new(structs.ServiceRegistration))
	case ScalingEventsSnapshot:
		return true, s.add(dec, state.TableScalingEvent, new(structs.JobScalingEvents))
	case PeriodicLaunchSnapshot:
		return true, s.periodicLaunch(dec)
	case SchedulerConfigSnapshot:
		return true, s.schedulerConfig(dec)
	case ACLAuthMethodSnapshot:
		return true, s.authMethod(dec)
	case VariablesSnapshot:
		v := new(structs.VariableEncrypted)
		if err := dec.Decode(v); err != nil {
			return false, err
		}
		s.variables = append(s.variables, v)
		return true, nil
	case RootKeySnapshot:
		k := new(WrappedRootKey)
		if err := dec.Decode(k); err != nil {
			return false, err
		}
		s.keys = append(s.keys, k)
		return true, nil
	case RootKeyMetaSnapshot:
		k := new(structs.RootKeyMeta)
		if err := dec.Decode(k); err != nil {
			return false, err
		}
		s.legacyKeys = append(s.legacyKeys, k)
		return false, nil
	}
	// A type nomadq does not model (CSI, deployments, scaling policies,
	// host volumes, cluster metadata, and the types older Nomads wrote):
	// decoded, so that a corrupt record is still refused, and dropped.
	var skip any
	return false, dec.Decode(&skip)
}

// job reads a row of the jobs or the job version table.
func (s *streamReader) job(dec *codec.Decoder, t SnapshotType) error {
	j := new(structs.Job)
	if err := dec.Decode(j); err != nil {
		return err
	}
	table := state.TableJobs
	if t == JobVersionSnapshot {
		table = state.TableJobVersion
	}
	s.rows = append(s.rows, row{table: table, obj: s.jobs.share(j)})
	return nil
}

// alloc reads an alloc, whose Job Nomad writes in full each time.
func (s *streamReader) alloc(dec *codec.Decoder) error {
	a := new(structs.Allocation)
	if err := dec.Decode(a); err != nil {
		return err
	}
	if a.Job != nil {
		a.Job = s.jobs.share(a.Job)
	}
	s.rows = append(s.rows, row{table: state.TableAllocs, obj: a})
	return nil
}

// jobVersionKey names one version of a job as registered.
type jobVersionKey struct {
	namespace, id    string
	version, modifyI uint64
}

// jobSharer lets equal copies of a job version share one Job. Nomad
// writes each alloc with its whole job, so a restore of a job with
// thousands of allocs would otherwise hold thousands of copies; the live
// store shares one Job between a job's row, its version row and its
// allocs. Rows are never modified in place, so sharing is safe.
type jobSharer struct {
	seen map[jobVersionKey][]*structs.Job
}

// sharedJobCandidates is how many distinct Jobs of one version are kept
// to compare with (a job's row differs from its version row once its
// status changes).
const sharedJobCandidates = 3

// share returns a kept Job equal to j, or keeps and returns j.
func (js *jobSharer) share(j *structs.Job) *structs.Job {
	k := jobVersionKey{j.Namespace, j.ID, j.Version, j.JobModifyIndex}
	kept := js.seen[k]
	for _, c := range kept {
		if reflect.DeepEqual(c, j) {
			return c
		}
	}
	if len(kept) < sharedJobCandidates {
		js.seen[k] = append(kept, j)
	}
	return j
}

// periodicLaunch converts Nomad's launch time (a time.Time) to nomadq's
// Unix nanoseconds.
func (s *streamReader) periodicLaunch(dec *codec.Decoder) error {
	var in periodicLaunch
	if err := dec.Decode(&in); err != nil {
		return err
	}
	out := &structs.PeriodicLaunch{ID: in.ID, Namespace: in.Namespace, CreateIndex: in.CreateIndex, ModifyIndex: in.ModifyIndex}
	if !in.Launch.IsZero() {
		out.Launch = in.Launch.UnixNano()
	}
	s.rows = append(s.rows, row{table: state.TablePeriodicLaunch, obj: out})
	return nil
}

// schedulerConfigIn is the SchedulerConfig record as Read takes it:
// Nomad's fields, nomadq's batch queue settings when a nomadq server
// wrote it, and the nomadq-only state Write puts beside them.
type schedulerConfigIn struct {
	structs.SchedulerConfiguration
	Nomadq *Extras
}

// schedulerConfig restores the scheduler configuration. The record is
// decoded over nomadq's defaults, so that a record written by Nomad,
// which has no batch queue settings, keeps the defaults for them.
func (s *streamReader) schedulerConfig(dec *codec.Decoder) error {
	in := schedulerConfigIn{SchedulerConfiguration: *structs.DefaultSchedulerConfiguration()}
	if err := dec.Decode(&in); err != nil {
		return err
	}
	cfg := in.SchedulerConfiguration
	s.rows = append(s.rows, row{table: state.TableSchedulerConfig, obj: &cfg})
	x := in.Nomadq
	if x == nil {
		return nil
	}
	if x.AutopilotConfig != nil {
		s.rows = append(s.rows, row{table: state.TableAutopilotConfig, obj: x.AutopilotConfig})
	}
	for _, e := range x.BatchQueue {
		if e != nil {
			s.rows = append(s.rows, row{table: state.TableBatchQueue, obj: e})
		}
	}
	if st := x.BatchQueueStats; st != nil {
		st.ID = state.TableBatchQueue
		s.rows = append(s.rows, row{table: state.TableBatchQueueStats, obj: st})
	}
	for _, c := range x.BatchQueueControls {
		if c != nil {
			s.rows = append(s.rows, row{table: state.TableBatchQueueControls, obj: c})
		}
	}
	for _, r := range x.BatchQueueUsageResets {
		if r != nil {
			s.rows = append(s.rows, row{table: state.TableBatchQueueUsageResets, obj: r})
		}
	}
	return nil
}

// authMethodIn is an auth method in Nomad's layout, whose config holds
// the OIDC client assertion as an object; nomadq keeps its JSON.
type authMethodIn struct {
	structs.ACLAuthMethod
	Config *authMethodConfigIn
}

type authMethodConfigIn struct {
	structs.ACLAuthMethodConfig
	OIDCClientAssertion map[string]any
}

func (s *streamReader) authMethod(dec *codec.Decoder) error {
	var in authMethodIn
	if err := dec.Decode(&in); err != nil {
		return err
	}
	out := in.ACLAuthMethod
	if in.Config != nil {
		cfg := in.Config.ACLAuthMethodConfig
		if in.Config.OIDCClientAssertion != nil {
			js, err := json.Marshal(in.Config.OIDCClientAssertion)
			if err != nil {
				return fmt.Errorf("auth method %q: OIDCClientAssertion: %w", in.Name, err)
			}
			cfg.OIDCClientAssertion = js
		}
		out.Config = &cfg
	} else {
		out.Config = nil
	}
	s.rows = append(s.rows, row{table: state.TableACLAuthMethods, obj: &out})
	return nil
}

// finish unwraps the root keys, re-seals the variables and builds the
// store from every row in one transaction.
func (s *streamReader) finish() (*Restored, error) {
	keys, keyRows, err := importRootKeys(s.keys, s.legacyKeys, s.variables)
	if err != nil {
		return nil, err
	}
	vars, err := importVariables(keys, s.variables)
	if err != nil {
		return nil, err
	}
	if n := len(s.keys) - len(keyRows); n > 0 {
		// Keys left out (wrapped by a KMS nomadq cannot reach, and used by
		// no variable) are counted as skipped, not restored.
		s.restored[RootKeySnapshot].Count -= n
		s.skipped[RootKeySnapshot] = &TypeCount{Type: RootKeySnapshot, Name: RootKeySnapshot.String(), Count: n}
		if s.restored[RootKeySnapshot].Count == 0 {
			s.skipped[RootKeySnapshot].Size = s.restored[RootKeySnapshot].Size
			delete(s.restored, RootKeySnapshot)
		}
	}

	b, err := state.NewRowRestore()
	if err != nil {
		return nil, err
	}
	defer b.Abort()
	for _, r := range s.rows {
		if err := b.Insert(r.table, r.obj); err != nil {
			return nil, fmt.Errorf("restore Nomad snapshot: %w", err)
		}
	}
	for _, k := range keyRows {
		if err := b.Insert(state.TableRootKeys, k); err != nil {
			return nil, fmt.Errorf("restore Nomad snapshot: %w", err)
		}
	}
	for _, v := range vars {
		if err := b.Insert(state.TableVariables, v); err != nil {
			return nil, fmt.Errorf("restore Nomad snapshot: %w", err)
		}
	}
	store, err := b.Commit()
	if err != nil {
		return nil, err
	}
	return &Restored{State: store, Restored: sortedCounts(s.restored), Skipped: sortedCounts(s.skipped)}, nil
}

// sortedCounts lists the counts largest first, by name when equal.
func sortedCounts(m map[SnapshotType]*TypeCount) []TypeCount {
	out := make([]TypeCount, 0, len(m))
	for _, tc := range m {
		out = append(out, *tc)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Count != out[j].Count {
			return out[i].Count > out[j].Count
		}
		return out[i].Name < out[j].Name
	})
	return out
}
