package agent

import (
	"net"
	"net/http"
	"strings"
	"sync"
)

// requestGates cap the long-lived requests one address may hold at once:
// blocking queries (a GET with ?index=) and log streams
// (/v1/client/fs/logs/, /v1/client/fs/stream/). A connection carries one
// request at a time over HTTP/1.1, so http_max_conns_per_client bounds
// them too; these caps hold over HTTP/2 as well, where one connection
// carries many.
type requestGates struct {
	blocking *perClientGate
	logs     *perClientGate
}

func newRequestGates(blocking, logs int) *requestGates {
	return &requestGates{
		blocking: &perClientGate{limit: blocking, key: "limits.http_max_blocking_queries_per_client", what: "blocking queries", held: map[string]int{}},
		logs:     &perClientGate{limit: logs, key: "limits.http_max_log_streams_per_client", what: "log streams", held: map[string]int{}},
	}
}

// admit takes a slot for r when it is a long-lived request: release
// frees it, and err is the 429 to answer when the address holds its
// limit already.
func (g *requestGates) admit(r *http.Request) (release func(), err error) {
	switch {
	case isLogStream(r.URL.Path):
		return g.logs.acquire(r)
	case r.Method == http.MethodGet && isBlocking(r):
		return g.blocking.acquire(r)
	}
	return func() {}, nil
}

func isLogStream(path string) bool {
	return strings.HasPrefix(path, "/v1/client/fs/logs/") || strings.HasPrefix(path, "/v1/client/fs/stream/")
}

// isBlocking reports whether r asks to wait for a change (index above 0).
func isBlocking(r *http.Request) bool {
	idx := r.URL.Query().Get("index")
	return idx != "" && strings.Trim(idx, "0") != ""
}

// perClientGate counts what each remote address holds; a limit of 0
// means no limit.
type perClientGate struct {
	limit int
	key   string
	what  string

	mu   sync.Mutex
	held map[string]int
}

func (g *perClientGate) acquire(r *http.Request) (func(), error) {
	if g.limit <= 0 {
		return func() {}, nil
	}
	ip, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		ip = r.RemoteAddr
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held[ip] >= g.limit {
		return nil, codedErr(http.StatusTooManyRequests, "Too many concurrent %s from this address: %s is %d", g.what, g.key, g.limit)
	}
	g.held[ip]++
	var once sync.Once
	return func() {
		once.Do(func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.held[ip]--; g.held[ip] <= 0 {
				delete(g.held, ip)
			}
		})
	}, nil
}
