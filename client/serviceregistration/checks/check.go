// Package checks runs the health checks of nomad-provider services on the
// client (http, tcp and script), keeps each check's latest result in the
// shape of Nomad's /v1/client/allocation/:id/checks, and decides when
// check_restart restarts a task.
package checks

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/client/serviceregistration"
	"github.com/nomadq/nomadq/structs"
)

// Check statuses and modes, as Nomad reports them.
const (
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusPending = "pending"

	ModeHealthiness = "healthiness"
	ModeReadiness   = "readiness"
)

// outputLimit bounds the output kept of one check run, as Nomad bounds
// an HTTP check's body.
const outputLimit = 3 * 1024

// ID is Nomad's ID of a check of an alloc's group: a SHA-256 over the
// alloc, the group and the check's identifying fields, in Nomad's order,
// so the IDs match those Nomad shows for the same alloc and check.
func ID(allocID, group string, c *structs.ServiceCheck) string {
	h := sha256.New()
	for _, s := range []string{allocID, group, c.TaskName, c.Name, c.Type, c.PortLabel, c.OnUpdate, c.AddressMode} {
		_, _ = io.WriteString(h, s)
	}
	_ = binary.Write(h, binary.LittleEndian, c.Interval)
	_ = binary.Write(h, binary.LittleEndian, c.Timeout)
	for _, s := range []string{c.Protocol, c.Path, c.Method, strconv.FormatBool(c.TLSSkipVerify)} {
		_, _ = io.WriteString(h, s)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// Mode is "readiness" for a check whose on_update is "ignore" (a failing
// one holds no deployment back), else "healthiness".
func Mode(c *structs.ServiceCheck) string {
	if c != nil && c.OnUpdate == "ignore" {
		return ModeReadiness
	}
	return ModeHealthiness
}

// Execer runs a command inside a running task; a task runner is one.
type Execer interface {
	Exec(ctx context.Context, opts *drivers.ExecOptions) (int, error)
}

// Spec is one check of an alloc and what running it needs.
type Spec struct {
	ID    string
	Check *structs.ServiceCheck
	// Group is the alloc's name, which Nomad reports as a check's group.
	Group string
	// Task is the service's task: a task service's, or the one a group
	// service names; empty otherwise.
	Task    string
	Service string
	// Network, ServiceAddress and ServicePort locate the check's target:
	// the check's own port and address_mode, else the service's.
	Network        serviceregistration.Network
	ServiceAddress string
	ServicePort    string
	// Exec runs script checks: the task the check names, or the
	// service's task. Nil fails script checks with the reason.
	Exec Execer
}

// Outcome is one run of a check.
type Outcome struct {
	Status     string
	StatusCode int
	Output     string
}

// Checker runs checks once.
type Checker struct {
	mu      sync.Mutex
	clients map[bool]*http.Client
}

// NewChecker returns a checker.
func NewChecker() *Checker { return &Checker{clients: make(map[bool]*http.Client)} }

func (c *Checker) client(skipVerify bool) *http.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cl, ok := c.clients[skipVerify]; ok {
		return cl
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: skipVerify} //nolint:gosec // the check's tls_skip_verify asks for it
	tr.DisableKeepAlives = true
	cl := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	c.clients[skipVerify] = cl
	return cl
}

// Do runs the check once, within its timeout.
func (c *Checker) Do(ctx context.Context, s Spec) Outcome {
	timeout := s.Check.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	switch s.Check.Type {
	case structs.ServiceCheckHTTP:
		return c.http(ctx, s)
	case structs.ServiceCheckTCP:
		return tcp(ctx, s)
	case structs.ServiceCheckScript:
		return script(ctx, s)
	}
	return failure(fmt.Sprintf("nomad: check type %q is not run by the nomad service provider: use http, tcp or script", s.Check.Type))
}

func failure(out string) Outcome { return Outcome{Status: StatusFailure, Output: out} }

// target resolves the host:port a network check dials.
func target(s Spec) (string, error) {
	mode := s.Check.AddressMode
	if mode == "" {
		mode = serviceregistration.AddressModeHost
		if s.ServiceAddress != "" {
			mode = serviceregistration.AddressModeAuto
		}
	}
	label := s.Check.PortLabel
	if label == "" {
		label = s.ServicePort
	}
	addr, port, err := serviceregistration.Resolve(s.Network, s.ServiceAddress, mode, label)
	if err != nil {
		return "", err
	}
	if port > 0 {
		return net.JoinHostPort(addr, strconv.Itoa(port)), nil
	}
	return addr, nil
}

func tcp(ctx context.Context, s Spec) Outcome {
	addr, err := target(s)
	if err != nil {
		return failure(err.Error())
	}
	conn, err := new(net.Dialer).DialContext(ctx, "tcp", addr)
	if err != nil {
		return failure(err.Error())
	}
	_ = conn.Close()
	return Outcome{Status: StatusSuccess, Output: "nomad: tcp ok"}
}

func (c *Checker) http(ctx context.Context, s Spec) Outcome {
	addr, err := target(s)
	if err != nil {
		return failure(err.Error())
	}
	rel, err := url.Parse(s.Check.Path)
	if err != nil {
		return failure(err.Error())
	}
	scheme := s.Check.Protocol
	if scheme == "" {
		scheme = "http"
	}
	u := (&url.URL{Scheme: scheme, Host: addr}).ResolveReference(rel)
	method := s.Check.Method
	if method == "" {
		method = http.MethodGet
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), strings.NewReader(s.Check.Body))
	if err != nil {
		return failure("nomad: " + err.Error())
	}
	for k, vs := range s.Check.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "Nomad/nomadq")
	}
	if h := req.Header.Get("Host"); h != "" {
		req.Host = h
	}
	resp, err := c.client(s.Check.TLSSkipVerify).Do(req)
	if err != nil {
		return failure("nomad: " + err.Error())
	}
	defer resp.Body.Close()
	o := Outcome{StatusCode: resp.StatusCode}
	switch {
	case resp.StatusCode == http.StatusOK:
		// As Nomad: a 200's body is not kept, so nobody relies on it.
		o.Status, o.Output = StatusSuccess, "nomad: http ok"
		return o
	case resp.StatusCode < http.StatusBadRequest:
		o.Status = StatusSuccess
	default:
		o.Status = StatusFailure
	}
	o.Output = readLimited(resp.Body)
	return o
}

