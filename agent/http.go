package agent

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/agent/ui"
	"github.com/nomadq/nomadq/structs"
)

// Response headers of queries, as Nomad's.
const (
	headerIndex       = "X-Nomad-Index"
	headerKnownLeader = "X-Nomad-KnownLeader"
	headerLastContact = "X-Nomad-LastContact"
	headerNextToken   = "X-Nomad-NextToken"
)

// gzipMinSize is the smallest response body worth compressing.
const gzipMinSize = 1024

// CodedError is an error with the HTTP status it is answered with.
type CodedError struct {
	Code int
	Msg  string
}

func (e *CodedError) Error() string { return e.Msg }

func codedErr(code int, format string, args ...any) error {
	return &CodedError{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// rawJSON is written as it is (for example the literal null).
type rawJSON []byte

// handled means the handler wrote the response itself.
type handled struct{}

// handlerFunc answers one request with a value to encode or an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) (any, error)

// route is one path of the API: exact, or a prefix (ending in "/")
// whose remainder the handler reads.
type route struct {
	path   string
	prefix bool
	h      handlerFunc
}

type httpHandler struct {
	agent  *Agent
	logger hclog.Logger
	routes []route
	rules  map[string]httpRule
	ui     http.Handler
	// gates cap the blocking queries and log streams per address.
	gates *requestGates
}

func newHTTPHandler(a *Agent) *httpHandler {
	h := &httpHandler{agent: a, logger: a.logger.Named("http"), rules: httpRules(),
		gates: newRequestGates(a.config.Limits.HTTPMaxBlockingQueriesPerClient, a.config.Limits.HTTPMaxLogStreamsPerClient)}
	add := func(path string, fn handlerFunc) {
		h.routes = append(h.routes, route{path: path, prefix: strings.HasSuffix(path, "/"), h: fn})
	}
	add("/v1/jobs", h.jobsRequest)
	add("/v1/jobs/parse", h.jobsParseRequest)
	add("/v1/jobs/statuses", h.jobsStatusesRequest)
	add("/v1/job/", h.jobSpecificRequest)
	add("/v1/validate/job", h.validateJobRequest)
	add("/v1/evaluations", h.evalsRequest)
	add("/v1/evaluations/count", h.evalsCountRequest)
	add("/v1/evaluation/", h.evalSpecificRequest)
	add("/v1/allocations", h.allocsRequest)
	add("/v1/allocation/", h.allocSpecificRequest)
	add("/v1/nodes", h.nodesRequest)
	// Node pool routes come before /v1/node/, which would take them.
	add("/v1/node/pools", h.nodePoolsRequest)
	add("/v1/node/pool/", h.nodePoolSpecificRequest)
	add("/v1/node/", h.nodeSpecificRequest)
	add("/v1/namespaces", h.namespacesRequest)
	add("/v1/namespace", h.namespaceCreateRequest)
	add("/v1/namespace/", h.namespaceSpecificRequest)
	add("/v1/deployments", h.deploymentsRequest)
	add("/v1/deployment/", h.deploymentSpecificRequest)
	add("/v1/agent/self", h.agentSelfRequest)
	add("/v1/agent/members", h.agentMembersRequest)
	add("/v1/agent/health", h.agentHealthRequest)
	add("/v1/agent/servers", h.agentServersRequest)
	add("/v1/agent/join", h.agentJoinRequest)
	add("/v1/agent/force-leave", h.agentForceLeaveRequest)
	add("/v1/agent/schedulers", h.agentSchedulersRequest)
	add("/v1/agent/schedulers/config", h.agentSchedulersConfigRequest)
	add("/v1/agent/host", h.agentHostRequest)
	add("/v1/agent/monitor", h.agentMonitorRequest)
	add("/v1/agent/pprof/", h.agentPprofRequest)
	add("/v1/agent/keyring/", h.agentKeyringRequest)
	add("/v1/operator/raft/", h.operatorRaftRequest)
	add(snapshotPath, h.operatorSnapshotRequest)
	add("/v1/operator/autopilot/configuration", h.autopilotConfigRequest)
	add("/v1/operator/autopilot/health", h.autopilotHealthRequest)
	add("/v1/search/fuzzy", h.fuzzySearchRequest)
	add("/v1/status/leader", h.statusLeaderRequest)
	add("/v1/status/peers", h.statusPeersRequest)
	add("/v1/regions", h.regionsRequest)
	add("/v1/metrics", h.metricsRequest)
	add("/v1/operator/scheduler/configuration", h.schedulerConfigRequest)
	add("/v1/operator/keyring/", h.keyringRequest)
	add("/.well-known/jwks.json", h.jwksRequest)
	add("/v1/search", h.searchRequest)
	add("/v1/system/gc", h.systemGCRequest)
	add("/v1/system/reconcile/summaries", h.systemReconcileSummariesRequest)
	add("/v1/queue", h.queueStatusRequest)
	add("/v1/queue/jobs", h.queueJobsRequest)
	add("/v1/queue/job/", h.queueJobControlRequest)
	add("/v1/queue/usage", h.queueUsageRequest)
	add("/v1/queue/usage/reset", h.queueUsageResetRequest)
	add("/v1/client/allocation/", h.clientAllocRequest)
	add("/v1/client/stats", h.clientStatsRequest)
	add("/v1/client/metadata", h.clientMetadataRequest)
	add("/v1/client/fs/logs/", h.clientLogsRequest)
	add("/v1/scaling/policies", h.scalingPoliciesRequest)
	add("/v1/scaling/policy/", h.scalingPolicyRequest)
	add("/v1/acl/bootstrap", h.aclBootstrapRequest)
	add("/v1/acl/policies", h.aclPoliciesRequest)
	add("/v1/acl/policy/", h.aclPolicySpecificRequest)
	add("/v1/acl/tokens", h.aclTokensRequest)
	add("/v1/acl/token", h.aclTokenCreateRequest)
	add("/v1/acl/token/", h.aclTokenSpecificRequest)
	add("/v1/acl/roles", h.aclRolesRequest)
	add("/v1/acl/role", h.aclRoleCreateRequest)
	add("/v1/acl/role/", h.aclRoleSpecificRequest)
	add("/v1/acl/auth-methods", h.aclAuthMethodsRequest)
	add("/v1/acl/auth-method", h.aclAuthMethodCreateRequest)
	add("/v1/acl/auth-method/", h.aclAuthMethodSpecificRequest)
	add("/v1/acl/binding-rules", h.aclBindingRulesRequest)
	add("/v1/acl/binding-rule", h.aclBindingRuleCreateRequest)
	add("/v1/acl/binding-rule/", h.aclBindingRuleSpecificRequest)
	add("/v1/acl/login", h.aclLoginRequest)
	add("/v1/acl/oidc/", h.aclOIDCRequest)
	add("/v1/acl/identity/", h.aclIdentityRequest)
	add("/v1/client/fs/", h.clientFSRequest)
	add("/v1/vars", h.variablesListRequest)
	add("/v1/var/", h.variableSpecificRequest)
	add("/v1/services", h.servicesRequest)
	add("/v1/service/", h.serviceSpecificRequest)
	add("/v1/event/stream", h.eventStreamRequest)
	h.ui = ui.New(h)
	return h
}

func (h *httpHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer h.recoverPanic(w, r)
	path := r.URL.Path
	if path == "/" {
		http.Redirect(w, r, "/ui/", http.StatusTemporaryRedirect)
		return
	}
	// The web UI reads through this handler with the user's token, so
	// its pages pass the same ACL checks as the API.
	if path == "/ui" || strings.HasPrefix(path, "/ui/") {
		h.ui.ServeHTTP(w, r)
		return
	}
	var fn handlerFunc
	var routePath string
	for _, rt := range h.routes {
		if rt.prefix && strings.HasPrefix(path, rt.path) && len(path) > len(rt.path) || !rt.prefix && path == rt.path {
			fn, routePath = rt.h, rt.path
			defer h.agent.telemetry.observeHTTP(r.Method, rt.path, start)
			break
		}
	}
	if fn == nil {
		h.writeError(w, r, codedErr(http.StatusNotFound, "Invalid URL path: no endpoint %s", path))
		return
	}
	// A snapshot archive is as large as the cluster's state, which the
	// request body limit was not sized for.
	if r.Body != nil && path != snapshotPath && h.agent.config.MaxRequestBody > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, h.agent.config.MaxRequestBody)
	}
	if err := h.authorizeHTTP(routePath, r); err != nil {
		h.writeError(w, r, err)
		return
	}
	release, err := h.gates.admit(r)
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	defer release()
	obj, err := fn(w, r)
	defer func() {
		h.logger.Debug("request complete", "method", r.Method, "path", r.URL.RequestURI(), "duration", time.Since(start))
	}()
	if err != nil {
		h.writeError(w, r, err)
		return
	}
	if _, ok := obj.(handled); ok {
		return
	}
	h.writeJSON(w, r, obj)
}

