package agent

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/structs"
)

// errPermissionDenied is the 403 of the debug endpoints when enable_debug
// is off (nomadq has no ACL tokens that could allow them instead).
var errPermissionDenied = codedErr(http.StatusForbidden, "Permission denied")

// joinResult is /v1/agent/join's answer; its keys are lowercase, as
// Nomad's.
type joinResult struct {
	NumJoined int    `json:"num_joined" codec:"num_joined"`
	Error     string `json:"error" codec:"error"`
	Warning   string `json:"warning" codec:"warning"`
}

// agentJoinRequest joins this server's serf to the given addresses. A
// failed join is a 200 whose error key says why, as in Nomad.
func (h *httpHandler) agentJoinRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	srv := h.agent.server
	if srv == nil {
		return nil, codedErr(http.StatusNotImplemented, "Invalid method")
	}
	addrs := r.URL.Query()["address"]
	if len(addrs) == 0 {
		return nil, codedErr(http.StatusBadRequest, "missing address to join")
	}
	n, err := srv.Join(addrs)
	res := joinResult{NumJoined: n}
	if err != nil {
		res.Error = err.Error()
	}
	return res, nil
}

// agentForceLeaveRequest marks a serf member as left; prune also drops
// it from the member list.
func (h *httpHandler) agentForceLeaveRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	srv := h.agent.server
	if srv == nil {
		return nil, codedErr(http.StatusNotImplemented, "Invalid method")
	}
	q := r.URL.Query()
	node := q.Get("node")
	if node == "" {
		return nil, codedErr(http.StatusBadRequest, "missing node to force leave")
	}
	prune := false
	if s, ok := q["prune"]; ok {
		var err error
		if prune, err = parseBoolParam(s[0]); err != nil {
			return nil, codedErr(http.StatusBadRequest, "invalid prune value %q: must be true or false (or 1 or 0)", s[0])
		}
	}
	return nil, srv.RemoveFailedNode(node, prune)
}

// parseBoolParam reads a query flag; an empty value is true, as Nomad's
// parseBool reads "?prune".
func parseBoolParam(s string) (bool, error) {
	switch s {
	case "", "1", "true", "True", "TRUE", "t", "T":
		return true, nil
	case "0", "false", "False", "FALSE", "f", "F":
		return false, nil
	}
	return false, errors.New("not a bool")
}

// serverLister is what /v1/agent/servers needs from the node client.
type serverLister interface {
	Servers() []string
	SetServers([]string) error
}

func (n *nodeClient) Servers() []string           { return n.c.Servers() }
func (n *nodeClient) SetServers(a []string) error { return n.c.SetServers(a) }

// agentServersRequest lists (GET) or replaces (PUT) the servers a client
// agent talks to; an agent without a client answers 501, as Nomad's.
func (h *httpHandler) agentServersRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	sl, ok := h.agent.client.(serverLister)
	if h.agent.client == nil || !ok {
		if r.Method != http.MethodGet && !isWrite(r) {
			return nil, methodNotAllowed()
		}
		return nil, codedErr(http.StatusNotImplemented, "Invalid method")
	}
	switch {
	case r.Method == http.MethodGet:
		servers := sl.Servers()
		if servers == nil {
			servers = []string{}
		}
		return servers, nil
	case isWrite(r):
		addrs := r.URL.Query()["address"]
		if len(addrs) == 0 {
			return nil, codedErr(http.StatusBadRequest, "missing server address")
		}
		if err := sl.SetServers(addrs); err != nil {
			return nil, codedErr(http.StatusBadRequest, "%v", err)
		}
		h.logger.Info("client server list replaced", "servers", addrs)
		return nil, nil
	}
	return nil, methodNotAllowed()
}

// regionsRequest lists the regions of every server serf knows.
func (h *httpHandler) regionsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var regions []string
	if err := h.agent.rpc("Region.List", &structs.GenericRequest{}, &regions); err != nil {
		return nil, rpcError(err)
	}
	if regions == nil {
		regions = []string{}
	}
	return regions, nil
}

// schedulerWorkerInfo and schedulerWorkersInfo are api's
// AgentSchedulerWorker{,s}Info on the wire (lowercase keys).
type schedulerWorkerInfo struct {
	ID                string   `json:"id" codec:"id"`
	EnabledSchedulers []string `json:"enabled_schedulers" codec:"enabled_schedulers"`
	Started           string   `json:"started" codec:"started"`
	Status            string   `json:"status" codec:"status"`
	WorkloadStatus    string   `json:"workload_status" codec:"workload_status"`
}

type schedulerWorkersInfo struct {
	ServerID   string                `json:"server_id" codec:"server_id"`
	Schedulers []schedulerWorkerInfo `json:"schedulers" codec:"schedulers"`
}

type schedulerWorkerConfig struct {
	ServerID          string   `json:"server_id" codec:"server_id"`
	NumSchedulers     int      `json:"num_schedulers" codec:"num_schedulers"`
	EnabledSchedulers []string `json:"enabled_schedulers" codec:"enabled_schedulers"`
}

// serverOnly is Nomad's 400 for server endpoints on a client agent.
func (h *httpHandler) serverOnly() (*nomad.Server, error) {
	if h.agent.server == nil {
		return nil, codedErr(http.StatusBadRequest, "Server only endpoint")
	}
	return h.agent.server, nil
}

