package nomad

import (
	"bytes"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	wal "github.com/hashicorp/raft-wal"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
	"github.com/shoenig/test/must"
)

// fullDisk is the WAL's file system with a disk that can be made full:
// writes to segment files and the creation of new ones fail with ENOSPC.
type fullDisk struct {
	*fs.FS
	full atomic.Bool
	// noNewFiles fails only the creation of files (a preallocated segment
	// has room for its writes; the next one does not fit).
	noNewFiles atomic.Bool
}

func (d *fullDisk) Create(dir, name string, size uint64) (types.WritableFile, error) {
	if d.full.Load() || d.noNewFiles.Load() {
		return nil, syscall.ENOSPC
	}
	f, err := d.FS.Create(dir, name, size)
	if err != nil {
		return nil, err
	}
	return &fullDiskFile{WritableFile: f, disk: d}, nil
}

func (d *fullDisk) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := d.FS.OpenWriter(dir, name)
	if err != nil {
		return nil, err
	}
	return &fullDiskFile{WritableFile: f, disk: d}, nil
}

type fullDiskFile struct {
	types.WritableFile
	disk *fullDisk
}

func (f *fullDiskFile) WriteAt(p []byte, off int64) (int, error) {
	if f.disk.full.Load() {
		// A torn write: part of the buffer reaches the file.
		n, _ := f.WritableFile.WriteAt(p[:len(p)/2], off)
		return n, syscall.ENOSPC
	}
	return f.WritableFile.WriteAt(p, off)
}

// testWALStore opens a walStore on dir with 64 KiB segments over disk.
// closeWAL closes it and its meta store.
func testWALStore(t *testing.T, dir string, disk *fullDisk) (s *walStore, closeWAL func()) {
	t.Helper()
	meta := &metadb.BoltMetaDB{}
	t.Cleanup(func() { _ = meta.Close() })
	s, err := openWALStore(dir, hclog.NewNullLogger(), func() (*wal.WAL, error) {
		return wal.Open(dir, wal.WithMetaStore(meta), wal.WithSegmentSize(64*1024),
			wal.WithSegmentFiler(segment.NewFiler(dir, disk)))
	})
	must.NoError(t, err)
	return s, func() {
		must.NoError(t, s.Close())
		must.NoError(t, meta.Close())
	}
}

// testWALStoreOpen opens the WAL in dir on the real file system, with a
// meta store closed when the test ends.
func testWALStoreOpen(t *testing.T, dir string) func() (*wal.WAL, error) {
	meta := &metadb.BoltMetaDB{}
	t.Cleanup(func() { _ = meta.Close() })
	return func() (*wal.WAL, error) {
		return wal.Open(dir, wal.WithMetaStore(meta), wal.WithSegmentSize(64*1024))
	}
}

func walEntry(i uint64) *raft.Log {
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, 1000)}
}

// TestWALStore_RecoversAfterFailedWrites: after a write fails (a torn
// write inside the tail segment, or a tail that was sealed when the next
// segment could not be created) the next write succeeds once the disk
// has room again, and every entry stored before the fault, and after,
// reads back, then and after a reopen.
func TestWALStore_RecoversAfterFailedWrites(t *testing.T) {
	for _, tc := range []struct {
		name string
		// fault makes the disk full before the write of entry i.
		fault func(d *fullDisk, i uint64)
		// want is in the error of the first failed write.
		want string
	}{
		{"write in the tail", func(d *fullDisk, i uint64) { d.full.Store(i == 20) }, "no space left on device"},
		// 64 KiB segments hold about 60 entries of 1 KB: the first one is
		// sealed and the next one cannot be created, after which every
		// append to the sealed one fails.
		{"next segment", func(d *fullDisk, i uint64) { d.noNewFiles.Store(i >= 2) }, "segment is sealed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			disk := &fullDisk{FS: fs.New()}
			s, closeWAL := testWALStore(t, dir, disk)
			var stored uint64
			var failures int
			for i := uint64(1); i <= 150; {
				if failures == 0 {
					tc.fault(disk, i)
				}
				err := s.StoreLogs([]*raft.Log{walEntry(i)})
				if err != nil {
					failures++
					must.StrContains(t, err.Error(), "write raft log in "+dir)
					must.StrContains(t, err.Error(), tc.want)
					must.Eq(t, 1, failures, must.Sprint("writes still fail after space returned"))
					// Space returns after the first failure; Raft writes
					// the same index again.
					disk.full.Store(false)
					disk.noNewFiles.Store(false)
					continue
				}
				stored = i
				i++
			}
			must.Eq(t, uint64(150), stored)
			must.Positive(t, failures)
			check := func(s *walStore) {
				last, err := s.LastIndex()
				must.NoError(t, err)
				must.Eq(t, uint64(150), last)
				for i := uint64(1); i <= 150; i++ {
					var l raft.Log
					must.NoError(t, s.GetLog(i, &l))
					must.Eq(t, walEntry(i).Data, l.Data, must.Sprintf("entry %d", i))
				}
			}
			check(s)
			closeWAL()
			s, _ = testWALStore(t, dir, disk)
			check(s)
		})
	}
}

// TestWALStore_StaysReadableWhileFull: while the disk stays full every
// write fails with the disk's error and the entries already stored stay
// readable (Raft reads them to apply and replicate).
func TestWALStore_StaysReadableWhileFull(t *testing.T) {
	dir := t.TempDir()
	disk := &fullDisk{FS: fs.New()}
	s, closeWAL := testWALStore(t, dir, disk)
	defer closeWAL()
	for i := uint64(1); i <= 10; i++ {
		must.NoError(t, s.StoreLogs([]*raft.Log{walEntry(i)}))
	}
	disk.full.Store(true)
	for range 3 {
		err := s.StoreLogs([]*raft.Log{walEntry(11)})
		must.ErrorIs(t, err, syscall.ENOSPC)
		must.StrContains(t, err.Error(), fmt.Sprintf("write raft log in %s", dir))
		var l raft.Log
		must.NoError(t, s.GetLog(10, &l))
	}
	disk.full.Store(false)
	must.NoError(t, s.StoreLogs([]*raft.Log{walEntry(11)}))
}
