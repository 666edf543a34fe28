package nomad

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// TestServer_LoneServerStandsAtOnce: a server that is the only voter of
// its cluster leads without waiting out its heartbeat timeout, on first
// start and when restarted from its data dir, and runs with its configured
// timeouts once it leads.
func TestServer_LoneServerStandsAtOnce(t *testing.T) {
	dir := t.TempDir()
	cfg := func(c *Config) {
		c.DevMode = false
		c.DataDir = dir
		c.BootstrapExpect = 1
		c.NumSchedulers = 0
		// Far longer than waitForLeader waits (20 s).
		c.RaftHeartbeatTimeout = 10 * time.Minute
		c.RaftElectionTimeout = 10 * time.Minute
		c.RaftLeaderLeaseTimeout = 100 * time.Millisecond
	}
	for _, start := range []string{"first start", "restart"} {
		s := testServer(t, cfg)
		waitForLeader(t, s)
		// Leadership is established just after the election.
		must.Wait(t, wait.InitialSuccess(
			wait.BoolFunc(func() bool { return s.raft.ReloadableConfig().HeartbeatTimeout == 10*time.Minute }),
			wait.Timeout(10*time.Second),
		), must.Sprintf("%s: the configured timeout is back", start))
		must.NoError(t, s.Shutdown())
	}
}

func TestOnlyVoter(t *testing.T) {
	server := func(id string, suffrage raft.ServerSuffrage) raft.Server {
		return raft.Server{ID: raft.ServerID(id), Address: raft.ServerAddress(id), Suffrage: suffrage}
	}
	cases := []struct {
		name    string
		servers []raft.Server
		want    bool
	}{
		{"alone", []raft.Server{server("a", raft.Voter)}, true},
		{"alone with a non-voter", []raft.Server{server("a", raft.Voter), server("b", raft.Nonvoter)}, true},
		{"another voter", []raft.Server{server("a", raft.Voter), server("b", raft.Voter)}, false},
		{"someone else alone", []raft.Server{server("b", raft.Voter)}, false},
		{"not a voter", []raft.Server{server("a", raft.Nonvoter), server("b", raft.Voter)}, false},
		{"no configuration", nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, onlyVoter(raft.Configuration{Servers: tc.servers}, "a"))
		})
	}
}
