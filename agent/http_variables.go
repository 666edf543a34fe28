package agent

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/structs"
)

// variableLockJSON is a variable lock as Nomad's API shows it: durations
// as Go duration strings ("15s"). Requests may also give nanoseconds.
type variableLockJSON struct {
	ID        string
	TTL       any
	LockDelay any
}

// variableJSON is a variable on the wire; list entries leave Items out,
// and the answer to a lock release carries none (null).
type variableJSON struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Items       map[string]string
	Lock        *variableLockJSON `codec:",omitempty" json:",omitempty"`
}

// variableMetaJSON is a list entry.
type variableMetaJSON struct {
	Namespace   string
	Path        string
	CreateIndex uint64
	ModifyIndex uint64
	CreateTime  int64
	ModifyTime  int64
	Lock        *variableLockJSON `codec:",omitempty" json:",omitempty"`
}

func lockJSON(l *structs.VariableLock) *variableLockJSON {
	if l == nil {
		return nil
	}
	return &variableLockJSON{ID: l.ID, TTL: durationString(l.TTL), LockDelay: durationString(l.LockDelay)}
}

func durationString(d time.Duration) string {
	if d == 0 {
		return ""
	}
	return d.String()
}

// variableView is the variable as the API shows it; a variable read or
// written whole always shows its Items ({} when it has none), a released
// lock's answer shows none.
func variableView(v *structs.VariableDecrypted) *variableJSON {
	return &variableJSON{
		Namespace: v.Namespace, Path: v.Path,
		CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex,
		CreateTime: v.CreateTime, ModifyTime: v.ModifyTime,
		Items: v.Items, Lock: lockJSON(v.Lock),
	}
}

func variableMetaView(m *structs.VariableMetadata) *variableMetaJSON {
	return &variableMetaJSON{
		Namespace: m.Namespace, Path: m.Path,
		CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex,
		CreateTime: m.CreateTime, ModifyTime: m.ModifyTime,
		Lock: lockJSON(m.Lock),
	}
}

// parseLockDuration reads a lock duration given as a Go duration string
// or as nanoseconds.
func parseLockDuration(field string, v any) (time.Duration, error) {
	switch d := v.(type) {
	case nil:
		return 0, nil
	case string:
		if d == "" {
			return 0, nil
		}
		out, err := time.ParseDuration(d)
		if err != nil {
			return 0, codedErr(http.StatusBadRequest, "Lock.%s: %q is not a duration (for example \"15s\")", field, d)
		}
		return out, nil
	case float64:
		return time.Duration(d), nil
	}
	return 0, codedErr(http.StatusBadRequest, "Lock.%s must be a duration string or nanoseconds, got %T", field, v)
}

// decodeVariable reads a variable request body.
func decodeVariable(r *http.Request) (*structs.VariableDecrypted, error) {
	var in variableJSON
	if err := decodeBody(r, &in); err != nil {
		return nil, err
	}
	out := &structs.VariableDecrypted{
		VariableMetadata: structs.VariableMetadata{Namespace: in.Namespace, Path: in.Path, ModifyIndex: in.ModifyIndex},
		Items:            in.Items,
	}
	if in.Lock != nil {
		ttl, err := parseLockDuration("TTL", in.Lock.TTL)
		if err != nil {
			return nil, err
		}
		delay, err := parseLockDuration("LockDelay", in.Lock.LockDelay)
		if err != nil {
			return nil, err
		}
		out.Lock = &structs.VariableLock{ID: in.Lock.ID, TTL: ttl, LockDelay: delay}
	}
	return out, nil
}

// variablesListRequest answers GET /v1/vars: the metadata of the
// variables under prefix, filtered and paged.
func (h *httpHandler) variablesListRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	if r.Method != http.MethodGet {
		return nil, methodNotAllowed()
	}
	args := structs.VariablesListRequest{}
	if err := h.parseQuery(r, &args.QueryOptions); err != nil {
		return nil, err
	}
	var reply structs.VariablesListResponse
	if err := h.agent.rpc("Variables.List", &args, &reply); err != nil {
		return nil, rpcError(err)
	}
	out := make([]*variableMetaJSON, 0, len(reply.Data))
	for _, m := range reply.Data {
		out = append(out, variableMetaView(m))
	}
	key := func(m *variableMetaJSON) string { return m.Namespace + "." + m.Path }
	slices.SortFunc(out, func(a, b *variableMetaJSON) int { return cmp.Compare(key(a), key(b)) })
	out, err := filterAndPage(&args.QueryOptions, out, key, &reply.QueryMeta)
	if err != nil {
		return nil, err
	}
	setMeta(w, &reply.QueryMeta)
	return out, nil
}

// variableSpecificRequest answers /v1/var/:path: GET reads, PUT/POST
// write (cas=, or one of lock-acquire, lock-renew, lock-release), DELETE
// deletes (cas=).
func (h *httpHandler) variableSpecificRequest(w http.ResponseWriter, r *http.Request) (any, error) {
	path := strings.TrimPrefix(r.URL.Path, "/v1/var/")
	if path == "" {
		return nil, codedErr(http.StatusBadRequest, "missing variable path")
	}
	switch r.Method {
	case http.MethodGet:
		return h.variableRead(w, r, path)
	case http.MethodPut, http.MethodPost:
		return h.variableWrite(w, r, path)
	case http.MethodDelete:
		return h.variableDelete(w, r, path)
	}
	return nil, codedErr(http.StatusBadRequest, "Invalid method")
}

