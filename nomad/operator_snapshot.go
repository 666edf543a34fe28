package nomad

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/hashicorp/raft"

	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/nomad/snapshot/nomadfmt"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// SnapshotSave takes a Raft snapshot of this server's state (the
// leader's unless the request allows stale reads) and answers with it as
// a snapshot archive in Nomad 2.0's format, which Nomad's CLI inspects
// and Nomad's servers restore. The Raft snapshot (in nomadq's internal
// format) is read into a scratch state store and written out again as
// Nomad's stream through a temporary file; the archive travels whole in
// the reply: nomadq has no streaming RPC, so a save holds one archive in
// memory.
func (o *Operator) SnapshotSave(args *structs.SnapshotSaveRequest, reply *structs.SnapshotSaveResponse) error {
	if done, err := o.srv.forward("Operator.SnapshotSave", args.QueryOptions, args, reply); done {
		return err
	}
	future := o.srv.raft.Snapshot()
	if err := future.Error(); err != nil {
		return fmt.Errorf("Raft error when taking snapshot: %w", err)
	}
	meta, rc, err := future.Open()
	if err != nil {
		return fmt.Errorf("failed to open snapshot: %w", err)
	}
	defer rc.Close()
	tmp, cleanup, err := snapshotTemp("nomadq-snapshot-save-")
	if err != nil {
		return err
	}
	defer cleanup()
	size, err := writeNomadState(tmp, rc)
	if err != nil {
		return err
	}
	// The index and term stay the Raft snapshot's: the state written is
	// exactly the one at that index.
	out := *meta
	out.Size = size
	var buf bytes.Buffer
	if err := snapshot.Write(&buf, &out, tmp); err != nil {
		return fmt.Errorf("failed to write snapshot file: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	reply.Archive = buf.Bytes()
	reply.Checksum = "sha-256=" + base64.StdEncoding.EncodeToString(sum[:])
	o.srv.setQueryMeta(&reply.QueryMeta)
	reply.Index = meta.Index
	return nil
}

// writeNomadState reads a state stream in nomadq's internal format and
// writes it to tmp in Nomad's, leaving tmp rewound; it returns the size
// written. The scratch store lives only inside this call.
func writeNomadState(tmp *os.File, internal io.Reader) (int64, error) {
	store, err := state.RestoreFrom(internal)
	if err != nil {
		return 0, fmt.Errorf("failed to read Raft snapshot: %w", err)
	}
	snap, err := store.Snapshot()
	if err != nil {
		return 0, fmt.Errorf("failed to snapshot state: %w", err)
	}
	bw := bufio.NewWriterSize(tmp, 64<<10)
	_, err = nomadfmt.Write(bw, snap)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return 0, fmt.Errorf("failed to write snapshot state in Nomad's format: %w", err)
	}
	// The archive's size is what the file holds, whatever was counted on
	// the way.
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fmt.Errorf("failed to size temp snapshot: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("failed to rewind temp snapshot: %w", err)
	}
	return size, nil
}

// snapshotTemp creates a temporary file and returns it with the function
// that closes and removes it.
func snapshotTemp(prefix string) (*os.File, func(), error) {
	f, err := os.CreateTemp("", prefix)
	if err != nil {
		return nil, nil, fmt.Errorf("failed to create temp snapshot file: %w", err)
	}
	return f, func() {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}, nil
}

// snapshotVersion is the only Raft snapshot metadata version nomadq
// reads: the one hashicorp/raft writes, in Nomad's archives and ours.
const snapshotVersion = raft.SnapshotVersionMax

// SnapshotRestore replaces the cluster's state with a snapshot archive's
// on the leader (Raft then sends it to the followers) and rebuilds the
// leader's in-memory structures from it. The archive may be in Nomad's
// format (what Nomad 2.0 and nomadq now save) or in nomadq's older
// internal one, told apart by state.bin's first byte. Everything is
// checked before Raft sees it (checksums, metadata version, every record
// decoded into a scratch store): Raft stops the server when its FSM
// cannot restore a snapshot it was given, and a refused archive changes
// nothing.
func (o *Operator) SnapshotRestore(args *structs.SnapshotRestoreRequest, reply *structs.SnapshotRestoreResponse) error {
	if done, err := o.srv.forward("Operator.SnapshotRestore", args.WriteRequest, args, reply); done {
		return err
	}
	tmp, cleanup, err := snapshotTemp("nomadq-snapshot-restore-")
	if err != nil {
		return err
	}
	defer cleanup()
	meta, err := snapshot.Read(bytes.NewReader(args.Archive), tmp)
	if err != nil {
		return badSnapshot("%v", err)
	}
	if meta.Version != snapshotVersion {
		return badSnapshot("snapshot metadata version %d is not supported (nomadq reads version %d, which Nomad 1.x and 2.x write)", meta.Version, snapshotVersion)
	}
	first := make([]byte, 1)
	if _, err := tmp.ReadAt(first, 0); err != nil {
		return badSnapshot("state.bin is empty")
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("failed to rewind temp snapshot: %w", err)
	}
	internal := tmp
	if nomadfmt.IsNomad(first) {
		conv, convCleanup, err := snapshotTemp("nomadq-snapshot-restore-")
		if err != nil {
			return err
		}
		defer convCleanup()
		restored, size, err := readNomadState(conv, tmp)
		if err != nil {
			return err
		}
		meta.Size = size
		internal = conv
		reply.Restored = recordCounts(restored.Restored)
		reply.Skipped = recordCounts(restored.Skipped)
		reply.SkippedSummary = restored.SkippedSummary()
	} else {
		if _, err := state.RestoreFrom(bufio.NewReaderSize(tmp, 64<<10)); err != nil {
			return badSnapshot("%v", err)
		}
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("failed to rewind temp snapshot: %w", err)
		}
	}
	if err := o.srv.raft.Restore(meta, internal, 0); err != nil {
		return fmt.Errorf("Raft error when restoring snapshot: %w", err)
	}
	// The broker, blocked evals, batch queue, plan queue and heartbeat
	// timers still hold the state from before; rebuild them from the
	// restored one, as a new leader would.
	o.srv.revokeLeadership()
	o.srv.establishLeadership()
	if !o.srv.IsLeader() {
		return fmt.Errorf("restored the snapshot but lost leadership while re-establishing it")
	}
	o.srv.logger.Warn("restored state from a snapshot archive", "snapshot_id", meta.ID, "snapshot_index", meta.Index)
	if reply.SkippedSummary != "" {
		o.srv.logger.Warn("snapshot restore left out records of types nomadq does not model", "snapshot_id", meta.ID, "skipped", reply.SkippedSummary)
	}
	o.srv.setQueryMeta(&reply.QueryMeta)
	reply.Index, _ = o.srv.State().LatestIndex()
	return nil
}