// recoverPanic answers a request whose handler panicked with a 500 and
// logs the panic with its stack, instead of net/http's dropped
// connection: a panic is a bug, and the caller should hear of it. An
// aborted handler (http.ErrAbortHandler) is let through.
func (h *httpHandler) recoverPanic(w http.ResponseWriter, r *http.Request) {
	v := recover()
	if v == nil {
		return
	}
	if v == http.ErrAbortHandler {
		panic(v)
	}
	h.logger.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
	h.writeError(w, r, codedErr(http.StatusInternalServerError, "internal error serving %s %s: %v", r.Method, r.URL.Path, v))
}

// writeError answers with a plain-text error and its status code: a
// CodedError's, the code of a coded server error (see rpcError) that a
// handler returned as it came, 413 for a body over the limit, and 500,
// logged, for any other error: without a code it is the server's fault.
func (h *httpHandler) writeError(w http.ResponseWriter, r *http.Request, err error) {
	code := http.StatusInternalServerError
	var ce *CodedError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &ce):
		code = ce.Code
	case errors.As(err, &mbe):
		code = http.StatusRequestEntityTooLarge
		err = fmt.Errorf("Request body too large: the limit is %d bytes (limits.http_max_request_bytes)", mbe.Limit)
	default:
		if errors.As(rpcError(err), &ce) {
			code, err = ce.Code, ce
		}
	}
	// A 4xx is the caller's mistake, answered in the response: the log
	// keeps it at DEBUG so that ERROR means a fault of the server.
	if code >= 500 {
		h.logger.Error("request failed", "method", r.Method, "path", r.URL.Path, "error", err, "code", code)
	} else {
		h.logger.Debug("request refused", "method", r.Method, "path", r.URL.Path, "error", err, "code", code)
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	io.WriteString(w, err.Error())
}