func (h *httpHandler) serverMemberName() string {
	return h.agent.config.Name + "." + h.agent.config.Region
}

// agentSchedulersRequest describes this server's scheduling workers.
func (h *httpHandler) agentSchedulersRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	srv, err := h.serverOnly()
	if err != nil {
		return nil, err
	}
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	out := schedulerWorkersInfo{ServerID: h.serverMemberName(), Schedulers: []schedulerWorkerInfo{}}
	for _, wi := range srv.SchedulerWorkersInfo() {
		out.Schedulers = append(out.Schedulers, schedulerWorkerInfo{
			ID:                wi.ID,
			EnabledSchedulers: wi.EnabledSchedulers,
			Started:           wi.Started.UTC().Format(time.RFC3339Nano),
			Status:            wi.Status,
			WorkloadStatus:    wi.WorkloadStatus,
		})
	}
	return out, nil
}

// agentSchedulersConfigRequest reads (GET) or changes (PUT/POST) the size
// of this server's worker pool and the eval types its workers take.
func (h *httpHandler) agentSchedulersConfigRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	srv, err := h.serverOnly()
	if err != nil {
		return nil, err
	}
	var cfg nomad.SchedulerWorkerPoolArgs
	switch {
	case r.Method == http.MethodGet:
		cfg = srv.SchedulerWorkerConfig()
	case isWrite(r):
		var body schedulerWorkerConfig
		if err := decodeBody(r, &body); err != nil {
			return nil, codedErr(http.StatusBadRequest, "Invalid request: %v", err)
		}
		args := nomad.SchedulerWorkerPoolArgs{NumSchedulers: body.NumSchedulers, EnabledSchedulers: body.EnabledSchedulers}
		if err := args.Validate(); err != nil {
			// Nomad's body is exactly "Invalid request" and the official
			// client's tests match it whole; the reason goes to the log.
			h.logger.Warn("refused scheduler worker configuration", "error", err)
			return nil, codedErr(http.StatusBadRequest, "Invalid request")
		}
		cfg = srv.SetSchedulerWorkerConfig(args)
		h.logger.Info("scheduler worker pool reconfigured", "num_schedulers", cfg.NumSchedulers, "enabled_schedulers", cfg.EnabledSchedulers)
	default:
		return nil, methodNotAllowed()
	}
	return schedulerWorkerConfig{ServerID: h.serverMemberName(), NumSchedulers: cfg.NumSchedulers, EnabledSchedulers: slices.Clone(cfg.EnabledSchedulers)}, nil
}

// hostDataResponse is the answer when the request names its target.
type hostDataResponse struct {
	AgentID  string
	HostData *hostData `json:",omitempty"`
}

// agentHostRequest describes the agent's host (only with enable_debug).
// Without a target it answers the host data itself, as Nomad does; with
// server_id or node_id naming this agent it wraps it with the agent's ID.
func (h *httpHandler) agentHostRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	// With ACLs on, the agent:read rule decides instead, as in Nomad.
	if !h.agent.config.EnableDebug && !h.agent.config.ACL.Enabled {
		return nil, errPermissionDenied
	}
	q := r.URL.Query()
	serverID, nodeID := q.Get("server_id"), q.Get("node_id")
	if serverID != "" && nodeID != "" {
		return nil, codedErr(http.StatusBadRequest, "Can only forward to either client node or server")
	}
	if serverID == "" && nodeID == "" {
		return makeHostData(), nil
	}
	id, err := h.localTarget(serverID, nodeID)
	if err != nil {
		return nil, err
	}
	return hostDataResponse{AgentID: id, HostData: makeHostData()}, nil
}

// checkTarget checks the server_id or node_id of a monitor or pprof
// request: none, or one naming this agent.
func (h *httpHandler) checkTarget(q url.Values) error {
	serverID, nodeID := q.Get("server_id"), q.Get("node_id")
	if serverID != "" && nodeID != "" {
		return codedErr(http.StatusBadRequest, "Cannot target node and server simultaneously")
	}
	if serverID == "" && nodeID == "" {
		return nil
	}
	_, err := h.localTarget(serverID, nodeID)
	return err
}

// localTarget checks that server_id or node_id names this agent and
// returns its ID. Another known agent is refused by name: nomadq does not
// forward debug requests between agents.
func (h *httpHandler) localTarget(serverID, nodeID string) (string, error) {
	a := h.agent
	if nodeID != "" {
		if a.client != nil && a.client.NodeID() == nodeID {
			return nodeID, nil
		}
		return "", codedErr(http.StatusBadRequest, "node_id %q is not this agent's node: nomadq answers debug requests for the agent asked only; ask that node's agent", nodeID)
	}
	srv := a.server
	if srv == nil {
		return "", codedErr(http.StatusBadRequest, "server_id %q: this agent runs no server", serverID)
	}
	if serverID == h.serverMemberName() || serverID == srv.NodeID() || serverID == "leader" && srv.IsLeader() {
		return h.serverMemberName(), nil
	}
	known := serverID == "leader"
	for _, m := range srv.Members() {
		if m.Name == serverID || m.Tags["id"] == serverID {
			known = true
		}
	}
	if !known {
		return "", codedErr(http.StatusInternalServerError, "unknown Nomad server %s", serverID)
	}
	return "", codedErr(http.StatusBadRequest, "server_id %q is another server: nomadq answers debug requests for the agent asked only; ask that server's agent", serverID)
}
