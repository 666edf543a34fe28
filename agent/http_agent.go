package agent

import (
	"bytes"
	"net"
	"net/http"
	"runtime"
	"strconv"

	"github.com/hashicorp/go-msgpack/v2/codec"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// agentSelf is /v1/agent/self; its three keys are lowercase, as Nomad's.
type agentSelf struct {
	Config *config.Config               `json:"config" codec:"config"`
	Member *structs.ServerMember        `json:"member" codec:"member"`
	Stats  map[string]map[string]string `json:"stats" codec:"stats"`
}

func (h *httpHandler) agentSelfRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	a := h.agent
	self := &agentSelf{Config: a.config, Stats: map[string]map[string]string{}}
	self.Stats["runtime"] = map[string]string{
		"os_name":    runtime.GOOS,
		"arch":       runtime.GOARCH,
		"version":    runtime.Version(),
		"max_procs":  strconv.Itoa(runtime.GOMAXPROCS(0)),
		"goroutines": strconv.Itoa(runtime.NumGoroutine()),
		"cpu_count":  strconv.Itoa(runtime.NumCPU()),
	}
	if a.server != nil {
		var members structs.ServerMembersResponse
		if err := a.rpc("Status.Members", &structs.GenericRequest{}, &members); err != nil {
			return nil, err
		}
		want := a.config.Name + "." + a.config.Region
		for _, m := range members.Members {
			if m.Name == want {
				self.Member = m
			}
		}
		leader := a.server.Leader()
		self.Stats["nomad"] = map[string]string{
			"server":        "true",
			"leader":        strconv.FormatBool(a.server.IsLeader()),
			"leader_addr":   leader,
			"bootstrap":     strconv.FormatBool(a.config.Server.BootstrapExpect == 1 || a.config.DevMode),
			"known_regions": "1",
		}
		var peers []string
		_ = a.rpc("Status.Peers", &structs.GenericRequest{}, &peers)
		self.Stats["raft"] = map[string]string{
			"num_peers":        strconv.Itoa(max(len(peers)-1, 0)),
			"logstore_backend": map[bool]string{true: "inmem", false: "wal"}[a.config.DevMode],
		}
		self.Stats["serf"] = map[string]string{
			"members": strconv.Itoa(len(members.Members)),
		}
	}
	if self.Member == nil {
		host, port := "127.0.0.1", 0
		if a.httpListener != nil {
			if ta, ok := a.httpListener.Addr().(*net.TCPAddr); ok {
				host, port = ta.IP.String(), ta.Port
			}
		}
		self.Member = &structs.ServerMember{Name: a.config.Name, Addr: host, Port: uint16(port), Tags: map[string]string{}, Status: "alive"}
	}
	if a.client != nil {
		stats := map[string]string{"node_id": a.client.NodeID()}
		if ce, ok := a.client.(clientEndpoints); ok {
			for k, v := range ce.Stats() {
				stats[k] = v
			}
		}
		self.Stats["client"] = stats
	}
	return self, nil
}

func (h *httpHandler) agentMembersRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	if h.agent.server == nil {
		return nil, codedErr(http.StatusNotImplemented, "Not a server: /v1/agent/members needs a server agent")
	}
	var reply structs.ServerMembersResponse
	if err := h.agent.rpc("Status.Members", &structs.GenericRequest{}, &reply); err != nil {
		return nil, err
	}
	if reply.Members == nil {
		reply.Members = []*structs.ServerMember{}
	}
	for _, m := range reply.Members {
		if m.Tags == nil {
			m.Tags = map[string]string{}
		}
	}
	return reply, nil
}

type healthStatus struct {
	Ok      bool   `json:"ok" codec:"ok"`
	Message string `json:"message" codec:"message"`
}

type healthResponse struct {
	Client *healthStatus `json:"client,omitempty" codec:"client,omitempty"`
	Server *healthStatus `json:"server,omitempty" codec:"server,omitempty"`
}

func (h *httpHandler) agentHealthRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	kind := r.URL.Query().Get("type")
	if kind != "" && kind != "client" && kind != "server" {
		return nil, codedErr(http.StatusBadRequest, "Invalid type %q: must be client or server", kind)
	}
	a := h.agent
	var resp healthResponse
	ok := true
	if a.server != nil && kind != "client" {
		resp.Server = &healthStatus{Ok: true, Message: "ok"}
		if a.server.Leader() == "" {
			resp.Server = &healthStatus{Message: "no leader"}
			ok = false
		}
	} else if kind == "server" {
		return nil, codedErr(http.StatusBadRequest, "Server health check requested but agent is not a server")
	}
	if a.client != nil && kind != "server" {
		resp.Client = &healthStatus{Ok: true, Message: "ok"}
	} else if kind == "client" {
		return nil, codedErr(http.StatusBadRequest, "Client health check requested but agent is not a client")
	}
	if ok {
		return resp, nil
	}
	var buf bytes.Buffer
	_ = codec.NewEncoder(&buf, structs.JsonHandle).Encode(resp)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(buf.Bytes())
	return handled{}, nil
}

func (h *httpHandler) statusLeaderRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var q structs.QueryOptions
	if err := h.parseQuery(r, &q); err != nil {
		return nil, err
	}
	var leader string
	if err := h.agent.rpc("Status.Leader", &structs.GenericRequest{QueryOptions: q}, &leader); err != nil {
		return nil, rpcError(err)
	}
	return leader, nil
}

func (h *httpHandler) statusPeersRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	var q structs.QueryOptions
	if err := h.parseQuery(r, &q); err != nil {
		return nil, err
	}
	var peers []string
	if err := h.agent.rpc("Status.Peers", &structs.GenericRequest{QueryOptions: q}, &peers); err != nil {
		return nil, rpcError(err)
	}
	if peers == nil {
		peers = []string{}
	}
	return peers, nil
}

// metricsRequest serves the agent's in-memory metrics sink, or the
// Prometheus registry with ?format=prometheus when telemetry enables it.
func (h *httpHandler) metricsRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	if r.URL.Query().Get("format") == "prometheus" {
		if !h.agent.config.Telemetry.PrometheusMetrics {
			return nil, codedErr(http.StatusUnsupportedMediaType, "Prometheus metrics are not enabled: set telemetry { prometheus_metrics = true } in the agent configuration")
		}
		promhttp.HandlerFor(h.agent.telemetry.gatherer, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}).ServeHTTP(w, r)
		return handled{}, nil
	}
	return h.agent.telemetry.summary(), nil
}

// systemGCRequest starts a forced garbage collection (PUT /v1/system/gc).
func (h *httpHandler) systemGCRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if !isWrite(r) {
		return nil, methodNotAllowed()
	}
	var resp structs.GenericResponse
	args := structs.GenericRequest{}
	args.AuthToken = authToken(r)
	if err := h.agent.rpc("System.GarbageCollect", &args, &resp); err != nil {
		return nil, rpcError(err)
	}
	setIndex(w, resp.Index)
	return nil, nil
}