// writeJSON encodes obj with the wire codec; gzip when the client takes
// it and the body is large enough to gain.
func (h *httpHandler) writeJSON(w http.ResponseWriter, r *http.Request, obj any) {
	buf := jsonBuffers.Get().(*bytes.Buffer)
	defer putJSONBuffer(buf)
	if raw, ok := obj.(rawJSON); ok {
		buf.Write(raw)
	} else {
		handle := structs.JsonHandle
		if _, ok := r.URL.Query()["pretty"]; ok {
			handle = structs.JsonHandlePretty
		}
		if err := codec.NewEncoder(buf, handle).Encode(obj); err != nil {
			h.writeError(w, r, fmt.Errorf("failed to encode response: %w", err))
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Add("Vary", "Accept-Encoding")
	if buf.Len() >= gzipMinSize && acceptsGzip(r) {
		w.Header().Set("Content-Encoding", "gzip")
		gz := gzipWriters.Get().(*gzip.Writer)
		gz.Reset(w)
		gz.Write(buf.Bytes())
		gz.Close()
		gz.Reset(io.Discard) // drop the response writer
		gzipWriters.Put(gz)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Write(buf.Bytes())
}

// jsonBuffers and gzipWriters are reused across responses: a gzip
// writer allocates its compressor, over 800 KB, at its first write, and
// the clients' list polling asks for a compressed body each time.
var (
	jsonBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(io.Discard) }}
)

// putJSONBuffer returns a buffer to the pool, unless a large response
// grew it: a big list is rare next to the small answers, and a pool of
// megabyte buffers would sit in the agent's memory between them.
func putJSONBuffer(b *bytes.Buffer) {
	if b.Cap() > 64<<10 {
		return
	}
	b.Reset()
	jsonBuffers.Put(b)
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.TrimSpace(q) != "q=0" {
			return true
		}
	}
	return false
}

