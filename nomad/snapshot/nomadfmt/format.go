// Package nomadfmt reads and writes the FSM snapshot stream of Nomad 2.0
// (the state.bin member of a snapshot archive): an msgpack header, then
// records, each a type byte followed by one msgpack-encoded object, until
// the end of the stream. It converts between that stream and nomadq's
// state store, so that "nomad operator snapshot save" on either side can
// be restored on the other.
//
// nomadq's Raft snapshots on disk keep the internal format of package
// state (smaller, and faster to restore); this package is used only where
// a snapshot leaves or enters the cluster: the operator snapshot API and
// the CLI's inspect.
//
// Every record is of a type Nomad 2.0 restores. State Nomad has no notion
// of (the batch queue, its settings, controls, counters and usage resets,
// the autopilot configuration) travels as extra keys of the
// SchedulerConfig record, "BatchQueue" and "Nomadq" (NomadqExtrasField,
// laid out as Extras), which Nomad's decoder skips and Read restores.
//
// It must not import the server (package nomad), the agent or the client.
package nomadfmt

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/state"
)

// SnapshotType is the byte before each record of the stream, with Nomad's
// numbers.
type SnapshotType byte

// Nomad 2.0's record types. TimeTable (5), VaultAccessor (8) and
// EventSink (20) are no longer written by Nomad 2.0 but may appear in
// snapshots of older clusters.
const (
	NodeSnapshot                         SnapshotType = 0
	JobSnapshot                          SnapshotType = 1
	IndexSnapshot                        SnapshotType = 2
	EvalSnapshot                         SnapshotType = 3
	AllocSnapshot                        SnapshotType = 4
	TimeTableSnapshot                    SnapshotType = 5
	PeriodicLaunchSnapshot               SnapshotType = 6
	JobSummarySnapshot                   SnapshotType = 7
	VaultAccessorSnapshot                SnapshotType = 8
	JobVersionSnapshot                   SnapshotType = 9
	DeploymentSnapshot                   SnapshotType = 10
	ACLPolicySnapshot                    SnapshotType = 11
	ACLTokenSnapshot                     SnapshotType = 12
	SchedulerConfigSnapshot              SnapshotType = 13
	ClusterMetadataSnapshot              SnapshotType = 14
	ServiceIdentityTokenAccessorSnapshot SnapshotType = 15
	ScalingPolicySnapshot                SnapshotType = 16
	CSIPluginSnapshot                    SnapshotType = 17
	CSIVolumeSnapshot                    SnapshotType = 18
	ScalingEventsSnapshot                SnapshotType = 19
	EventSinkSnapshot                    SnapshotType = 20
	ServiceRegistrationSnapshot          SnapshotType = 21
	VariablesSnapshot                    SnapshotType = 22
	VariablesQuotaSnapshot               SnapshotType = 23
	RootKeyMetaSnapshot                  SnapshotType = 24
	ACLRoleSnapshot                      SnapshotType = 25
	ACLAuthMethodSnapshot                SnapshotType = 26
	ACLBindingRuleSnapshot               SnapshotType = 27
	NodePoolSnapshot                     SnapshotType = 28
	JobSubmissionSnapshot                SnapshotType = 29
	RootKeySnapshot                      SnapshotType = 30
	HostVolumeSnapshot                   SnapshotType = 31
	NamespaceSnapshot                    SnapshotType = 64
)

