package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// TestHTTPErrorCodes_CodedProducers drives, through a dev agent's API,
// the producer of each server error the HTTP layer once classified by
// its words (a "not found" suffix, the region and filter prefixes, and
// marks such as "nonexistent namespace" or "has non-terminal"). Each is
// answered with the status its producer codes and with the message
// alone; a producer that lost its code would answer a 500.
func TestHTTPErrorCodes_CodedProducers(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) { c.Client.Enabled = false })
	c := apiClient(t, a)

	_, err := c.Namespaces().Register(&api.Namespace{Name: "prod"}, nil)
	must.NoError(t, err)
	_, _, err = c.Jobs().Register(mockJob("web", 1), &api.WriteOptions{Namespace: "prod"})
	must.NoError(t, err)
	_, err = c.Namespaces().Register(&api.Namespace{Name: "locked", Capabilities: &api.NamespaceCapabilities{DisabledTaskDrivers: []string{"mock_driver"}}}, nil)
	must.NoError(t, err)
	_, err = c.NodePools().Register(&api.NodePool{Name: "gpu"}, nil)
	must.NoError(t, err)
	node := RegisterTestNode(t, a, "gpu-node")
	node.NodePool = "gpu"
	must.NoError(t, a.rpc("Node.Register", &structs.NodeRegisterRequest{Node: node}, &structs.NodeUpdateResponse{}))

	jobBody := func(job *api.Job) string {
		b, err := json.Marshal(api.JobRegisterRequest{Job: job})
		must.NoError(t, err)
		return string(b)
	}
	pooled := mockJob("pooled", 1)
	pooled.NodePool = new("nopool")
	greedy := mockJob("greedy", 1)
	greedy.TaskGroups[0].Tasks[0].Resources.MemoryMaxMB = new(512)
	const missingKey = "00000000-0000-0000-0000-000000000000"

	cases := []struct {
		name, method, path, body string
		code                     int
		// msg is the whole body, or its start when it ends in "...".
		msg string
	}{
		{"no path to region", "GET", "/v1/jobs?region=nowhere", "", http.StatusBadRequest, `No path to region "nowhere"`},
		{"filter on the server", "GET", "/v1/jobs?namespace=prod&filter=" + urlQuery(`Nope == "x"`), "", http.StatusBadRequest, `Invalid filter expression "Nope == \"x\"": ...`},
		{"filter on the agent", "GET", "/v1/namespaces?filter=" + urlQuery(`Nope == "x"`), "", http.StatusBadRequest, `Invalid filter expression "Nope == \"x\"": ...`},
		{"nonexistent namespace", "PUT", "/v1/jobs?namespace=nowhere", jobBody(mockJob("web", 1)), http.StatusBadRequest, `job "web" is in nonexistent namespace "nowhere"`},
		{"nonexistent node pool", "PUT", "/v1/jobs", jobBody(pooled), http.StatusBadRequest, `job "pooled" is in nonexistent node pool "nopool"`},
		{"driver not allowed in namespace", "PUT", "/v1/jobs?namespace=locked", jobBody(mockJob("m", 1)), http.StatusBadRequest, `used task driver "mock_driver" is not allowed in namespace "locked"`},
		{"memory_max not allowed", "PUT", "/v1/jobs", jobBody(greedy), http.StatusBadRequest, `Task group "g", task "t": resources memory_max 512 is not allowed: ...`},
		{"modifying a built-in pool", "PUT", "/v1/node/pools", `{"Name":"default"}`, 400, `modifying node pool "default" is not allowed`},
		{"deleting a built-in pool", "DELETE", "/v1/node/pool/default", "", http.StatusBadRequest, `deleting built-in node pool "default" is not allowed`},
		{"deleting the default namespace", "DELETE", "/v1/namespace/default", "", http.StatusBadRequest, `can not delete default namespace`},
		{"namespace has non-terminal jobs", "DELETE", "/v1/namespace/prod", "", http.StatusBadRequest, `namespace "prod" has non-terminal jobs in regions: [global] (1 jobs: web)`},
		{"pool has nodes", "DELETE", "/v1/node/pool/gpu", "", http.StatusBadRequest, `node pool "gpu" has nodes in regions: [global] (1 nodes)`},
		{"dispatch of a plain job", "PUT", "/v1/job/web/dispatch?namespace=prod", "", http.StatusBadRequest, `Specified job "web" is not a parameterized job`},
		{"unknown namespace", "DELETE", "/v1/namespace/missing", "", http.StatusNotFound, `namespace "missing" not found`},
		// The endpoint does not look first: the refusal comes back from
		// the state store through Raft.
		{"unknown node pool", "DELETE", "/v1/node/pool/missing", "", http.StatusNotFound, `node pool "missing" not found`},
		{"unknown parameterized job", "PUT", "/v1/job/nope/dispatch", "", http.StatusNotFound, `parameterized job "nope" not found`},
		{"unknown job version", "PUT", "/v1/job/web/revert?namespace=prod", `{"JobID":"web","JobVersion":9}`, 404, `job "web" in namespace "prod" at version 9 not found`},
		{"unknown root key", "DELETE", "/v1/operator/keyring/key/" + missingKey, "", http.StatusNotFound, `root key "` + missingKey + `" not found`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := doRaw(t, a, tc.method, tc.path, tc.body)
			body := readBody(t, resp)
			must.Eq(t, tc.code, resp.StatusCode, must.Sprint(body))
			if start, ok := strings.CutSuffix(tc.msg, "..."); ok {
				must.StrHasPrefix(t, start, body)
			} else {
				must.Eq(t, tc.msg, body)
			}
		})
	}
}

