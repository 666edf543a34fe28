package agent

import (
	"errors"
	"net/http"
	"strings"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/nomad"
	"github.com/nomadq/nomadq/structs"
)

// agentKeyringRequest serves /v1/agent/keyring/{list,install,use,remove}:
// the servers' gossip (serf) keyring, changed on every server at once
// through serf queries. It is not the Variables root keyring under
// /v1/operator/keyring/. The answer is Nomad's KeyringResponse.
func (h *httpHandler) agentKeyringRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	op := nomad.GossipKeyringOp(strings.TrimPrefix(r.URL.Path, "/v1/agent/keyring/"))
	switch op {
	case nomad.GossipKeyringList:
		if r.Method != http.MethodGet {
			return nil, methodNotAllowed()
		}
	case nomad.GossipKeyringInstall, nomad.GossipKeyringUse, nomad.GossipKeyringRemove:
		if !isWrite(r) {
			return nil, methodNotAllowed()
		}
	default:
		return nil, codedErr(http.StatusNotFound, "keyring operation %q not found: must be list, install, use or remove", string(op))
	}
	srv := h.agent.server
	if srv == nil {
		return nil, codedErr(http.StatusNotImplemented, "gossip keyring operations need a server agent; this agent has no server")
	}
	var key string
	if op != nomad.GossipKeyringList {
		var body api.KeyringRequest
		if err := decodeBody(r, &body); err != nil {
			return nil, err
		}
		if body.Key == "" {
			return nil, codedErr(http.StatusBadRequest, "Key is missing: must be a base64 gossip key")
		}
		if _, err := structs.DecodeGossipKey(body.Key); err != nil {
			return nil, codedErr(http.StatusBadRequest, "Key is not allowed: %v", err)
		}
		key = body.Key
	}
	resp, err := srv.GossipKeyring(op, key)
	if errors.Is(err, nomad.ErrGossipKeyringRefused) {
		return nil, codedErr(http.StatusBadRequest, "gossip keyring %s: %v", string(op), err)
	}
	if err != nil {
		return nil, codedErr(http.StatusInternalServerError, "gossip keyring %s: %v", string(op), err)
	}
	out := api.KeyringResponse{Messages: resp.Messages, Keys: resp.Keys, NumNodes: resp.NumNodes}
	if out.Messages == nil {
		out.Messages = map[string]string{}
	}
	if out.Keys == nil {
		out.Keys = map[string]int{}
	}
	return out, nil
}
