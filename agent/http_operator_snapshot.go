package agent

import (
	"io"
	"net/http"
	"strconv"

	"github.com/nomadq/nomadq/structs"
)

// snapshotPath is the route of snapshot save (GET) and restore (PUT).
const snapshotPath = "/v1/operator/snapshot"

// operatorSnapshotRequest serves /v1/operator/snapshot: GET answers with
// a snapshot archive and its checksum in the Digest header, which the
// official client checks; PUT restores the archive in the body.
func (h *httpHandler) operatorSnapshotRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	switch {
	case r.Method == http.MethodGet:
		return h.snapshotSave(w, r)
	case isWrite(r):
		return h.snapshotRestore(w, r)
	}
	return nil, methodNotAllowed()
}

func (h *httpHandler) snapshotSave(w http.ResponseWriter, r *http.Request) (any, error) {
	var args structs.SnapshotSaveRequest
	var reply structs.SnapshotSaveResponse
	if err := h.query(w, r, "Operator.SnapshotSave", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	w.Header().Set("Digest", reply.Checksum)
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(reply.Archive)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(reply.Archive)
	return handled{}, nil
}

func (h *httpHandler) snapshotRestore(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Body == nil {
		return nil, codedErr(http.StatusBadRequest, "Request body is empty: it must be a snapshot archive")
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, codedErr(http.StatusBadRequest, "Failed to read the snapshot: %v", err)
	}
	if len(body) == 0 {
		return nil, codedErr(http.StatusBadRequest, "Request body is empty: it must be a snapshot archive")
	}
	args := structs.SnapshotRestoreRequest{Archive: body}
	var reply structs.SnapshotRestoreResponse
	if err := h.write(w, r, "Operator.SnapshotRestore", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return snapshotRestoreAnswer{
		Index:          reply.Index,
		Restored:       nonNil(reply.Restored),
		Skipped:        nonNil(reply.Skipped),
		SkippedSummary: reply.SkippedSummary,
	}, nil
}

// snapshotRestoreAnswer is the body of a restore's answer: the state
// index after it and, for an archive in Nomad's format, the records it
// restored and the ones of types nomadq does not model that it skipped,
// per type. Nomad answers with an empty body, which its Go client and
// CLI ignore, as they ignore this one.
type snapshotRestoreAnswer struct {
	Index          uint64
	Restored       []structs.SnapshotRecordCount
	Skipped        []structs.SnapshotRecordCount
	SkippedSummary string
}

// nonNil makes a nil list an empty one, so the JSON says [] not null.
func nonNil(l []structs.SnapshotRecordCount) []structs.SnapshotRecordCount {
	if l == nil {
		return []structs.SnapshotRecordCount{}
	}
	return l
}
