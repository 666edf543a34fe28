package agent

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/agent/config"
)

// TestHTTP_ConnectionCapPerClient holds http_max_conns_per_client
// connections open from one address: the next gets a 429 that names the
// limit, and a freed slot serves requests again.
func TestHTTP_ConnectionCapPerClient(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Limits.HTTPMaxConnsPerClient = 2 })
	u, err := url.Parse(a.HTTPAddr())
	must.NoError(t, err)

	get := func(conn net.Conn) (*http.Response, string) {
		t.Helper()
		must.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second)))
		_, err := fmt.Fprintf(conn, "GET /v1/status/leader HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host)
		must.NoError(t, err)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		must.NoError(t, err)
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return resp, string(body)
	}
	var held []net.Conn
	for range 2 {
		conn, err := net.Dial("tcp", u.Host)
		must.NoError(t, err)
		defer conn.Close()
		resp, _ := get(conn) // keep-alive: the connection stays open
		must.Eq(t, http.StatusOK, resp.StatusCode)
		held = append(held, conn)
	}

	over, err := net.Dial("tcp", u.Host)
	must.NoError(t, err)
	defer over.Close()
	must.NoError(t, over.SetDeadline(time.Now().Add(30*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(over), nil)
	must.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	must.Eq(t, http.StatusTooManyRequests, resp.StatusCode)
	must.StrContains(t, string(body), "limits.http_max_conns_per_client is 2")

	held[0].Close()
	// The server frees the slot once it sees the close.
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		conn, err := net.Dial("tcp", u.Host)
		if err != nil {
			return false
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := fmt.Fprintf(conn, "GET /v1/status/leader HTTP/1.1\r\nHost: %s\r\n\r\n", u.Host); err != nil {
			return false
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		return err == nil && resp.StatusCode == http.StatusOK
	}), wait.Timeout(30*time.Second), wait.Gap(50*time.Millisecond)))
}
