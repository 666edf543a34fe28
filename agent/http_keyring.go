package agent

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-jose/go-jose/v4"

	"github.com/nomadq/nomadq/structs"
)

// jwksRequest answers /.well-known/jwks.json: the public keys that verify
// workload identities, as a JSON Web Key Set. It needs no token, as in
// Nomad: public keys are not secret.
func (h *httpHandler) jwksRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.GenericRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.KeyringListPublicResponse
	if err := h.agent.rpc("Keyring.ListPublic", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	set := jose.JSONWebKeySet{Keys: make([]jose.JSONWebKey, 0, len(reply.PublicKeys))}
	for _, pk := range reply.PublicKeys {
		pub, err := x509.ParsePKCS1PublicKey(pk.PublicKey)
		if err != nil {
			return nil, fmt.Errorf("public key %s: %w", pk.KeyID, err)
		}
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: pub, KeyID: pk.KeyID, Algorithm: pk.Algorithm, Use: pk.Use})
	}
	body, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("encode key set: %w", err)
	}
	setMeta(w, &reply.QueryMeta)
	return rawJSON(body), nil
}

// keyringRequest routes /v1/operator/keyring/{keys,rotate,key/:id}.
func (h *httpHandler) keyringRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/operator/keyring/")
	switch {
	case rest == "keys":
		if r.Method != http.MethodGet {
			return nil, methodNotAllowed()
		}
		return h.keyringList(w, r)
	case rest == "rotate":
		if !isWrite(r) {
			return nil, methodNotAllowed()
		}
		return h.keyringRotate(w, r)
	case strings.HasPrefix(rest, "key/"):
		if r.Method != http.MethodDelete {
			return nil, methodNotAllowed()
		}
		keyID, tail, err := pathID(r, "/v1/operator/keyring/key/")
		if err != nil {
			return nil, err
		}
		if keyID == "" || tail != "" {
			return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
		}
		return h.keyringDelete(w, r, keyID)
	}
	return nil, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", r.URL.Path)
}

func (h *httpHandler) keyringList(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.GenericRequest{}
	var reply structs.KeyringListResponse
	if err := h.query(w, r, "Keyring.List", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Keys == nil {
		reply.Keys = []*structs.RootKeyMeta{}
	}
	return reply.Keys, nil
}

// keyringRotate takes Nomad's parameters: algo (only aes256-gcm), full
// (variables are re-encrypted with the new key) and publish_time (the new
// key is prepublished until then).
func (h *httpHandler) keyringRotate(w http.ResponseWriter, r *http.Request) (any, error) {
	args := structs.KeyringRotateRequest{}
	q := r.URL.Query()
	args.Algorithm = q.Get("algo")
	if _, ok := q["full"]; ok {
		// Nomad takes the parameter's presence as the request, whatever
		// its value; so does this.
		args.Full = true
	}
	if raw := q.Get("publish_time"); raw != "" {
		pt, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "invalid publish_time %q: must be a Unix time in nanoseconds", raw)
		}
		args.PublishTime = pt
	}
	var reply structs.KeyringRotateResponse
	if err := h.write(w, r, "Keyring.Rotate", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}

// keyringDelete takes Nomad's force parameter.
func (h *httpHandler) keyringDelete(w http.ResponseWriter, r *http.Request, keyID string) (any, error) {
	args := structs.RootKeyDeleteRequest{KeyID: keyID}
	if raw, ok := r.URL.Query()["force"]; ok {
		force, err := strconv.ParseBool(raw[0])
		if err != nil {
			return nil, codedErr(http.StatusUnprocessableEntity, "invalid force parameter %q: must be true or false", raw[0])
		}
		args.Force = force
	}
	var reply structs.GenericResponse
	if err := h.write(w, r, "Keyring.Delete", &args.WriteRequest, &args, &reply, &reply.Index); err != nil {
		return nil, err
	}
	return reply, nil
}
