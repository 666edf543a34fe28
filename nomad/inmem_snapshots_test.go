package nomad

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

func TestInmemSnapshots_KeepsTheLatestClosedSnapshot(t *testing.T) {
	s := &inmemSnapshots{}
	list, err := s.List()
	must.NoError(t, err)
	must.SliceEmpty(t, list)

	// Written in uneven pieces across chunk boundaries.
	content := make([]byte, 3*snapshotChunk+1234)
	for i := range content {
		content[i] = byte(rand.IntN(256))
	}
	sink, err := s.Create(1, 10, 2, raft.Configuration{}, 1, nil)
	must.NoError(t, err)
	for rest := content; len(rest) > 0; {
		n := min(len(rest), 1+rand.IntN(100_000))
		w, err := sink.Write(rest[:n])
		must.NoError(t, err)
		must.Eq(t, n, w)
		rest = rest[n:]
	}
	list, err = s.List()
	must.NoError(t, err)
	must.SliceEmpty(t, list, must.Sprint("a snapshot not yet closed is not listed"))
	must.NoError(t, sink.Close())
	_, err = sink.Write([]byte("late"))
	must.Error(t, err)

	read := func(id string) []byte {
		meta, rc, err := s.Open(id)
		must.NoError(t, err)
		defer rc.Close()
		got, err := io.ReadAll(rc)
		must.NoError(t, err)
		must.Eq(t, int64(len(got)), meta.Size)
		return got
	}
	list, err = s.List()
	must.NoError(t, err)
	must.SliceLen(t, 1, list)
	must.Eq(t, uint64(10), list[0].Index)
	first := list[0].ID
	must.True(t, bytes.Equal(content, read(first)))
	must.True(t, bytes.Equal(content, read(first)), must.Sprint("a snapshot can be read more than once"))

	// A cancelled snapshot leaves the last one in place.
	sink, err = s.Create(1, 20, 2, raft.Configuration{}, 1, nil)
	must.NoError(t, err)
	_, err = sink.Write([]byte("partial"))
	must.NoError(t, err)
	must.NoError(t, sink.Cancel())
	list, err = s.List()
	must.NoError(t, err)
	must.Eq(t, first, list[0].ID)

	// A closed one replaces it; the old ID is gone.
	sink, err = s.Create(1, 30, 3, raft.Configuration{}, 1, nil)
	must.NoError(t, err)
	_, err = sink.Write([]byte("second"))
	must.NoError(t, err)
	must.NoError(t, sink.Close())
	list, err = s.List()
	must.NoError(t, err)
	must.Eq(t, uint64(30), list[0].Index)
	must.Eq(t, "second", string(read(list[0].ID)))
	_, _, err = s.Open(first)
	must.Error(t, err)

	_, err = s.Create(2, 40, 3, raft.Configuration{}, 1, nil)
	must.ErrorContains(t, err, "unsupported snapshot version")
}

// A dev server's snapshot threshold follows its state's size: after a
// snapshot of several MB it waits for that many bytes of entries
// (devRaftEntryBytes each) before the next, within its bounds.
func TestDevServer_SnapshotThresholdFollowsTheState(t *testing.T) {
	must.Eq(t, devRaftSnapshotThreshold, devSnapshotThreshold(0))
	must.Eq(t, devRaftSnapshotThreshold, devSnapshotThreshold(100<<10))
	must.Eq(t, 1000, devSnapshotThreshold(1000*devRaftEntryBytes))
	must.Eq(t, devRaftMaxSnapshotThreshold, devSnapshotThreshold(1<<40))

	s := testServer(t, nil)
	waitForLeader(t, s)
	must.Eq(t, devRaftSnapshotThreshold, s.raft.ReloadableConfig().SnapshotThreshold)
	for i := range 1500 {
		_, _, err := s.raftApply(structs.JobRegisterRequestType, &structs.JobRegisterRequest{Job: mockJob(fmt.Sprintf("job-%d", i))})
		must.NoError(t, err)
	}
	future := s.raft.Snapshot()
	must.NoError(t, future.Error())
	meta, rc, err := future.Open()
	must.NoError(t, err)
	_ = rc.Close()
	want := devSnapshotThreshold(meta.Size)
	must.Greater(t, devRaftSnapshotThreshold, want, must.Sprintf("a %d byte snapshot", meta.Size))
	must.Eq(t, want, s.raft.ReloadableConfig().SnapshotThreshold)
}
