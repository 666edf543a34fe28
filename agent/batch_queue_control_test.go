package agent

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// Operators hold and top queued jobs over HTTP; bad requests are answered
// with the status and a message naming what was asked.
func TestBatchQueue_ControlOverHTTP(t *testing.T) {
	a, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	gate(t, c)
	for _, id := range []string{"c1", "c2", "c3"} {
		qRegister(t, c, rawJob(id, 50, "1", 32))
	}
	put := func(path string) (int, string) {
		req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+path, nil)
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(body)
	}
	code, _ := put("/v1/queue/job/c3/top")
	must.Eq(t, http.StatusOK, code)
	code, _ = put("/v1/queue/job/c1/hold?namespace=default")
	must.Eq(t, http.StatusOK, code)
	var queued []string
	for _, e := range queueJobs(t, c) {
		if e.Status == structs.BatchQueueStatusQueued {
			queued = append(queued, e.JobID)
		}
	}
	must.Eq(t, []string{"c3", "c1", "c2"}, queued)
	must.Eq(t, "Held", queueEntry(t, c, "c1").Reason)

	code, body := put("/v1/queue/job/c2/pause")
	must.Eq(t, http.StatusBadRequest, code)
	must.StrContains(t, body, `batch queue control "pause" is not allowed`)
	code, body = put("/v1/queue/job/gate/hold")
	must.Eq(t, http.StatusNotFound, code)
	must.StrContains(t, body, `job "gate" in namespace "default" is not waiting in the batch queue`)
	code, _ = put("/v1/queue/job/c1/release")
	must.Eq(t, http.StatusOK, code)
	c1 := queueEntry(t, c, "c1")
	must.Eq(t, "Line", c1.Reason)
	must.Eq(t, "1 job ahead in the line", c1.ReasonDetail)
}

// With ACLs on, controlling the queue takes operator write: a token that
// may write jobs in the namespace is refused, an operator gets through
// to the queue (which answers that the job does not wait there).
func TestBatchQueue_ControlNeedsOperatorWrite(t *testing.T) {
	a, c, _ := aclAgent(t)
	for name, rules := range map[string]string{
		"jobs":     `namespace "default" { policy = "write" }`,
		"operator": `operator { policy = "write" }`,
	} {
		_, err := c.ACLPolicies().Upsert(&api.ACLPolicy{Name: name, Rules: rules}, nil)
		must.NoError(t, err)
	}
	hold := func(policy string) int {
		tok, _, err := c.ACLTokens().Create(&api.ACLToken{Name: policy, Type: "client", Policies: []string{policy}}, nil)
		must.NoError(t, err)
		req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+"/v1/queue/job/x/hold", nil)
		must.NoError(t, err)
		req.Header.Set("X-Nomad-Token", tok.SecretID)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	must.Eq(t, http.StatusForbidden, hold("jobs"))
	must.Eq(t, http.StatusNotFound, hold("operator"))
}