func urlQuery(s string) string {
	return strings.NewReplacer(" ", "%20", `"`, "%22", "=", "%3D").Replace(s)
}

// TestHTTPErrorCodes_UncodedIsServerFault: an error without a code is a
// 500 and logged at ERROR, whatever its words; the words "not found" or
// "Permission denied" no longer make a 404 or a 403. A coded one is
// answered with its code and its message alone, also when a handler
// returns it without rpcError.
func TestHTTPErrorCodes_UncodedIsServerFault(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		code   int
		body   string
		logged bool
	}{
		{"uncoded not found", fmt.Errorf("decrypt variable %q: root key %s not found", "a", "k"), http.StatusInternalServerError, `decrypt variable "a": root key k not found`, true},
		{"uncoded permission words", errors.New("Permission denied: by the words alone"), http.StatusInternalServerError, "Permission denied: by the words alone", true},
		{"uncoded region words", errors.New(`No path to region "x"`), http.StatusInternalServerError, `No path to region "x"`, true},
		{"coded 404", structs.NewErrNotFoundf("job %q not found", "web"), http.StatusNotFound, `job "web" not found`, false},
		{"coded 403", structs.ErrPermissionDenied, http.StatusForbidden, "Permission denied", false},
		{"coded after an RPC hop", errors.New(structs.NewBadRequestf("x is not allowed").Error()), http.StatusBadRequest, "x is not allowed", false},
		{"coded, wrapped keeping its code", structs.WrapRPCCodedf(structs.NewErrNotFoundf("not found"), "delete node %q", "n"), http.StatusNotFound, `delete node "n": not found`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, viaRPCError := range []bool{true, false} {
				var logs strings.Builder
				h := &httpHandler{logger: hclog.New(&hclog.LoggerOptions{Output: &logs, Level: hclog.Info})}
				err := tc.err
				if viaRPCError {
					err = rpcError(err)
				}
				rec := httptest.NewRecorder()
				h.writeError(rec, httptest.NewRequest("GET", "/v1/x", nil), err)
				must.Eq(t, tc.code, rec.Code)
				must.Eq(t, tc.body, rec.Body.String())
				must.Eq(t, tc.logged, strings.Contains(logs.String(), "[ERROR]"), must.Sprint(logs.String()))
			}
		})
	}
}
