package structs

// SnapshotSaveRequest asks a server for a snapshot archive of the
// cluster's state; the leader's unless AllowStale.
type SnapshotSaveRequest struct {
	QueryOptions
}

// SnapshotSaveResponse carries a snapshot archive (gzip'd tar of
// meta.json, state.bin and SHA256SUMS) whole, with its checksum in the
// form of the HTTP Digest header ("sha-256=<base64>").
type SnapshotSaveResponse struct {
	Archive  []byte
	Checksum string
	QueryMeta
}

// SnapshotRestoreRequest replaces the cluster's state with the one of a
// snapshot archive; only the leader restores.
type SnapshotRestoreRequest struct {
	Archive []byte
	WriteRequest
}

// SnapshotRecordCount is how many records of one type a restore read
// or left out; Type is Nomad's name of the record type ("Job",
// "CSIVolume").
type SnapshotRecordCount struct {
	Type  string
	Count int
}

// SnapshotRestoreResponse is the state index after a restore and, for an
// archive in Nomad's format, what it held: the records restored and the
// ones of types nomadq does not model, which were skipped. Both are empty
// for an archive in nomadq's older internal format.
type SnapshotRestoreResponse struct {
	Restored []SnapshotRecordCount
	Skipped  []SnapshotRecordCount
	// SkippedSummary says what was skipped in a sentence ("skipped 3
	// CSIVolume records"), "" when nothing was.
	SkippedSummary string
	QueryMeta
}
