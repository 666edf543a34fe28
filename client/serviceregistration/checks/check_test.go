package checks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/serviceregistration"
	"github.com/nomadq/nomadq/structs"
)

func TestID_StableAndDistinct(t *testing.T) {
	c := &structs.ServiceCheck{Name: "alive", Type: "http", Path: "/", Interval: 10 * time.Second, Timeout: 2 * time.Second}
	id := ID("alloc-1", "web", c)
	must.Eq(t, 64, len(id))
	must.Eq(t, id, ID("alloc-1", "web", c.Copy()))
	other := c.Copy()
	other.Path = "/health"
	must.NotEq(t, id, ID("alloc-1", "web", other))
	must.NotEq(t, id, ID("alloc-2", "web", c))
}

func TestMode(t *testing.T) {
	must.Eq(t, ModeHealthiness, Mode(&structs.ServiceCheck{}))
	must.Eq(t, ModeReadiness, Mode(&structs.ServiceCheck{OnUpdate: "ignore"}))
}

// specFor returns a spec of c whose service port, "http", is at addr.
func specFor(t *testing.T, addr string, c *structs.ServiceCheck) Spec {
	host, p, err := net.SplitHostPort(addr)
	must.NoError(t, err)
	port, _ := strconv.Atoi(p)
	return Spec{
		Check:       c,
		ServicePort: "http",
		Network: serviceregistration.Network{Ports: []structs.AllocatedPortMapping{
			{Label: "http", Value: port, HostIP: host},
		}},
	}
}

func TestChecker_HTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("body not kept"))
		case "/redirect":
			w.WriteHeader(http.StatusFound)
			w.Write([]byte("moved"))
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.Header.Get("X-Probe"), b)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte("down for maintenance"))
		}
	}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := NewChecker()
	cases := []struct {
		path, method, body string
		status             string
		code               int
		output             string
	}{
		{path: "/ok", status: StatusSuccess, code: 200, output: "nomad: http ok"},
		{path: "/redirect", status: StatusSuccess, code: 302, output: "moved"},
		{path: "/down", status: StatusFailure, code: 503, output: "down for maintenance"},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			o := c.Do(context.Background(), specFor(t, u.Host, &structs.ServiceCheck{Type: "http", Path: tc.path, Timeout: 5 * time.Second}))
			must.Eq(t, Outcome{Status: tc.status, StatusCode: tc.code, Output: tc.output}, o)
		})
	}

	// Method, header and body reach the server (a non-200 keeps the body).
	chk := &structs.ServiceCheck{Type: "http", Path: "/echo", Method: "POST", Body: "ping", Header: map[string][]string{"X-Probe": {"yes"}}, Timeout: 5 * time.Second}
	o := c.Do(context.Background(), specFor(t, u.Host, chk))
	must.Eq(t, StatusSuccess, o.Status)

	// Nothing listening: a failure naming the error.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	ln.Close()
	o = c.Do(context.Background(), specFor(t, addr, &structs.ServiceCheck{Type: "http", Path: "/", Timeout: 2 * time.Second}))
	must.Eq(t, StatusFailure, o.Status)
	must.StrContains(t, o.Output, "connection refused")

	// A port label the alloc lacks fails the check, never panics.
	bad := specFor(t, u.Host, &structs.ServiceCheck{Type: "http", PortLabel: "nope", Timeout: time.Second})
	o = c.Do(context.Background(), bad)
	must.Eq(t, StatusFailure, o.Status)
	must.StrContains(t, o.Output, `invalid port "nope"`)
}

func TestChecker_HTTPS_SkipVerify(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	c := NewChecker()
	o := c.Do(context.Background(), specFor(t, u.Host, &structs.ServiceCheck{Type: "http", Protocol: "https", Path: "/", Timeout: 5 * time.Second}))
	must.Eq(t, StatusFailure, o.Status)
	must.StrContains(t, o.Output, "certificate")
	o = c.Do(context.Background(), specFor(t, u.Host, &structs.ServiceCheck{Type: "http", Protocol: "https", Path: "/", TLSSkipVerify: true, Timeout: 5 * time.Second}))
	must.Eq(t, StatusSuccess, o.Status)
}

func TestChecker_TCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must.NoError(t, err)
	addr := ln.Addr().String()
	c := NewChecker()
	o := c.Do(context.Background(), specFor(t, addr, &structs.ServiceCheck{Type: "tcp", Timeout: time.Second}))
	must.Eq(t, Outcome{Status: StatusSuccess, Output: "nomad: tcp ok"}, o)
	ln.Close()
	o = c.Do(context.Background(), specFor(t, addr, &structs.ServiceCheck{Type: "tcp", Timeout: time.Second}))
	must.Eq(t, StatusFailure, o.Status)
}

// fakeExec answers script checks as a task would.
type fakeExec struct {
	code   int
	out    string
	err    error
	called []string
}

func (f *fakeExec) Exec(ctx context.Context, o *drivers.ExecOptions) (int, error) {
	f.called = o.Command
	io.WriteString(o.Stdout, f.out)
	return f.code, f.err
}

func TestChecker_Script(t *testing.T) {
	c := NewChecker()
	chk := &structs.ServiceCheck{Name: "s", Type: "script", Command: "/bin/check", Args: []string{"-v"}, Timeout: time.Second}
	cases := []struct {
		name string
		exec *fakeExec
		want Outcome
	}{
		{name: "pass", exec: &fakeExec{out: "all good"}, want: Outcome{Status: StatusSuccess, Output: "all good"}},
		{name: "exit 1", exec: &fakeExec{code: 1, out: "meh"}, want: Outcome{Status: StatusFailure, Output: "meh"}},
		{name: "critical", exec: &fakeExec{code: 2}, want: Outcome{Status: StatusFailure, Output: "/bin/check exited with code 2"}},
		{name: "missing command", exec: &fakeExec{out: "exec: no such file", err: errors.New(`exec "/bin/check": no such file or directory`)},
			want: Outcome{Status: StatusFailure, Output: "exec: no such file\nexec \"/bin/check\": no such file or directory"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := c.Do(context.Background(), Spec{Check: chk, Exec: tc.exec})
			must.Eq(t, tc.want, o)
			must.Eq(t, []string{"/bin/check", "-v"}, tc.exec.called)
		})
	}
	o := c.Do(context.Background(), Spec{Check: chk})
	must.Eq(t, StatusFailure, o.Status)
	must.StrContains(t, o.Output, "has no task to run in")
}
