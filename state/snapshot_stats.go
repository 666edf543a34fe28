package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/hashicorp/go-msgpack/v2/codec"
)

// recordNames names the record types of a snapshot stream for
// "nomad operator snapshot inspect", with Nomad's names where Nomad has
// the same kind of record; a record type not named here shows as its
// table's name. A job's body is counted once, under SharedJobSnapshot;
// JobSnapshot and JobVersionSnapshot count the rows that refer to it.
var recordNames = map[recordType]string{
	indexRecord:           "IndexSnapshot",
	jobRecord:             "JobSnapshot",
	jobVersionRecord:      "JobVersionSnapshot",
	jobSummaryRecord:      "JobSummarySnapshot",
	evalRecord:            "EvalSnapshot",
	allocRecord:           "AllocSnapshot",
	allocJobRecord:        "SharedJobSnapshot",
	jobRowRecord:          "JobSnapshot",
	jobVersionRowRecord:   "JobVersionSnapshot",
	nodeRecord:            "NodeSnapshot",
	schedulerConfigRecord: "SchedulerConfigSnapshot",
	rootKeyRecord:         "RootKeySnapshot",
	namespaceRecord:       "NamespaceSnapshot",
	nodePoolRecord:        "NodePoolSnapshot",
	periodicLaunchRecord:  "PeriodicLaunchSnapshot",
	autopilotConfigRecord: "AutopilotConfigSnapshot",
	jobSubmissionRecord:   "JobSubmissionSnapshot",
	scalingEventRecord:    "ScalingEventsSnapshot",
	batchQueueRecord:      "BatchQueueSnapshot",
	batchQueueStatsRecord: "BatchQueueStatsSnapshot",
	aclPolicyRecord:       "ACLPolicySnapshot",
	aclTokenRecord:        "ACLTokenSnapshot",
	aclRoleRecord:         "ACLRoleSnapshot",
	oneTimeTokenRecord:    "OneTimeTokenSnapshot",
}

// SnapshotTypeStats is how many records of one type a snapshot stream
// holds and their encoded size in bytes.
type SnapshotTypeStats struct {
	Name  string
	Count int
	Sum   int
}

// SnapshotStats reads a stream WriteTo produced and counts its records
// by type, largest total size first (by name when equal), with the total
// count and size. It checks the stream's framing, not its rows.
func SnapshotStats(r io.Reader) (stats []SnapshotTypeStats, totalCount, totalSize int, err error) {
	dec := codec.NewDecoder(bufio.NewReaderSize(r, 64<<10), snapshotHandle)
	var format uint8
	if err := dec.Decode(&format); err != nil {
		return nil, 0, 0, fmt.Errorf("read snapshot header: %w", err)
	}
	if format != snapshotFormat {
		return nil, 0, 0, fmt.Errorf("snapshot format %d is not supported (want %d)", format, snapshotFormat)
	}
	byType := map[recordType]*SnapshotTypeStats{}
	for n := 0; ; n++ {
		var rec uint8
		if err := dec.Decode(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				return nil, 0, 0, fmt.Errorf("snapshot stream ends after %d records without an end record", n)
			}
			return nil, 0, 0, fmt.Errorf("read snapshot record %d: %w", n, err)
		}
		if recordType(rec) == endRecord {
			break
		}
		name, ok := recordName(recordType(rec))
		if !ok {
			return nil, 0, 0, fmt.Errorf("read snapshot record %d: unknown record type %d", n, rec)
		}
		var raw codec.Raw
		if err := dec.Decode(&raw); err != nil {
			return nil, 0, 0, fmt.Errorf("read snapshot record %d (%s): %w", n, name, err)
		}
		s := byType[recordType(rec)]
		if s == nil {
			s = &SnapshotTypeStats{Name: name}
			byType[recordType(rec)] = s
		}
		s.Count++
		s.Sum += len(raw)
		totalCount++
		totalSize += len(raw)
	}
	for _, s := range byType {
		stats = append(stats, *s)
	}
	sort.Slice(stats, func(i, j int) bool {
		if stats[i].Sum != stats[j].Sum {
			return stats[i].Sum > stats[j].Sum
		}
		return stats[i].Name < stats[j].Name
	})
	return stats, totalCount, totalSize, nil
}

func recordName(rec recordType) (string, bool) {
	if name, ok := recordNames[rec]; ok {
		return name, true
	}
	for _, t := range snapshotTables {
		if t.record == rec {
			return t.table, true
		}
	}
	return "", false
}
