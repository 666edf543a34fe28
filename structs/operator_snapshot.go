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

// SnapshotRestoreResponse is the state index after a restore.
type SnapshotRestoreResponse struct {
	QueryMeta
}