func readLimited(r io.Reader) string {
	b, err := io.ReadAll(io.LimitReader(r, outputLimit))
	if err != nil {
		return "nomad: " + err.Error()
	}
	return string(b)
}

// limitedBuffer keeps the first outputLimit bytes written to it.
type limitedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := outputLimit - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// script runs the check's command in its task: exit 0 passes; any other
// code, or a command that cannot run, fails, with the command's output
// (nomad-provider checks have no warning state).
func script(ctx context.Context, s Spec) Outcome {
	if s.Exec == nil {
		return failure(fmt.Sprintf("nomad: script check %q has no task to run in", s.Check.Name))
	}
	var out limitedBuffer
	cmd := append([]string{s.Check.Command}, s.Check.Args...)
	code, err := s.Exec.Exec(ctx, &drivers.ExecOptions{Command: cmd, Stdout: &out, Stderr: &out})
	output := out.String()
	if err != nil {
		msg := err.Error()
		if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
			msg = fmt.Sprintf("script check timed out after %s", s.Check.Timeout)
		}
		if output != "" {
			msg = output + "\n" + msg
		}
		return failure(msg)
	}
	if code == 0 {
		return Outcome{Status: StatusSuccess, Output: output}
	}
	if output == "" {
		output = fmt.Sprintf("%s exited with code %d", s.Check.Command, code)
	}
	return failure(output)
}
