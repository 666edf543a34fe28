package docker

import (
	"io"
	"os"
	"strconv"

	"github.com/nomadq/nomadq/client/fsutil"
)

// Log files are "<prefix>.<n>", the highest n the live one, as the other
// drivers and Nomad's log rotation name them. The driver itself writes
// them (it copies the container's output), so rotation simply closes the
// full file and opens the next index.

// logWriter appends to a stream's live log file and rotates it at
// maxSize, keeping at most maxFiles files.
type logWriter struct {
	prefix   string
	idx      int
	f        *os.File
	size     int64
	maxSize  int64
	maxFiles int
}

// openLogWriter opens the live file of prefix; "" discards the output.
func openLogWriter(prefix string, maxFiles int, maxSize int64) (io.WriteCloser, error) {
	if prefix == "" {
		return nopWriteCloser{}, nil
	}
	w := &logWriter{prefix: prefix, idx: fsutil.LatestLogIndex(prefix), maxSize: maxSize, maxFiles: maxFiles}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *logWriter) open() error {
	f, err := os.OpenFile(w.prefix+"."+strconv.Itoa(w.idx), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	w.f, w.size = f, st.Size()
	return nil
}

// Write writes p, moving to the next file first when the live one is full.
func (w *logWriter) Write(p []byte) (int, error) {
	if w.maxSize > 0 && w.size > 0 && w.size+int64(len(p)) > w.maxSize {
		if err := w.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := w.f.Write(p)
	w.size += int64(n)
	return n, err
}

func (w *logWriter) rotate() error {
	if err := w.f.Close(); err != nil {
		return err
	}
	w.idx++
	if err := w.open(); err != nil {
		return err
	}
	if w.maxFiles > 0 {
		fsutil.PruneLogs(w.prefix, w.idx, w.maxFiles)
	}
	return nil
}

// Close closes the live file.
func (w *logWriter) Close() error { return w.f.Close() }

type nopWriteCloser struct{}

func (nopWriteCloser) Write(p []byte) (int, error) { return len(p), nil }
func (nopWriteCloser) Close() error                { return nil }
