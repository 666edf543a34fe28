package agent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// operatorRaftRequest serves /v1/operator/raft/: the configuration and
// peer removal. Nomad answers other paths with 404.
func (h *httpHandler) operatorRaftRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	switch strings.TrimPrefix(r.URL.Path, "/v1/operator/raft/") {
	case "configuration":
		return h.raftConfigurationRequest(w, r)
	case "peer":
		return h.raftPeerRequest(w, r)
	}
	return nil, codedErr(http.StatusNotFound, "Invalid method")
}

func (h *httpHandler) raftConfigurationRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var args structs.GenericRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.RaftConfigurationResponse
	if err := h.agent.rpc("Operator.RaftGetConfiguration", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	if reply.Servers == nil {
		reply.Servers = []*structs.RaftServer{}
	}
	return reply, nil
}

// raftPeerRequest removes a Raft peer by ID (DELETE); removal by address
// is refused as Nomad refuses it under Raft protocol 3.
func (h *httpHandler) raftPeerRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodDelete {
		return nil, codedErr(http.StatusNotFound, "Invalid method")
	}
	q := r.URL.Query()
	if _, ok := q["address"]; ok {
		return nil, codedErr(http.StatusBadRequest, "Removing a peer by address is not supported in the current raft protocol version")
	}
	if _, ok := q["id"]; !ok {
		return nil, codedErr(http.StatusBadRequest, "Must specify the peer's ID to remove")
	}
	args := structs.RaftPeerByIDRequest{ID: q.Get("id")}
	h.parseWrite(r, &args.WriteRequest)
	var reply struct{}
	if err := h.agent.rpc("Operator.RaftRemovePeerByID", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	return nil, nil
}

// autopilotConfigJSON is the wire form of the autopilot configuration:
// the official client sends and reads both durations as strings ("10s").
type autopilotConfigJSON struct {
	CleanupDeadServers      bool
	LastContactThreshold    string
	MaxTrailingLogs         uint64
	MinQuorum               uint
	ServerStabilizationTime string
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool
	CreateIndex             uint64
	ModifyIndex             uint64
}

func (h *httpHandler) autopilotConfigRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	switch r.Method {
	case http.MethodGet:
		var args structs.GenericRequest
		var reply structs.AutopilotConfigResponse
		if err := h.query(w, r, "Operator.AutopilotGetConfiguration", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
			return nil, err
		}
		c := reply.Config
		return autopilotConfigJSON{
			CleanupDeadServers:      c.CleanupDeadServers,
			LastContactThreshold:    c.LastContactThreshold.String(),
			MaxTrailingLogs:         c.MaxTrailingLogs,
			MinQuorum:               c.MinQuorum,
			ServerStabilizationTime: c.ServerStabilizationTime.String(),
			EnableRedundancyZones:   c.EnableRedundancyZones,
			DisableUpgradeMigration: c.DisableUpgradeMigration,
			EnableCustomUpgrades:    c.EnableCustomUpgrades,
			CreateIndex:             c.CreateIndex,
			ModifyIndex:             c.ModifyIndex,
		}, nil
	case http.MethodPut:
		return h.autopilotSetConfig(w, r)
	}
	return nil, codedErr(http.StatusNotFound, "Invalid method")
}

func (h *httpHandler) autopilotSetConfig(w http.ResponseWriter, r *http.Request) (any, error) {
	var body autopilotConfigJSON
	if err := decodeBody(r, &body); err != nil {
		return nil, err
	}
	var args structs.AutopilotSetConfigRequest
	c := &args.Config
	c.CleanupDeadServers = body.CleanupDeadServers
	c.MaxTrailingLogs = body.MaxTrailingLogs
	c.MinQuorum = body.MinQuorum
	c.EnableRedundancyZones = body.EnableRedundancyZones
	c.DisableUpgradeMigration = body.DisableUpgradeMigration
	c.EnableCustomUpgrades = body.EnableCustomUpgrades
	for _, d := range []struct {
		name string
		in   string
		out  *time.Duration
	}{
		{"LastContactThreshold", body.LastContactThreshold, &c.LastContactThreshold},
		{"ServerStabilizationTime", body.ServerStabilizationTime, &c.ServerStabilizationTime},
	} {
		if d.in == "" {
			continue
		}
		v, err := time.ParseDuration(d.in)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Error parsing autopilot config: %s %q is not a duration (for example \"200ms\" or \"10s\")", d.name, d.in)
		}
		*d.out = v
	}
	if err := c.Validate(); err != nil {
		return nil, codedErr(http.StatusBadRequest, "Invalid autopilot configuration: %v", err)
	}
	if s, ok := r.URL.Query()["cas"]; ok {
		idx, err := strconv.ParseUint(s[0], 10, 64)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Error parsing cas value: %q is not an unsigned integer", s[0])
		}
		args.CAS = true
		c.ModifyIndex = idx
	}
	var reply structs.AutopilotSetConfigResponse
	if err := h.write(w, r, "Operator.AutopilotSetConfiguration", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply.Updated, nil
}

// serverHealthJSON is one server's health on the wire: LastContact is a
// duration string, as the official client reads it.
type serverHealthJSON struct {
	ID          string
	Name        string
	Address     string
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact string
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	StableSince time.Time
}

type operatorHealthJSON struct {
	Healthy          bool
	FailureTolerance int
	Servers          []serverHealthJSON
	Leader           string
	Voters           []string
}

// autopilotHealthRequest answers with every server's health; an
// unhealthy cluster is a 429 with the same body, as in Nomad.
func (h *httpHandler) autopilotHealthRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, codedErr(http.StatusNotFound, "Invalid method")
	}
	var args structs.GenericRequest
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.OperatorHealthReply
	if err := h.agent.rpc("Operator.ServerHealth", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	out := operatorHealthJSON{
		Healthy:          reply.Healthy,
		FailureTolerance: reply.FailureTolerance,
		Leader:           reply.Leader,
		Voters:           reply.Voters,
		Servers:          []serverHealthJSON{},
	}
	for _, s := range reply.Servers {
		// A server that never heard from a leader shows "-1ns".
		lastContact := s.LastContact.String()
		out.Servers = append(out.Servers, serverHealthJSON{
			ID: s.ID, Name: s.Name, Address: s.Address, SerfStatus: s.SerfStatus, Version: s.Version,
			Leader: s.Leader, LastContact: lastContact, LastTerm: s.LastTerm, LastIndex: s.LastIndex,
			Healthy: s.Healthy, Voter: s.Voter, StableSince: s.StableSince.Round(time.Second).UTC(),
		})
	}
	if reply.Healthy {
		return out, nil
	}
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(out)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(buf.Bytes())
	return handled{}, nil
}
