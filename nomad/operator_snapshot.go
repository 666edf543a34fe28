package nomad

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/nomadq/nomadq/nomad/snapshot"
	"github.com/nomadq/nomadq/state"
	"github.com/nomadq/nomadq/structs"
)

// SnapshotSave takes a Raft snapshot of this server's state (the
// leader's unless the request allows stale reads) and answers with it as
// a snapshot archive. The archive travels whole in the reply: nomadq has
// no streaming RPC, so a save holds one archive in memory.
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
	var buf bytes.Buffer
	if err := snapshot.Write(&buf, meta, rc); err != nil {
		return fmt.Errorf("failed to write snapshot file: %w", err)
	}
	sum := sha256.Sum256(buf.Bytes())
	reply.Archive = buf.Bytes()
	reply.Checksum = "sha-256=" + base64.StdEncoding.EncodeToString(sum[:])
	o.srv.setQueryMeta(&reply.QueryMeta)
	reply.Index = meta.Index
	return nil
}

// SnapshotRestore replaces the cluster's state with a snapshot archive's
// on the leader (Raft then sends it to the followers) and rebuilds the
// leader's in-memory structures from it. The archive's checksums and its
// state stream are checked before Raft sees it: Raft stops the server
// when its FSM cannot restore a snapshot it was given.
func (o *Operator) SnapshotRestore(args *structs.SnapshotRestoreRequest, reply *structs.SnapshotRestoreResponse) error {
	if done, err := o.srv.forward("Operator.SnapshotRestore", args.WriteRequest, args, reply); done {
		return err
	}
	tmp, err := os.CreateTemp("", "nomadq-snapshot-restore-")
	if err != nil {
		return fmt.Errorf("failed to create temp snapshot file: %w", err)
	}
	defer func() {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
	}()
	meta, err := snapshot.Read(bytes.NewReader(args.Archive), tmp)
	if err != nil {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "failed to restore from snapshot: %v", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("failed to rewind temp snapshot: %w", err)
	}
	if _, err := state.RestoreFrom(tmp); err != nil {
		return structs.NewErrRPCCodedf(http.StatusBadRequest, "failed to restore from snapshot: %v", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("failed to rewind temp snapshot: %w", err)
	}
	if err := o.srv.raft.Restore(meta, tmp, 0); err != nil {
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
	o.srv.setQueryMeta(&reply.QueryMeta)
	reply.Index, _ = o.srv.State().LatestIndex()
	return nil
}