// typeNames are the names Nomad's "operator snapshot inspect" prints.
var typeNames = map[SnapshotType]string{
	NodeSnapshot:                         "Node",
	JobSnapshot:                          "Job",
	IndexSnapshot:                        "Index",
	EvalSnapshot:                         "Eval",
	AllocSnapshot:                        "Alloc",
	TimeTableSnapshot:                    "TimeTable",
	PeriodicLaunchSnapshot:               "PeriodicLaunch",
	JobSummarySnapshot:                   "JobSummary",
	VaultAccessorSnapshot:                "VaultAccessor",
	JobVersionSnapshot:                   "JobVersion",
	DeploymentSnapshot:                   "Deployment",
	ACLPolicySnapshot:                    "ACLPolicy",
	ACLTokenSnapshot:                     "ACLToken",
	SchedulerConfigSnapshot:              "SchedulerConfig",
	ClusterMetadataSnapshot:              "ClusterMetadata",
	ServiceIdentityTokenAccessorSnapshot: "ServiceIdentityTokenAccessor",
	ScalingPolicySnapshot:                "ScalingPolicy",
	CSIPluginSnapshot:                    "CSIPlugin",
	CSIVolumeSnapshot:                    "CSIVolume",
	ScalingEventsSnapshot:                "ScalingEvents",
	EventSinkSnapshot:                    "EventSink",
	ServiceRegistrationSnapshot:          "ServiceRegistration",
	VariablesSnapshot:                    "Variables",
	VariablesQuotaSnapshot:               "VariablesQuota",
	RootKeyMetaSnapshot:                  "RootKeyMeta",
	ACLRoleSnapshot:                      "ACLRole",
	ACLAuthMethodSnapshot:                "ACLAuthMethod",
	ACLBindingRuleSnapshot:               "ACLBindingRule",
	NodePoolSnapshot:                     "NodePool",
	JobSubmissionSnapshot:                "JobSubmission",
	RootKeySnapshot:                      "WrappedRootKeys",
	HostVolumeSnapshot:                   "HostVolumeSnapshot",
	NamespaceSnapshot:                    "Namespace",
}

// String returns Nomad's name of the type, or "Unknown(N)".
func (t SnapshotType) String() string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	return fmt.Sprintf("Unknown(%d)", byte(t))
}

// Known reports whether Nomad 2.0 (or an older Nomad whose snapshots 2.0
// still restores) writes records of this type.
func (t SnapshotType) Known() bool {
	_, ok := typeNames[t]
	return ok
}

// Handle is the msgpack configuration Nomad encodes its snapshots with:
// old-spec raw strings, time.Time through its binary form (not the
// timestamp extension), schema-less maps as map[string]any, and only
// `codec` struct tags. SignedInteger is set so that schema-less integers
// (a task's driver config) decode as int64, as nomadq's own codec does;
// it changes nothing on the encode side.
var Handle = func() *codec.MsgpackHandle {
	h := &codec.MsgpackHandle{}
	h.RawToString = true
	h.BasicHandle.TimeNotBuiltin = true
	h.MapType = reflect.TypeFor[map[string]any]()
	h.TypeInfos = codec.NewTypeInfos([]string{"codec"})
	h.SignedInteger = true
	return h
}()

// IsNomad reports whether a state stream that starts with prefix is in
// Nomad's format: Nomad's header is an empty msgpack map (0x80), nomadq's
// internal stream starts with its format number (a positive fixint).
func IsNomad(prefix []byte) bool {
	return len(prefix) > 0 && prefix[0] == 0x80
}

// TypeCount is how many records of one type a stream holds and their
// encoded size in bytes (the type byte included).
type TypeCount struct {
	Type  SnapshotType
	Name  string
	Count int
	Size  int64
}

// Restored is a state store built from a Nomad snapshot stream by Read,
// with what it read.
type Restored struct {
	// State holds every record of a type nomadq models.
	State *state.StateStore
	// Restored counts the records read into State, per type.
	Restored []TypeCount
	// Skipped counts the records of types nomadq does not model (CSI
	// volumes and plugins, deployments, scaling policies, host
	// volumes...), per type, largest count first.
	Skipped []TypeCount
}

// SkippedSummary says what a restore left out, for its answer and its
// log: "skipped 3 CSIVolume records, 1 Deployment record"; "" when
// nothing was skipped.
func (r *Restored) SkippedSummary() string {
	if r == nil || len(r.Skipped) == 0 {
		return ""
	}
	skipped := append([]TypeCount(nil), r.Skipped...)
	sort.SliceStable(skipped, func(i, j int) bool {
		if skipped[i].Count != skipped[j].Count {
			return skipped[i].Count > skipped[j].Count
		}
		return skipped[i].Name < skipped[j].Name
	})
	parts := make([]string, 0, len(skipped))
	for _, s := range skipped {
		noun := "records"
		if s.Count == 1 {
			noun = "record"
		}
		parts = append(parts, fmt.Sprintf("%d %s %s", s.Count, s.Name, noun))
	}
	return "skipped " + strings.Join(parts, ", ")
}
