package executor

import (
	"os"
	"strconv"

	"github.com/nomadq/nomadq/client/fsutil"
)

// Log files are "<prefix>.<n>": the highest n is the one being written,
// as with Nomad's log rotation. The task writes straight into the file
// through the descriptor it inherits, so rotation cannot swap files under
// it; instead the waiter rotates by copy-and-truncate: the full file's
// bytes are copied to a new file that takes its index, the live file is
// truncated and renamed to the next index. Bytes the task writes between
// the copy and the truncate are lost; this is the price of having no
// log-shipping process between the task and its files.

// openLog opens the live log file of prefix for appending.
func openLog(prefix string) (*os.File, int, error) {
	if prefix == "" {
		// Logs disabled: the output goes nowhere.
		f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		return f, 0, err
	}
	idx := fsutil.LatestLogIndex(prefix)
	f, err := os.OpenFile(prefix+"."+strconv.Itoa(idx), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	return f, idx, err
}

// rotator rotates one stream's files.
type rotator struct {
	prefix   string
	idx      int
	f        *os.File
	maxSize  int64
	maxFiles int
}

// check rotates when the live file has reached maxSize.
func (r *rotator) check() {
	if r.maxSize <= 0 {
		return
	}
	st, err := r.f.Stat()
	if err != nil || st.Size() < r.maxSize {
		return
	}
	live := r.prefix + "." + strconv.Itoa(r.idx)
	tmp := live + ".rotating"
	if err := fsutil.CopyFile(live, tmp, 0o644); err != nil {
		os.Remove(tmp)
		return
	}
	if err := r.f.Truncate(0); err != nil {
		os.Remove(tmp)
		return
	}
	next := r.prefix + "." + strconv.Itoa(r.idx+1)
	if err := os.Rename(live, next); err != nil {
		return
	}
	_ = os.Rename(tmp, live)
	r.idx++
	fsutil.PruneLogs(r.prefix, r.idx, r.maxFiles)
}
