package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"

	"github.com/nomadq/nomadq/structs"
)

// clientAPI returns the node agent's endpoints, or a 404 naming why there
// are none.
func (h *httpHandler) clientAPI() (clientEndpoints, error) {
	if h.agent.client == nil {
		return nil, codedErr(http.StatusNotFound, "No client on this agent: client endpoints need client.enabled")
	}
	ce, ok := h.agent.client.(clientEndpoints)
	if !ok {
		return nil, codedErr(http.StatusNotImplemented, "This agent's client does not serve client endpoints")
	}
	return ce, nil
}

// clientAllocRequest serves /v1/client/allocation/:id/stats from this
// agent's client, and /checks, /restart, /signal and /exec wherever the
// alloc runs.
func (h *httpHandler) clientAllocRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	allocID, rest, err := pathID(r, "/v1/client/allocation/")
	if err != nil {
		return nil, err
	}
	switch rest {
	case "/exec":
		return h.clientAllocExec(w, r, allocID)
	case "/checks":
		return h.clientAllocChecks(w, r, allocID)
	case "/restart", "/signal":
		t, err := h.localAlloc(w, r, allocID)
		if t == nil {
			return handled{}, err
		}
		if rest == "/restart" {
			return h.clientAllocRestart(r, t)
		}
		return h.clientAllocSignal(r, t)
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	ce, err := h.clientAPI()
	if err != nil {
		return nil, err
	}
	switch rest {
	case "/stats":
		out, err := ce.AllocStats(allocID)
		return out, rpcError(err)
	}
	return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
}

func (h *httpHandler) clientStatsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	ce, err := h.clientAPI()
	if err != nil {
		return nil, err
	}
	if id := r.URL.Query().Get("node_id"); id != "" && id != h.agent.client.NodeID() {
		return nil, codedErr(http.StatusNotFound, "Unknown node %s: this agent serves stats of node %s only", id, h.agent.client.NodeID())
	}
	out, err := ce.HostStats()
	return out, rpcError(err)
}

// logFrame is one frame of a framed log stream, as the api client's
// StreamFrame decodes it.
type logFrame struct {
	Offset    int64
	Data      []byte `json:",omitempty"`
	File      string `json:",omitempty"`
	FileEvent string `json:",omitempty"`
}

// clientLogsRequest serves /v1/client/fs/logs/:alloc_id: the raw log with
// plain=true, otherwise JSON frames carrying base64 data.
func (h *httpHandler) clientLogsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	allocID, _, err := pathID(r, "/v1/client/fs/logs/")
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	task, logType := q.Get("task"), q.Get("type")
	if task == "" {
		return nil, codedErr(http.StatusBadRequest, "must provide task name")
	}
	if logType != "stdout" && logType != "stderr" {
		return nil, codedErr(http.StatusBadRequest, "type must be stdout or stderr, got %q", logType)
	}
	origin := q.Get("origin")
	if origin == "" {
		origin = "start"
	}
	if origin != "start" && origin != "end" {
		return nil, codedErr(http.StatusBadRequest, "origin must be start or end, got %q", origin)
	}
	var offset int64
	if s := q.Get("offset"); s != "" {
		if offset, err = strconv.ParseInt(s, 10, 64); err != nil || offset < 0 {
			return nil, codedErr(http.StatusBadRequest, "offset must be a non-negative integer, got %q", s)
		}
	}
	follow, plain := false, false
	for name, into := range map[string]*bool{"follow": &follow, "plain": &plain} {
		if s := q.Get(name); s != "" {
			b, err := strconv.ParseBool(s)
			if err != nil {
				return nil, codedErr(http.StatusBadRequest, "%s must be a bool, got %q", name, s)
			}
			*into = b
		}
	}
	t, err := h.localAlloc(w, r, allocID)
	if t == nil {
		return handled{}, err
	}
	if err := logsDisabled(t.alloc, task); err != nil {
		return nil, err
	}
	rc, err := t.ce.Logs(allocID, task, logType, origin, offset, follow)
	if err != nil {
		return nil, rpcError(err)
	}
	defer rc.Close()
	go func() {
		<-r.Context().Done()
		rc.Close()
	}()
	flusher, _ := w.(http.Flusher)
	if plain {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	buf := make([]byte, 32<<10)
	file := "alloc/logs/" + task + "." + logType + ".0"
	var pos int64
	for {
		n, err := rc.Read(buf)
		if n > 0 {
			if plain {
				w.Write(buf[:n])
			} else {
				pos += int64(n)
				var fb bytes.Buffer
				_ = json.NewEncoder(&fb).Encode(logFrame{Offset: pos, Data: buf[:n], File: file})
				w.Write(fb.Bytes())
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err == io.EOF || err != nil {
			break
		}
	}
	return handled{}, nil
}

// logsDisabled answers a request for the logs of a task that writes none
// (logs { disabled = true }) with a 400 that says so, rather than with an
// empty log.
func logsDisabled(a *structs.Allocation, task string) error {
	if a.Job == nil {
		return nil
	}
	tg := a.Job.LookupTaskGroup(a.TaskGroup)
	if tg == nil {
		return nil
	}
	if t := tg.LookupTask(task); t != nil && t.LogConfig != nil && t.LogConfig.Disabled {
		return codedErr(http.StatusBadRequest, "task %q has no logs: its logs block sets disabled = true", task)
	}
	return nil
}
