package client

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// logPollInterval is how often a following reader looks for more output.
const logPollInterval = 200 * time.Millisecond

// LogReader reads a task's stdout or stderr (logType) across its rotated
// files. origin "start" skips offset bytes from the oldest kept byte;
// "end" starts offset bytes before the newest. With follow, reads block
// for new output until the reader is closed.
func (c *Client) LogReader(allocID, task, logType, origin string, offset int64, follow bool) (io.ReadCloser, error) {
	ar, err := c.runner(allocID)
	if err != nil {
		return nil, err
	}
	tr := ar.TaskRunner(task)
	if tr == nil {
		return nil, fmt.Errorf("unknown task %q in allocation %q", task, allocID)
	}
	if lc := tr.Task().LogConfig; lc != nil && lc.Disabled {
		return nil, fmt.Errorf("task %q has no logs: its logs block sets disabled = true", task)
	}
	if logType != "stdout" && logType != "stderr" {
		return nil, fmt.Errorf("invalid log type %q: must be stdout or stderr", logType)
	}
	if offset < 0 {
		return nil, fmt.Errorf("invalid offset %d: must not be negative", offset)
	}
	prefix := filepath.Join(ar.AllocDir().LogDir(), task+"."+logType)
	r := &logReader{prefix: prefix, follow: follow, closed: make(chan struct{})}
	switch origin {
	case "", "start":
		err = r.seekStart(offset)
	case "end":
		err = r.seekEnd(offset)
	default:
		return nil, fmt.Errorf("invalid origin %q: must be start or end", origin)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

type logReader struct {
	prefix string
	follow bool
	idx    int
	f      *os.File
	pos    int64

	closeOnce sync.Once
	closed    chan struct{}
}

// indexes returns the indexes of the files that exist, ascending.
func (r *logReader) indexes() []int {
	matches, _ := filepath.Glob(r.prefix + ".*")
	var out []int
	for _, m := range matches {
		if n, err := strconv.Atoi(strings.TrimPrefix(m, r.prefix+".")); err == nil {
			out = append(out, n)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func (r *logReader) name(idx int) string { return r.prefix + "." + strconv.Itoa(idx) }

func (r *logReader) open(idx int, pos int64) error {
	if r.f != nil {
		r.f.Close()
		r.f = nil
	}
	r.idx, r.pos = idx, pos
	f, err := os.Open(r.name(idx))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		f.Close()
		return err
	}
	r.f = f
	return nil
}

func (r *logReader) seekStart(offset int64) error {
	idxs := r.indexes()
	for i, idx := range idxs {
		st, err := os.Stat(r.name(idx))
		if err != nil {
			continue
		}
		if offset < st.Size() || i == len(idxs)-1 {
			return r.open(idx, min(offset, st.Size()))
		}
		offset -= st.Size()
	}
	return r.open(0, 0)
}

func (r *logReader) seekEnd(offset int64) error {
	idxs := r.indexes()
	for i := len(idxs) - 1; i >= 0; i-- {
		st, err := os.Stat(r.name(idxs[i]))
		if err != nil {
			continue
		}
		if offset <= st.Size() || i == 0 {
			return r.open(idxs[i], max(st.Size()-offset, 0))
		}
		offset -= st.Size()
	}
	return r.open(0, 0)
}

// Read reads on through the files; a live file that shrank under the
// reader was rotated (copied to its index, renamed to the next), so the
// rest of its bytes are in the copy.
func (r *logReader) Read(p []byte) (int, error) {
	for {
		select {
		case <-r.closed:
			if r.f != nil {
				r.f.Close()
				r.f = nil
			}
			return 0, io.EOF
		default:
		}
		if r.f == nil {
			if err := r.open(r.idx, r.pos); err != nil {
				return 0, err
			}
		}
		if r.f != nil {
			n, err := r.f.Read(p)
			r.pos += int64(n)
			if n > 0 {
				return n, nil
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
			if st, serr := r.f.Stat(); serr == nil && st.Size() < r.pos {
				if err := r.open(r.idx, r.pos); err != nil {
					return 0, err
				}
				continue
			}
		}
		if next := r.nextIndex(); next >= 0 {
			if err := r.open(next, 0); err != nil {
				return 0, err
			}
			continue
		}
		if !r.follow {
			return 0, io.EOF
		}
		select {
		case <-r.closed:
			return 0, io.EOF
		case <-time.After(logPollInterval):
		}
	}
}

// nextIndex is the smallest existing index above the current, or -1.
func (r *logReader) nextIndex() int {
	for _, idx := range r.indexes() {
		if idx > r.idx {
			return idx
		}
	}
	return -1
}

// Close ends the reader; a blocked following Read returns io.EOF.
func (r *logReader) Close() error {
	r.closeOnce.Do(func() { close(r.closed) })
	return nil
}
