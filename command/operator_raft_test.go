package command

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/agenttest"
)

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestOperatorRaftAndMonitor(t *testing.T) {
	a := agenttest.New(t, nil)
	addr := a.HTTPAddr()

	t.Run("list-peers", func(t *testing.T) {
		for _, args := range [][]string{{}, {"-stale"}} {
			code, out, errOut := cli(t, addr, append([]string{"operator", "raft", "list-peers"}, args...)...)
			must.Eq(t, 0, code, must.Sprint(errOut))
			must.RegexMatch(t, regexp.MustCompile(`^Node +ID +Address +State +Voter +RaftProtocol\n\S+ +`+a.Server().NodeID()+` +127\.0\.0\.1:\d+ +leader +true +3\n$`), out)
		}
	})
	t.Run("remove-peer", func(t *testing.T) {
		cases := []struct {
			args   []string
			stderr string
		}{
			{nil, "Missing peer id required"},
			{[]string{"-peer-id", "a", "-peer-address", "b"}, "Only one of -peer-id or -peer-address may be given"},
			{[]string{"-peer-id", "no-such-server"}, `id "no-such-server" was not found in the Raft configuration`},
			{[]string{"-peer-address", "127.0.0.1:4647"}, "Removing a peer by address is not supported"},
		}
		for _, tc := range cases {
			code, out, errOut := cli(t, addr, append([]string{"operator", "raft", "remove-peer"}, tc.args...)...)
			must.Eq(t, 1, code)
			must.Eq(t, "", out)
			must.StrContains(t, errOut, tc.stderr)
		}
	})

	t.Run("monitor streams until interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		interruptContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
		t.Cleanup(func() {
			interruptContext = func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
		})
		var out, errOut syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- Run([]string{"monitor", "-address", addr, "-log-level", "debug"}, Streams{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut})
		}()
		// Each HTTP request logs at DEBUG once it completes.
		waitFor(t, "a DEBUG line on the monitor", 10*time.Second, func() error {
			resp, err := http.Get(addr + "/v1/status/leader")
			if err == nil {
				resp.Body.Close()
			}
			if !strings.Contains(out.String(), "[DEBUG] agent.http: request complete") {
				return fmt.Errorf("no DEBUG request line yet; stdout %q, stderr %q", out.String(), errOut.String())
			}
			return nil
		})
		cancel()
		select {
		case code := <-done:
			must.Eq(t, 0, code, must.Sprint(errOut.String()))
		case <-time.After(10 * time.Second):
			t.Fatal("monitor did not return within 10s of the interrupt")
		}
	})
	t.Run("monitor refuses what it cannot do", func(t *testing.T) {
		cases := []struct {
			args   []string
			stderr string
		}{
			{[]string{"-log-level", "loud"}, "Unknown log level: loud"},
			{[]string{"-node-id", "ffffffff"}, `No node(s) with prefix or id "ffffffff" found`},
			{[]string{"-server-id", "other.global"}, "unknown Nomad server other.global"},
			{[]string{"extra"}, "This command takes no arguments"},
		}
		for _, tc := range cases {
			code, _, errOut := cli(t, addr, append([]string{"monitor"}, tc.args...)...)
			must.Eq(t, 1, code, must.Sprint(tc.args))
			must.StrContains(t, errOut, tc.stderr)
		}
	})
}
