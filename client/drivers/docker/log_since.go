package docker

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// The driver asks the engine for its output with timestamps, strips them,
// and keeps the newest in a small mark file beside the logs, rewritten in
// place after every message. A client restarted while the container runs
// follows the output again from just after that mark, so no line is
// written twice and none is lost; the log files' modification times are
// too coarse for that (the kernel stamps them with a clock that may lag
// the engine's timestamps by a few milliseconds).

// sinceMarkPath is the mark file of a task whose stdout is prefix.
func sinceMarkPath(stdoutPrefix string) string {
	return filepath.Join(filepath.Dir(stdoutPrefix), "."+filepath.Base(stdoutPrefix)+".docker-since")
}

// readSinceMark returns the instant just after the newest message copied
// before, or the zero time when there is no readable mark.
func readSinceMark(stdoutPrefix string) time.Time {
	if stdoutPrefix == "" {
		return time.Time{}
	}
	b, err := os.ReadFile(sinceMarkPath(stdoutPrefix))
	if err != nil {
		return time.Time{}
	}
	ns, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil || ns <= 0 {
		return time.Time{}
	}
	// The engine's since is inclusive: start one nanosecond later.
	return time.Unix(0, ns+1)
}

// sinceMark records the newest message timestamp of a task's streams.
type sinceMark struct {
	mu   sync.Mutex
	f    *os.File
	last time.Time
}

// openSinceMark opens the mark of stdoutPrefix; "" (output discarded)
// gives a mark that records nothing.
func openSinceMark(stdoutPrefix string) (*sinceMark, error) {
	if stdoutPrefix == "" {
		return &sinceMark{}, nil
	}
	f, err := os.OpenFile(sinceMarkPath(stdoutPrefix), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &sinceMark{f: f}, nil
}

// note records ts when it is newer than the last one: a fixed-width
// decimal written at offset 0, so the file is never half old, half new
// in a way that parses to a wrong time.
func (m *sinceMark) note(ts time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !ts.After(m.last) {
		return
	}
	m.last = ts
	if m.f == nil {
		return
	}
	_, _ = m.f.WriteAt([]byte(strconv.FormatInt(ts.UnixNano(), 10)+"\n"), 0)
}

func (m *sinceMark) Close() error {
	if m.f == nil {
		return nil
	}
	return m.f.Close()
}

// stampStripper writes the engine's timestamped output to w without the
// timestamps, noting each in mark. With lines set (a terminal's raw
// stream) a timestamp starts every line; otherwise every Write is one
// message (one multiplexed frame) that starts with one.
type stampStripper struct {
	w       interface{ Write([]byte) (int, error) }
	mark    *sinceMark
	lines   bool
	atStart bool
	pending []byte
}

func newStampStripper(w interface{ Write([]byte) (int, error) }, mark *sinceMark, lines bool) *stampStripper {
	return &stampStripper{w: w, mark: mark, lines: lines, atStart: true}
}

func (s *stampStripper) Write(p []byte) (int, error) {
	n := len(p)
	if !s.lines {
		s.atStart, s.pending = true, s.pending[:0]
	}
	for len(p) > 0 {
		if s.atStart {
			i := bytes.IndexByte(p, ' ')
			if i < 0 {
				s.pending = append(s.pending, p...)
				return n, nil
			}
			s.pending = append(s.pending, p[:i]...)
			if ts, err := time.Parse(time.RFC3339Nano, string(s.pending)); err == nil {
				s.mark.note(ts)
				p = p[i+1:]
			} else {
				// Not a timestamp after all: keep the bytes as output.
				if _, err := s.w.Write(s.pending); err != nil {
					return 0, err
				}
				p = p[i:]
			}
			s.pending = s.pending[:0]
			s.atStart = false
		}
		if !s.lines {
			if _, err := s.w.Write(p); err != nil {
				return 0, err
			}
			return n, nil
		}
		j := bytes.IndexByte(p, '\n')
		if j < 0 {
			if _, err := s.w.Write(p); err != nil {
				return 0, err
			}
			return n, nil
		}
		if _, err := s.w.Write(p[:j+1]); err != nil {
			return 0, err
		}
		p = p[j+1:]
		s.atStart = true
	}
	return n, nil
}
