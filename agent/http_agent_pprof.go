package agent

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// agentPprofRequest serves the agent's runtime profiles under
// /v1/agent/pprof/: cmdline, profile (CPU, ?seconds), trace (?seconds)
// and every runtime/pprof profile by name (goroutine, heap, allocs,
// block, mutex, threadcreate; ?debug for text, ?gc to collect first).
// Only with enable_debug; otherwise 403.
func (h *httpHandler) agentPprofRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	name := strings.TrimPrefix(r.URL.Path, "/v1/agent/pprof/")
	if name == "" {
		return nil, codedErr(http.StatusNotFound, "Invalid method")
	}
	// With ACLs on, the agent:write rule decides instead, as in Nomad.
	if !h.agent.config.EnableDebug && !h.agent.config.ACL.Enabled {
		return nil, errPermissionDenied
	}
	q := r.URL.Query()
	if err := h.checkTarget(q); err != nil {
		return nil, err
	}
	// Bad numbers read as 0, as net/http/pprof reads them.
	seconds, _ := strconv.Atoi(q.Get("seconds"))
	if seconds <= 0 {
		seconds = 1
	}
	debug, _ := strconv.Atoi(q.Get("debug"))
	gc, _ := strconv.Atoi(q.Get("gc"))

	var buf bytes.Buffer
	switch name {
	case "cmdline":
		buf.WriteString(strings.Join(os.Args, "\x00"))
		debug = 1 // text
	case "profile":
		if err := pprof.StartCPUProfile(&buf); err != nil {
			return nil, codedErr(http.StatusInternalServerError, "Could not enable CPU profiling: %v", err)
		}
		sleepCtx(r, time.Duration(seconds)*time.Second)
		pprof.StopCPUProfile()
		debug = 0
	case "trace":
		if err := trace.Start(&buf); err != nil {
			return nil, codedErr(http.StatusInternalServerError, "Could not enable tracing: %v", err)
		}
		sleepCtx(r, time.Duration(seconds)*time.Second)
		trace.Stop()
		debug = 0
	default:
		p := pprof.Lookup(name)
		if p == nil {
			return nil, codedErr(http.StatusNotFound, "Unknown profile: %s", name)
		}
		if name == "heap" && gc > 0 {
			runtime.GC()
		}
		if err := p.WriteTo(&buf, debug); err != nil {
			return nil, fmt.Errorf("write %s profile: %w", name, err)
		}
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	}
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
	return handled{}, nil
}

// sleepCtx waits d or until the client goes away.
func sleepCtx(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}
