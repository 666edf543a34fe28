package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/nomadq/nomadq/client/allocdir"
)

// fsPollInterval is how often a following stream looks for more data.
const fsPollInterval = 200 * time.Millisecond

// fsHeartbeat is how long a following stream stays silent before it sends
// an empty frame, so that proxies and clients see the stream alive.
const fsHeartbeat = 10 * time.Second

// clientFSRequest serves /v1/client/fs/{ls,stat,cat,readat,stream}/:alloc
// wherever the alloc runs.
func (h *httpHandler) clientFSRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	op, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.EscapedPath(), "/v1/client/fs/"), "/")
	switch op {
	case "ls", "stat", "cat", "readat", "stream":
	default:
		return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
	}
	allocID, _, err := pathID(r, "/v1/client/fs/"+op+"/")
	if err != nil {
		return nil, err
	}
	if allocID == "" || rest == "" {
		return nil, codedErr(http.StatusBadRequest, "missing allocation ID in path")
	}
	t, err := h.localAlloc(w, r, allocID)
	if t == nil {
		return handled{}, err
	}
	dir, err := t.ce.AllocDir(t.alloc.ID)
	if err != nil {
		return nil, codedErr(http.StatusNotFound, "allocation %q has no directory on this node: %v", allocID, err)
	}
	q := r.URL.Query()
	path := q.Get("path")
	if path == "" {
		if op != "ls" {
			return nil, codedErr(http.StatusBadRequest, "must provide a file path")
		}
		path = "/"
	}
	switch op {
	case "ls":
		out, err := dir.List(path)
		return out, fsError(err)
	case "stat":
		out, err := dir.Stat(path)
		return out, fsError(err)
	case "cat":
		return h.fsCat(w, dir, path, 0, -1)
	case "readat":
		offset, err := intParam(q.Get("offset"), "offset", 0)
		if err != nil {
			return nil, err
		}
		limit, err := intParam(q.Get("limit"), "limit", -1)
		if err != nil {
			return nil, err
		}
		return h.fsCat(w, dir, path, offset, limit)
	}
	return h.fsStream(w, r, dir, path)
}

// intParam reads an integer parameter; empty is def. Only -1 may stand
// for "no limit" among negative values.
func intParam(s, name string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < -1 || (n < 0 && def >= 0) {
		return 0, codedErr(http.StatusBadRequest, "%s must be a non-negative integer, got %q", name, s)
	}
	return n, nil
}

// fsError maps a file system error to its status.
func fsError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, allocdir.ErrEscapes):
		return codedErr(http.StatusBadRequest, "%v", err)
	case errors.Is(err, allocdir.ErrSecret):
		return codedErr(http.StatusForbidden, "%v", err)
	case errors.Is(err, os.ErrNotExist):
		return codedErr(http.StatusNotFound, "%v", err)
	}
	return codedErr(http.StatusInternalServerError, "%v", err)
}

// fsCat writes limit bytes (-1: all) of a file from offset, as it is.
func (h *httpHandler) fsCat(w http.ResponseWriter, dir *allocdir.AllocDir, path string, offset, limit int64) (any, error) {
	f, err := dir.Open(path)
	if err != nil {
		return nil, fsError(err)
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, fsError(err)
	}
	var src io.Reader = f
	if limit >= 0 {
		src = io.LimitReader(f, limit)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, src)
	return handled{}, nil
}

// fsStream writes a file as JSON frames from an offset, counted from the
// start or the end; with follow (the default) it goes on with what is
// appended, reports truncation, and ends when the file is deleted or the
// client goes away.
func (h *httpHandler) fsStream(w http.ResponseWriter, r *http.Request, dir *allocdir.AllocDir, path string) (any, error) {
	q := r.URL.Query()
	offset, err := intParam(q.Get("offset"), "offset", 0)
	if err != nil {
		return nil, err
	}
	origin := q.Get("origin")
	switch origin {
	case "":
		origin = "start"
	case "start", "end":
	default:
		return nil, codedErr(http.StatusBadRequest, "origin must be start or end, got %q", origin)
	}
	follow := true
	if s := q.Get("follow"); s != "" {
		if follow, err = strconv.ParseBool(s); err != nil {
			return nil, codedErr(http.StatusBadRequest, "follow must be a bool, got %q", s)
		}
	}
	f, err := dir.Open(path)
	if err != nil {
		return nil, fsError(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fsError(err)
	}
	pos := min(offset, st.Size())
	if origin == "end" {
		pos = max(st.Size()-offset, 0)
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return nil, fsError(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(fr logFrame) bool {
		var b bytes.Buffer
		_ = json.NewEncoder(&b).Encode(fr)
		if _, err := w.Write(b.Bytes()); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	buf := make([]byte, 32<<10)
	lastSent := time.Now()
	for {
		n, rerr := f.Read(buf)
		if n > 0 {
			pos += int64(n)
			if !send(logFrame{Offset: pos, Data: buf[:n], File: path}) {
				return handled{}, nil
			}
			lastSent = time.Now()
			continue
		}
		if rerr != nil && rerr != io.EOF {
			return handled{}, nil
		}
		if !follow {
			return handled{}, nil
		}
		if _, err := os.Stat(f.Name()); errors.Is(err, os.ErrNotExist) {
			send(logFrame{Offset: pos, File: path, FileEvent: "file deleted"})
			return handled{}, nil
		}
		if st, err := f.Stat(); err == nil && st.Size() < pos {
			pos = 0
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return handled{}, nil
			}
			if !send(logFrame{Offset: pos, File: path, FileEvent: "file truncated"}) {
				return handled{}, nil
			}
		}
		if time.Since(lastSent) >= fsHeartbeat {
			if !send(logFrame{}) {
				return handled{}, nil
			}
			lastSent = time.Now()
		}
		select {
		case <-r.Context().Done():
			return handled{}, nil
		case <-time.After(fsPollInterval):
		}
	}
}