func (h *httpHandler) variableRead(w http.ResponseWriter, r *http.Request, path string) (any, error) {
	args := structs.VariablesReadRequest{Path: path}
	var reply structs.VariablesReadResponse
	if err := h.query(w, r, "Variables.Read", &args.QueryOptions, &args, &reply, &reply.QueryMeta); err != nil {
		return nil, err
	}
	if reply.Data == nil {
		return nil, codedErr(http.StatusNotFound, "variable not found")
	}
	return variableView(withItems(reply.Data)), nil
}

// withItems shows a variable without items with an empty Items object,
// as a variable read whole always has one.
func withItems(v *structs.VariableDecrypted) *structs.VariableDecrypted {
	if v.Items == nil {
		v.Items = structs.VariableItems{}
	}
	return v
}

// lockOperation returns the lock query parameter of a write ("" for
// none); more than one is a 400.
func lockOperation(r *http.Request) (string, error) {
	q := r.URL.Query()
	var ops []string
	for _, op := range []string{"lock-acquire", "lock-renew", "lock-release"} {
		if _, ok := q[op]; ok {
			ops = append(ops, op)
		}
	}
	switch len(ops) {
	case 0:
		return "", nil
	case 1:
		return ops[0], nil
	}
	return "", codedErr(http.StatusBadRequest, "multiple lock operations: %s; give one of lock-acquire, lock-renew, lock-release", strings.Join(ops, ", "))
}

// parseCAS reads cas=<index>.
func parseCAS(r *http.Request) (bool, uint64, error) {
	s := r.URL.Query().Get("cas")
	if s == "" {
		return false, 0, nil
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return true, 0, codedErr(http.StatusBadRequest, "can not parse cas: %q is not an unsigned integer", s)
	}
	return true, n, nil
}

func (h *httpHandler) variableWrite(w http.ResponseWriter, r *http.Request, path string) (any, error) {
	lockOp, err := lockOperation(r)
	if err != nil {
		return nil, err
	}
	isCAS, casIndex, err := parseCAS(r)
	if err != nil {
		return nil, err
	}
	if isCAS && lockOp != "" {
		return nil, codedErr(http.StatusBadRequest, "CAS can't be used with lock operations")
	}
	v, err := decodeVariable(r)
	if err != nil {
		return nil, err
	}
	v.Path = path

	if lockOp == "lock-renew" {
		args := structs.VariablesRenewLockRequest{Path: path, LockID: v.LockID()}
		h.parseWrite(r, &args.WriteRequest)
		if v.Namespace != "" && r.URL.Query().Get("namespace") == "" {
			args.Namespace = v.Namespace
		}
		var reply structs.VariablesRenewLockResponse
		if err := h.agent.rpc("Variables.RenewLock", &args, &reply); err != nil {
			return nil, rpcError(err)
		}
		setIndex(w, reply.Index)
		return variableMetaView(reply.VarMeta), nil
	}

	args := structs.VariablesApplyRequest{Op: structs.VarOpSet, Var: v}
	switch {
	case lockOp != "":
		args.Op = structs.VarOp(lockOp)
	case len(v.Items) == 0:
		return nil, codedErr(http.StatusBadRequest, "variable missing required Items object")
	case isCAS:
		args.Op = structs.VarOpCAS
		v.ModifyIndex = casIndex
	}
	h.parseWrite(r, &args.WriteRequest)
	return h.variableApply(w, &args)
}

func (h *httpHandler) variableDelete(w http.ResponseWriter, r *http.Request, path string) (any, error) {
	isCAS, casIndex, err := parseCAS(r)
	if err != nil {
		return nil, err
	}
	args := structs.VariablesApplyRequest{Op: structs.VarOpDelete, Var: &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: path}}}
	if isCAS {
		args.Op = structs.VarOpDeleteCAS
		args.Var.ModifyIndex = casIndex
	}
	h.parseWrite(r, &args.WriteRequest)
	return h.variableApply(w, &args)
}

// variableApply sends a write and answers it: the variable written, 204
// after a delete, or 409 with the stored variable it conflicted with.
func (h *httpHandler) variableApply(w http.ResponseWriter, args *structs.VariablesApplyRequest) (any, error) {
	var reply structs.VariablesApplyResponse
	if err := h.agent.rpc("Variables.Apply", args, &reply); err != nil {
		return nil, rpcError(err)
	}
	if reply.Result == structs.VarOpResultConflict {
		setIndex(w, reply.Conflict.ModifyIndex)
		return h.writeStatusJSON(w, http.StatusConflict, variableView(reply.Conflict))
	}
	setIndex(w, reply.Index)
	if reply.Output == nil {
		w.WriteHeader(http.StatusNoContent)
		return handled{}, nil
	}
	if args.Op == structs.VarOpLockRelease {
		return variableView(reply.Output), nil
	}
	return variableView(withItems(reply.Output)), nil
}

// writeStatusJSON answers with obj as JSON under a status other than 200.
func (h *httpHandler) writeStatusJSON(w http.ResponseWriter, code int, obj any) (any, error) {
	var body []byte
	if err := codec.NewEncoderBytes(&body, structs.JsonHandle).Encode(obj); err != nil {
		return nil, fmt.Errorf("failed to encode response: %w", err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	w.Write(body)
	return handled{}, nil
}
