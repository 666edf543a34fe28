package nomad

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/hashicorp/raft-wal/fs"
	"github.com/shoenig/test/must"
)

// walDataEnd returns the offset just past the last frame of a segment
// file: frames are 8-byte aligned and the last one is a commit frame,
// whose first byte is not zero; the rest of the preallocated file is.
func walDataEnd(t *testing.T, buf []byte) int {
	t.Helper()
	end := len(bytes.TrimRight(buf, "\x00"))
	return (end + 7) &^ 7
}

// TestWALStore_TornTailIsLogged: entries the WAL drops from the end of
// its last segment when it opens (a batch without its commit frame, or
// one whose commit CRC does not match) are logged at WARN with their
// indexes and size; a clean log logs nothing.
func TestWALStore_TornTailIsLogged(t *testing.T) {
	for _, tc := range []struct {
		name string
		// damage changes the segment file; it returns what the WARN line
		// must hold.
		damage   func(buf []byte) ([]byte, []string)
		wantLast uint64
	}{
		{"clean", func(buf []byte) ([]byte, []string) { return buf, nil }, 30},
		{"uncommitted entry", func(buf []byte) ([]byte, []string) {
			end := walDataEnd(t, buf)
			// An entry frame of 1,000 bytes of which 40 reached the disk,
			// and no commit frame.
			binary.LittleEndian.PutUint32(buf[end+4:], 1000)
			buf[end] = walFrameEntry
			copy(buf[end+8:], bytes.Repeat([]byte{0xab}, 40))
			return buf, []string{"dropped_from_index=31", "dropped_to_index=31", "dropped_entries=1", "dropped_bytes=1008"}
		}, 30},
		{"last batch fails its CRC", func(buf []byte) ([]byte, []string) {
			end := walDataEnd(t, buf)
			buf[end-16] ^= 0xff // inside entry 30, the last batch
			return buf, []string{"dropped_from_index=30", "dropped_to_index=30", "dropped_entries=1"}
		}, 29},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s, closeWAL := testWALStore(t, dir, &fullDisk{FS: fs.New()})
			for i := uint64(1); i <= 30; i++ {
				must.NoError(t, s.StoreLogs([]*raft.Log{walEntry(i)}))
			}
			closeWAL()
			segs, err := filepath.Glob(filepath.Join(dir, "*.wal"))
			must.NoError(t, err)
			seg := segs[len(segs)-1]
			buf, err := os.ReadFile(seg)
			must.NoError(t, err)
			buf, want := tc.damage(buf)
			must.NoError(t, os.WriteFile(seg, buf, 0o600))

			var logs bytes.Buffer
			logger := hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Warn})
			s, err = openWALStore(dir, logger, testWALStoreOpen(t, dir))
			must.NoError(t, err)
			defer s.Close()
			last, err := s.LastIndex()
			must.NoError(t, err)
			must.Eq(t, tc.wantLast, last)
			if want == nil {
				must.Eq(t, "", logs.String())
				return
			}
			must.StrContains(t, logs.String(), "[WARN]  raft log: the last segment ended in a torn or uncommitted write")
			must.StrContains(t, logs.String(), "segment="+seg)
			for _, w := range want {
				must.StrContains(t, logs.String(), w)
			}
		})
	}
}
