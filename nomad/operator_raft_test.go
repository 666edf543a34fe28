package nomad

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/serf/serf"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

func TestOperator_ThreeServersRaftConfigurationAndAutopilot(t *testing.T) {
	s1 := testServer(t, clusterConfig(t, 3, nil))
	join := []string{s1.SerfAddr()}
	s2 := testServer(t, clusterConfig(t, 3, join))
	s3 := testServer(t, clusterConfig(t, 3, join))
	servers := []*Server{s1, s2, s3}
	leader := waitForLeader(t, servers...)
	var follower *Server
	for _, s := range servers {
		if s != leader {
			follower = s
			break
		}
	}

	// A follower forwards to the leader; every server is a voter and
	// exactly the leader is marked so.
	var cfg structs.RaftConfigurationResponse
	must.NoError(t, follower.RPC("Operator.RaftGetConfiguration", &structs.GenericRequest{}, &cfg))
	must.Len(t, 3, cfg.Servers)
	leaders := 0
	for _, srv := range cfg.Servers {
		must.True(t, srv.Voter)
		must.Eq(t, "3", srv.RaftProtocol)
		must.StrHasSuffix(t, ".global", srv.Node)
		if srv.Leader {
			leaders++
			must.Eq(t, leader.NodeID(), srv.ID)
			must.Eq(t, leader.RPCAddr().String(), srv.Address)
		}
	}
	must.Eq(t, 1, leaders)

	// Health: all three healthy once the followers caught up.
	var health structs.OperatorHealthReply
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		health = structs.OperatorHealthReply{}
		if err := follower.RPC("Operator.ServerHealth", &structs.GenericRequest{}, &health); err != nil {
			return err
		}
		if !health.Healthy {
			return fmt.Errorf("not healthy yet: %+v", health.Servers)
		}
		return nil
	}), wait.Timeout(20*time.Second), wait.Gap(100*time.Millisecond)))
	must.Len(t, 3, health.Servers)
	must.Len(t, 3, health.Voters)
	must.Eq(t, 1, health.FailureTolerance)
	must.Eq(t, leader.NodeID(), health.Leader)
	for _, h := range health.Servers {
		must.Eq(t, "alive", h.SerfStatus)
		must.Eq(t, h.ID == leader.NodeID(), h.Leader)
		must.Positive(t, h.LastIndex)
		must.Positive(t, h.LastTerm)
		must.False(t, h.StableSince.IsZero())
	}

	// The autopilot configuration is stored by the leader and replicated.
	var got structs.AutopilotConfigResponse
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		return follower.RPC("Operator.AutopilotGetConfiguration", &structs.GenericRequest{}, &got)
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	must.Eq(t, 200*time.Millisecond, got.Config.LastContactThreshold)
	must.True(t, got.Config.CleanupDeadServers)

	// A check-and-set against a stale index loses; against the current one
	// it wins and every server sees it.
	set := structs.AutopilotSetConfigRequest{Config: *got.Config, CAS: true}
	set.Config.MaxTrailingLogs = 7
	set.Config.ModifyIndex = got.Config.ModifyIndex - 1
	var setReply structs.AutopilotSetConfigResponse
	must.NoError(t, follower.RPC("Operator.AutopilotSetConfiguration", &set, &setReply))
	must.False(t, setReply.Updated)
	set.Config.ModifyIndex = got.Config.ModifyIndex
	must.NoError(t, follower.RPC("Operator.AutopilotSetConfiguration", &set, &setReply))
	must.True(t, setReply.Updated)
	for _, s := range servers {
		waitForIndex(t, s, setReply.Index)
		_, c, err := s.State().AutopilotConfig(nil)
		must.NoError(t, err)
		must.Eq(t, 7, c.MaxTrailingLogs)
	}

	// Enterprise switches are refused by name and change nothing.
	set = structs.AutopilotSetConfigRequest{Config: *structs.DefaultAutopilotConfig()}
	set.Config.EnableRedundancyZones = true
	err := leader.RPC("Operator.AutopilotSetConfiguration", &set, &setReply)
	must.ErrorContains(t, err, "EnableRedundancyZones")
	_, c, err := leader.State().AutopilotConfig(nil)
	must.NoError(t, err)
	must.Eq(t, 7, c.MaxTrailingLogs)

	// Removing an unknown peer names it.
	err = follower.RPC("Operator.RaftRemovePeerByID", &structs.RaftPeerByIDRequest{ID: "nope"}, &struct{}{})
	must.ErrorContains(t, err, `id "nope" was not found in the Raft configuration`)
}

func TestJudgeServer(t *testing.T) {
	cfg := structs.DefaultAutopilotConfig()
	leader := structs.RaftStats{LastTerm: 4, LastIndex: 1000}
	cases := []struct {
		name     string
		isLeader bool
		serf     serf.MemberStatus
		stats    structs.RaftStats
		err      error
		want     bool
	}{
		{"leader itself", true, serf.StatusAlive, leader, nil, true},
		{"follower in contact and caught up", false, serf.StatusAlive, structs.RaftStats{LastContact: 50 * time.Millisecond, LastTerm: 4, LastIndex: 990}, nil, true},
		{"follower exactly MaxTrailingLogs behind", false, serf.StatusAlive, structs.RaftStats{LastContact: time.Millisecond, LastTerm: 4, LastIndex: 750}, nil, true},
		{"follower too far behind", false, serf.StatusAlive, structs.RaftStats{LastContact: time.Millisecond, LastTerm: 4, LastIndex: 749}, nil, false},
		{"follower out of contact", false, serf.StatusAlive, structs.RaftStats{LastContact: time.Second, LastTerm: 4, LastIndex: 1000}, nil, false},
		{"follower that never heard from a leader", false, serf.StatusAlive, structs.RaftStats{LastContact: -1, LastTerm: 4, LastIndex: 1000}, nil, false},
		{"follower on an old term", false, serf.StatusAlive, structs.RaftStats{LastContact: time.Millisecond, LastTerm: 3, LastIndex: 1000}, nil, false},
		{"failed in serf", false, serf.StatusFailed, structs.RaftStats{LastContact: time.Millisecond, LastTerm: 4, LastIndex: 1000}, nil, false},
		{"unreachable", false, serf.StatusAlive, structs.RaftStats{}, errors.New("dial server: connection refused"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			must.Eq(t, tc.want, judgeServer(cfg, tc.isLeader, tc.serf, tc.stats, tc.err, leader))
		})
	}
}

func TestAutopilotHealth_StableSinceMovesOnlyOnChange(t *testing.T) {
	h := newAutopilotHealth()
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		at      time.Duration
		healthy bool
		want    time.Duration
	}{
		{0, true, 0},
		{time.Second, true, 0},
		{2 * time.Second, false, 2 * time.Second},
		{3 * time.Second, false, 2 * time.Second},
		{4 * time.Second, true, 4 * time.Second},
	}
	for _, s := range steps {
		must.Eq(t, t0.Add(s.want), h.observe("a", s.healthy, t0.Add(s.at)))
	}
}