// readNomadState decodes a state stream in Nomad's format and writes the
// state it holds to conv in nomadq's internal format, leaving conv
// rewound, for Raft to restore; it returns what was read and the size
// written.
func readNomadState(conv *os.File, in io.Reader) (*nomadfmt.Restored, int64, error) {
	restored, err := nomadfmt.Read(bufio.NewReaderSize(in, 64<<10))
	if err != nil {
		return nil, 0, badSnapshot("%v", err)
	}
	snap, err := restored.State.Snapshot()
	if err != nil {
		return nil, 0, fmt.Errorf("failed to snapshot the restored state: %w", err)
	}
	size, err := snap.WriteTo(conv)
	if err != nil {
		return nil, 0, fmt.Errorf("failed to write the restored state: %w", err)
	}
	if _, err := conv.Seek(0, io.SeekStart); err != nil {
		return nil, 0, fmt.Errorf("failed to rewind temp snapshot: %w", err)
	}
	// The caller needs only the counts; the scratch store can go.
	restored.State = nil
	return restored, size, nil
}

// badSnapshot is the 400 answer to an archive that cannot be restored.
func badSnapshot(format string, args ...any) error {
	return structs.NewErrRPCCodedf(http.StatusBadRequest, "failed to restore from snapshot: "+format, args...)
}

// recordCounts turns per-type counts into the restore answer's form.
func recordCounts(in []nomadfmt.TypeCount) []structs.SnapshotRecordCount {
	if len(in) == 0 {
		return nil
	}
	out := make([]structs.SnapshotRecordCount, 0, len(in))
	for _, c := range in {
		out = append(out, structs.SnapshotRecordCount{Type: c.Name, Count: c.Count})
	}
	return out
}
