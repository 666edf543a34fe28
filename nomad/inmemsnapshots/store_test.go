package inmemsnapshots

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
)

func TestStore_KeepsTheLatestClosedSnapshot(t *testing.T) {
	s := &Store{}
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

// A deferred snapshot is encoded once, on its first read.
func TestStore_DeferredContentIsWrittenOnFirstRead(t *testing.T) {
	s := &Store{}
	content := bytes.Repeat([]byte("state "), snapshotChunk/3)
	calls := 0
	sink, err := s.Create(1, 10, 2, raft.Configuration{}, 1, nil)
	must.NoError(t, err)
	ds, ok := sink.(DeferringSink)
	must.True(t, ok)
	must.NoError(t, ds.Defer(func(w io.Writer) (int64, error) {
		calls++
		n, err := w.Write(content)
		return int64(n), err
	}))
	_, err = sink.Write([]byte("x"))
	must.ErrorContains(t, err, "deferred")
	must.NoError(t, sink.Close())
	must.Eq(t, 0, calls, must.Sprint("closing a deferred snapshot encodes nothing"))
	list, err := s.List()
	must.NoError(t, err)
	must.Eq(t, int64(0), list[0].Size)

	for range 2 {
		meta, rc, err := s.Open(list[0].ID)
		must.NoError(t, err)
		got, err := io.ReadAll(rc)
		must.NoError(t, err)
		must.True(t, bytes.Equal(content, got))
		must.Eq(t, int64(len(content)), meta.Size)
	}
	must.Eq(t, 1, calls, must.Sprint("encoded once, read twice"))

	// Content already written cannot be deferred; a failed encode is
	// reported and tried again on the next read.
	sink, err = s.Create(1, 20, 2, raft.Configuration{}, 1, nil)
	must.NoError(t, err)
	_, err = sink.Write([]byte("bytes"))
	must.NoError(t, err)
	must.ErrorContains(t, sink.(DeferringSink).Defer(func(io.Writer) (int64, error) { return 0, nil }), "already written")
	must.NoError(t, sink.Cancel())
	sink, err = s.Create(1, 30, 2, raft.Configuration{}, 1, nil)
	must.NoError(t, err)
	fail := true
	must.NoError(t, sink.(DeferringSink).Defer(func(w io.Writer) (int64, error) {
		if fail {
			_, _ = w.Write([]byte("half"))
			return 4, fmt.Errorf("disk on fire")
		}
		n, err := w.Write([]byte("whole"))
		return int64(n), err
	}))
	must.NoError(t, sink.Close())
	_, _, err = s.Open(sink.ID())
	must.ErrorContains(t, err, "disk on fire")
	fail = false
	meta, rc, err := s.Open(sink.ID())
	must.NoError(t, err)
	got, _ := io.ReadAll(rc)
	must.Eq(t, "whole", string(got))
	must.Eq(t, int64(5), meta.Size)
}