// maxPresizedBody caps the buffer decodeBody sizes up front from a
// request's Content-Length; a larger body grows as it is read.
const maxPresizedBody = 1 << 20

// errEmptyBody is decodeBody's answer to a request without a body, which
// the handlers whose body is optional let through.
var errEmptyBody error = &CodedError{Code: http.StatusBadRequest, Msg: "Request body is empty"}

// decodeBody decodes a JSON request body into out, ignoring fields it
// does not know. An empty, malformed or mistyped body is a 400 naming the
// problem (errEmptyBody when there is none); an oversized one is a 413.
func decodeBody(r *http.Request, out any) error {
	if r.Body == nil {
		return errEmptyBody
	}
	// Sized from Content-Length when the client sent one, so a job of a
	// few KB is read into one buffer instead of growing one from 512
	// bytes (a tenth of a registration's handling).
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= maxPresizedBody {
		buf.Grow(int(n) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(r.Body)
	body := buf.Bytes()
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return codedErr(http.StatusRequestEntityTooLarge, "Request body too large: the limit is %d bytes (limits.http_max_request_bytes)", mbe.Limit)
		}
		return codedErr(http.StatusBadRequest, "Failed to read request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errEmptyBody
	}
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		// JSON null leaves the value as it is; some api types' own
		// UnmarshalJSON would dereference it instead. The handler
		// then refuses the empty value by what it lacks.
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := position(body, se.Offset)
			return codedErr(http.StatusBadRequest, "Failed to decode request body: malformed JSON at line %d, column %d: %v", line, col, err)
		case errors.As(err, &te):
			field := te.Field
			if field == "" {
				field = "(top level)"
			}
			return codedErr(http.StatusBadRequest, "Failed to decode request body: field %q must be %s, got JSON %s", field, te.Type, te.Value)
		}
		return codedErr(http.StatusBadRequest, "Failed to decode request body: %v", err)
	}
	if at := nullEntry(reflect.ValueOf(out), ""); at != "" {
		return codedErr(http.StatusBadRequest, "Failed to decode request body: %s is null: an entry of a list or map must be an object", at)
	}
	return nil
}

func position(body []byte, offset int64) (int, int) {
	line, col := 1, 1
	for i := int64(0); i < offset && i < int64(len(body)); i++ {
		if body[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// parseQuery reads the common query parameters into q. Bad index, wait,
// stale or per_page values are 400s.
func (h *httpHandler) parseQuery(r *http.Request, q *structs.QueryOptions) error {
	v := r.URL.Query()
	q.Region = v.Get("region")
	if q.Region == "" {
		q.Region = h.agent.config.Region
	}
	q.Namespace = v.Get("namespace")
	if q.Namespace == "" {
		q.Namespace = structs.DefaultNamespace
	}
	if s, ok := v["stale"]; ok {
		switch s[0] {
		case "", "true":
			q.AllowStale = true
		case "false":
			q.AllowStale = false
		default:
			return codedErr(http.StatusBadRequest, "Invalid stale value %q: must be true or false", s[0])
		}
	}
	if s := v.Get("index"); s != "" {
		idx, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return codedErr(http.StatusBadRequest, "Invalid index: %q is not an unsigned integer", s)
		}
		q.MinQueryIndex = idx
	}
	if s := v.Get("wait"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return codedErr(http.StatusBadRequest, "Invalid wait time: %q is not a duration (for example \"5s\" or \"500ms\")", s)
		}
		q.MaxQueryTime = int64(d)
	}
	q.Prefix = v.Get("prefix")
	q.Filter = v.Get("filter")
	if s := v.Get("per_page"); s != "" {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 0 {
			return codedErr(http.StatusBadRequest, "Invalid per_page: %q is not a non-negative integer", s)
		}
		q.PerPage = int32(n)
	}
	q.NextToken = v.Get("next_token")
	if s := v.Get("reverse"); s != "" {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return codedErr(http.StatusBadRequest, "Invalid reverse: %q is not a bool", s)
		}
		q.Reverse = b
	}
	q.AuthToken = authToken(r)
	// A malformed expression is refused before any RPC; selectors are
	// checked where the objects are (on the server, as Nomad does).
	if _, err := structs.NewFilter(q.Filter); err != nil {
		return rpcError(err)
	}
	return nil
}

