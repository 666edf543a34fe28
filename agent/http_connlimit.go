package agent

import (
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-connlimit"
	"github.com/hashicorp/go-hclog"
)

// httpConnLimit returns the http.Server ConnState hook that caps the
// connections one IP address holds open at limit
// (limits.http_max_conns_per_client; 0 means no cap). A connection over
// the cap is answered 429 with a text naming the limit and closed before
// any request on it is read.
func httpConnLimit(limit int, logger hclog.Logger) func(net.Conn, http.ConnState) {
	msg := fmt.Sprintf("Too many concurrent connections from this address: limits.http_max_conns_per_client is %d\n", limit)
	answer := fmt.Appendf(nil, "HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(msg), msg)
	// One warning a second at most: a client over its cap tends to
	// keep trying.
	var lastWarn atomic.Int64
	limiter := connlimit.NewLimiter(connlimit.Config{MaxConnsPerClientIP: limit})
	return limiter.HTTPConnStateFuncWithErrorHandler(func(err error, conn net.Conn) {
		if err == connlimit.ErrPerClientIPLimitReached {
			now := time.Now().UnixNano()
			if last := lastWarn.Load(); now-last > int64(time.Second) && lastWarn.CompareAndSwap(last, now) {
				logger.Warn("rejecting HTTP connection: too many connections from this address",
					"remote", conn.RemoteAddr().String(), "limit", limit, "key", "limits.http_max_conns_per_client")
			}
			// A client that does not read its answer holds nothing up.
			_ = conn.SetDeadline(time.Now().Add(10 * time.Millisecond))
			_, _ = conn.Write(answer)
		}
		conn.Close()
	})
}
