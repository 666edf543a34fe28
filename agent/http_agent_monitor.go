package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// monitorBuffer is how many log lines a slow monitor reader may fall
// behind before lines are dropped; logging never waits for a reader.
const monitorBuffer = 512

// monitorHeartbeat is how often an idle monitor stream gets an empty
// frame, so proxies and the client see the stream is alive.
const monitorHeartbeat = 10 * time.Second

// logMonitor is one /v1/agent/monitor reader: an hclog sink with its own
// level and format that hands formatted lines over a bounded channel.
type logMonitor struct {
	lines   chan []byte
	mu      sync.Mutex
	dropped int
}

// Write receives one formatted log line from the sink adapter.
func (m *logMonitor) Write(p []byte) (int, error) {
	line := bytes.Clone(p)
	select {
	case m.lines <- line:
	default:
		m.mu.Lock()
		m.dropped++
		m.mu.Unlock()
	}
	return len(p), nil
}

// takeDropped returns and resets the count of lines dropped.
func (m *logMonitor) takeDropped() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := m.dropped
	m.dropped = 0
	return n
}

// agentMonitorRequest streams the agent's log at log_level (default
// INFO), as JSON frames, or as plain text with plain=true; log_json
// formats each line as JSON and log_include_location adds the caller.
func (h *httpHandler) agentMonitorRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	q := r.URL.Query()
	levelName := q.Get("log_level")
	if levelName == "" {
		levelName = "INFO"
	}
	level := hclog.LevelFromString(levelName)
	if level == hclog.NoLevel {
		return nil, codedErr(http.StatusBadRequest, "Unknown log level: %s", levelName)
	}
	flags := map[string]bool{}
	for _, name := range []string{"log_json", "plain", "log_include_location"} {
		s := q.Get(name)
		if s == "" {
			continue
		}
		b, err := strconv.ParseBool(s)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Unknown option for %s: %q is not a bool", name, s)
		}
		flags[name] = b
	}
	if err := h.checkTarget(q); err != nil {
		return nil, err
	}

	mon := &logMonitor{lines: make(chan []byte, monitorBuffer)}
	sink := hclog.NewSinkAdapter(&hclog.LoggerOptions{
		Level:           level,
		JSONFormat:      flags["log_json"],
		IncludeLocation: flags["log_include_location"],
		Output:          mon,
	})
	h.agent.logger.RegisterSink(sink)
	defer h.agent.logger.DeregisterSink(sink)

	plain := flags["plain"]
	if plain {
		w.Header().Set("Content-Type", "text/plain")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	flush := func() {
		if flusher != nil {
			flusher.Flush()
		}
	}
	flush()

	heartbeat := time.NewTicker(monitorHeartbeat)
	defer heartbeat.Stop()
	var frame bytes.Buffer
	for {
		var batch []byte
		select {
		case <-r.Context().Done():
			return handled{}, nil
		case <-heartbeat.C:
			if !plain {
				w.Write([]byte("{}\n"))
				flush()
			}
			continue
		case line := <-mon.lines:
			batch = append(batch, line...)
		}
		// Take whatever else is waiting into the same frame.
	more:
		for len(batch) < 64<<10 {
			select {
			case line := <-mon.lines:
				batch = append(batch, line...)
			default:
				break more
			}
		}
		if n := mon.takeDropped(); n > 0 {
			batch = append(batch, fmt.Sprintf("[WARN]  agent: Monitor dropped %d logs during monitor request\n", n)...)
		}
		var err error
		if plain {
			_, err = w.Write(batch)
		} else {
			frame.Reset()
			_ = json.NewEncoder(&frame).Encode(logFrame{Data: batch})
			_, err = w.Write(frame.Bytes())
		}
		if err != nil {
			return handled{}, nil
		}
		flush()
	}
}