// parseWrite reads the common write parameters.
func (h *httpHandler) parseWrite(r *http.Request, w *structs.WriteRequest) {
	v := r.URL.Query()
	w.Region = v.Get("region")
	if w.Region == "" {
		w.Region = h.agent.config.Region
	}
	w.Namespace = v.Get("namespace")
	if w.Namespace == "" {
		w.Namespace = structs.DefaultNamespace
	}
	w.IdempotencyToken = v.Get("idempotency_token")
	w.AuthToken = authToken(r)
}

func authToken(r *http.Request) string {
	if t := r.Header.Get("X-Nomad-Token"); t != "" {
		return t
	}
	if t, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(t)
	}
	return ""
}

// setMeta writes a query's index and leader headers.
func setMeta(w http.ResponseWriter, m *structs.QueryMeta) {
	setIndex(w, m.Index)
	w.Header().Set(headerKnownLeader, strconv.FormatBool(m.KnownLeader))
	w.Header().Set(headerLastContact, strconv.FormatInt(m.LastContact/int64(time.Millisecond), 10))
	if m.NextToken != "" {
		w.Header().Set(headerNextToken, m.NextToken)
	}
}

func setIndex(w http.ResponseWriter, index uint64) {
	w.Header().Set(headerIndex, strconv.FormatUint(index, 10))
}

// query serves the common read: it parses r's query parameters into
// opts (the QueryOptions of args), calls the server's RPC method and
// sets the index and leader headers from meta (the QueryMeta of reply).
func (h *httpHandler) query(w http.ResponseWriter, r *http.Request, method string, opts *structs.QueryOptions, args, reply any, meta *structs.QueryMeta) error {
	if err := h.parseQuery(r, opts); err != nil {
		return err
	}
	if err := h.agent.rpc(method, args, reply); err != nil {
		return rpcError(err)
	}
	setMeta(w, meta)
	return nil
}

// write serves the common write: it parses r's write parameters into wr
// (the WriteRequest of args), calls the server's RPC method and sets the
// index header from index (the Index of reply, read after the call).
func (h *httpHandler) write(w http.ResponseWriter, r *http.Request, method string, wr *structs.WriteRequest, args, reply any, index *uint64) error {
	h.parseWrite(r, wr)
	if err := h.agent.rpc(method, args, reply); err != nil {
		return rpcError(err)
	}
	setIndex(w, *index)
	return nil
}

// methodNotAllowed is Nomad's answer to a method an endpoint lacks.
func methodNotAllowed() error { return codedErr(http.StatusMethodNotAllowed, "Invalid method") }

func isWrite(r *http.Request) bool { return r.Method == http.MethodPut || r.Method == http.MethodPost }

// pathID returns the first path segment after prefix, unescaped, and the
// rest of the (escaped) path. Job IDs may hold "/" escaped as %2F.
func pathID(r *http.Request, prefix string) (string, string, error) {
	escaped := strings.TrimPrefix(r.URL.EscapedPath(), prefix)
	id, rest, _ := strings.Cut(escaped, "/")
	unescaped, err := url.PathUnescape(id)
	if err != nil {
		return "", "", codedErr(http.StatusBadRequest, "Invalid ID in path: %v", err)
	}
	if rest != "" {
		rest = "/" + rest
	}
	return unescaped, rest, nil
}

// rpcError gives a coded server error (structs.NewErrRPCCoded: a 400
// that blames the request, a 404 for an unknown object, a 403, ...) its
// status and its message without the code. The code travels in the
// error's text, the only part net/rpc carries, also in process. Any other
// error is returned as it is and answered with a 500: whatever its words,
// a failure the server did not code is the server's.
func rpcError(err error) error {
	if code, msg, ok := structs.CodeFromRPCCodedErr(err); ok {
		return codedErr(code, "%s", msg)
	}
	return err
}
