package agent

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

func TestOperatorRaft_ConfigurationPeerAndAutopilot(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)
	op := c.Operator()

	raftCfg, err := op.RaftGetConfiguration(nil)
	must.NoError(t, err)
	must.Len(t, 1, raftCfg.Servers)
	srv := raftCfg.Servers[0]
	must.True(t, srv.Leader)
	must.True(t, srv.Voter)
	must.Eq(t, a.server.NodeID(), srv.ID)
	must.Eq(t, a.RPCAddr(), srv.Address)
	must.Eq(t, a.config.Name+".global", srv.Node)
	must.Eq(t, "3", srv.RaftProtocol)

	err = op.RaftRemovePeerByID("nope", nil)
	must.ErrorContains(t, err, `id "nope" was not found in the Raft configuration`)
	err = op.RaftRemovePeerByAddress("127.0.0.1:4647", nil)
	must.ErrorContains(t, err, "400 (Removing a peer by address is not supported")

	// The leader stores Nomad's defaults; durations travel as strings.
	var ap *api.AutopilotConfiguration
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		ap, _, err = op.AutopilotGetConfiguration(nil)
		return err
	}), wait.Timeout(10*time.Second), wait.Gap(20*time.Millisecond)))
	must.True(t, ap.CleanupDeadServers)
	must.Eq(t, 200*time.Millisecond, ap.LastContactThreshold)
	must.Eq(t, 10*time.Second, ap.ServerStabilizationTime)
	must.Eq(t, 250, ap.MaxTrailingLogs)

	next := *ap
	next.MaxTrailingLogs = 99
	next.LastContactThreshold = time.Second
	next.ModifyIndex = ap.ModifyIndex + 100
	ok, _, err := op.AutopilotCASConfiguration(&next, nil)
	must.NoError(t, err)
	must.False(t, ok, must.Sprint("a stale cas index must lose"))
	next.ModifyIndex = ap.ModifyIndex
	ok, _, err = op.AutopilotCASConfiguration(&next, nil)
	must.NoError(t, err)
	must.True(t, ok)
	got, _, err := op.AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	must.Eq(t, 99, got.MaxTrailingLogs)
	must.Eq(t, time.Second, got.LastContactThreshold)

	for _, field := range []string{"EnableRedundancyZones", "DisableUpgradeMigration", "EnableCustomUpgrades"} {
		bad := *got
		switch field {
		case "EnableRedundancyZones":
			bad.EnableRedundancyZones = true
		case "DisableUpgradeMigration":
			bad.DisableUpgradeMigration = true
		case "EnableCustomUpgrades":
			bad.EnableCustomUpgrades = true
		}
		_, err := op.AutopilotSetConfiguration(&bad, nil)
		must.ErrorContains(t, err, "400")
		must.ErrorContains(t, err, field)
	}
	after, _, err := op.AutopilotGetConfiguration(nil)
	must.NoError(t, err)
	must.Eq(t, got.ModifyIndex, after.ModifyIndex, must.Sprint("a refused write changes nothing"))

	var health *api.OperatorHealthReply
	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		health, _, err = op.AutopilotServerHealth(nil)
		return err
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))
	must.True(t, health.Healthy)
	must.Eq(t, 0, health.FailureTolerance)
	must.Eq(t, a.server.NodeID(), health.Leader)
	must.Len(t, 1, health.Servers)
	must.True(t, health.Servers[0].Leader)
	must.True(t, health.Servers[0].Healthy)
	must.Eq(t, "alive", health.Servers[0].SerfStatus)
	must.Positive(t, health.Servers[0].LastIndex)
}

func TestOperatorRaft_NomadAnswers(t *testing.T) {
	a := NewTestAgent(t, nil)
	cases := []struct {
		method, path string
		body         string
		code         int
	}{
		{http.MethodGet, "/v1/operator/raft/unknown", "", http.StatusNotFound},
		{http.MethodPut, "/v1/operator/raft/configuration", "", http.StatusMethodNotAllowed},
		{http.MethodGet, "/v1/operator/raft/peer?id=x", "", http.StatusNotFound},
		{http.MethodDelete, "/v1/operator/raft/peer", "", http.StatusBadRequest},
		{http.MethodDelete, "/v1/operator/autopilot/configuration", "", http.StatusNotFound},
		{http.MethodPut, "/v1/operator/autopilot/configuration", `{"LastContactThreshold":"soon"}`, http.StatusBadRequest},
		{http.MethodPut, "/v1/operator/autopilot/configuration?cas=x", `{}`, http.StatusBadRequest},
		{http.MethodPost, "/v1/operator/autopilot/health", "", http.StatusNotFound},
		{http.MethodGet, "/v1/operator/autopilot/state", "", http.StatusNotFound},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %s", tc.method, tc.path), func(t *testing.T) {
			resp := doRaw(t, a, tc.method, tc.path, tc.body)
			must.Eq(t, tc.code, resp.StatusCode)
		})
	}
}
