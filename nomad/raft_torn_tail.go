package nomad

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// walTail is what the last segment file of a raft-wal directory holds
// before the WAL opens it: the entry frames it finds, committed or not.
type walTail struct {
	path string
	base uint64
	// entryAt is the file offset of each entry frame, in index order.
	entryAt []int64
	// end is the offset just past the last frame.
	end int64
}

// raft-wal's segment format (segment/format.go in raft-wal v0.4.0): a
// 32-byte file header, then frames of an 8-byte header (type, 3 reserved
// bytes, a little-endian length, or the CRC of a commit frame) and the
// payload padded to 8 bytes. The first frame that is zeros, of an unknown
// type or cut short ends the data, as it does for raft-wal.
const (
	walFileHeaderLen  = 32
	walFrameHeaderLen = 8
	walFrameEntry     = 1
	walFrameIndex     = 2
	walFrameCommit    = 3
)

// readWALTail scans the last segment file of dir (the one with the
// greatest base index); nil when there is none or it cannot be read. It
// reads only frame headers.
func readWALTail(dir string) *walTail {
	names, err := filepath.Glob(filepath.Join(dir, "*.wal"))
	if err != nil || len(names) == 0 {
		return nil
	}
	sort.Strings(names) // the base index is zero-padded
	path := names[len(names)-1]
	base, _, _ := strings.Cut(filepath.Base(path), "-")
	b, err := strconv.ParseUint(base, 10, 64)
	if err != nil {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	t := &walTail{path: path, base: b, end: walFileHeaderLen}
	var hdr [walFrameHeaderLen]byte
	for off := int64(walFileHeaderLen); ; {
		if n, err := f.ReadAt(hdr[:], off); n < len(hdr) || (err != nil && err != io.EOF) {
			return t
		}
		size := int64(walFrameHeaderLen)
		switch hdr[0] {
		case walFrameEntry, walFrameIndex:
			n := int64(binary.LittleEndian.Uint32(hdr[4:8]))
			size += n + (walFrameHeaderLen-n%walFrameHeaderLen)%walFrameHeaderLen
			if hdr[0] == walFrameEntry {
				t.entryAt = append(t.entryAt, off)
			}
		case walFrameCommit:
		default:
			return t
		}
		off += size
		t.end = off
	}
}

// warnTornTail logs at WARN the entries that were in the last segment
// file before the WAL opened it and that it dropped: raft-wal truncates a
// tail whose last batch has no commit frame or a commit frame whose CRC
// does not match (a torn or incomplete write) without a word. Such a
// batch was never acknowledged as stored (Raft counts an entry stored
// once the WAL's fsync returned), unless the disk lost data it said it
// had written; either way an operator should know.
func warnTornTail(logger hclog.Logger, before *walTail, last uint64) {
	if before == nil || len(before.entryAt) == 0 {
		return
	}
	fileLast := before.base + uint64(len(before.entryAt)) - 1
	if last >= fileLast {
		return
	}
	from := max(last+1, before.base)
	logger.Warn("raft log: the last segment ended in a torn or uncommitted write; its entries were dropped",
		"segment", before.path, "dropped_from_index", from, "dropped_to_index", fileLast,
		"dropped_entries", fileLast-from+1, "dropped_bytes", before.end-before.entryAt[from-before.base],
		"last_index", last)
}
