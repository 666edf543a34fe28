package agent

import (
	"io"
	"net/http"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// A control that would change nothing is refused with a 400 naming the
// job and the state it is in, instead of answering as if it was done.
func TestQueueControl_RefusesWhatChangesNothing(t *testing.T) {
	a, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	gate(t, c)
	qRegister(t, c, rawJob("w1", 50, "1", 32))
	put := func(path string) (int, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+path, nil)
		must.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		must.NoError(t, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		must.NoError(t, err)
		return resp.StatusCode, string(body)
	}

	code, body := put("/v1/queue/job/w1/release")
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, `job "w1" in namespace "default" is not held in the batch queue: it waits queued at position 1; only a held job can be released`, body)

	code, body = put("/v1/queue/job/w1/hold")
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	code, body = put("/v1/queue/job/w1/hold")
	must.Eq(t, http.StatusBadRequest, code)
	must.Eq(t, `job "w1" in namespace "default" is already held in the batch queue at position 1; release it with nomad queue release`, body)
	must.Eq(t, "Held", queueEntry(t, c, "w1").Reason)

	code, body = put("/v1/queue/job/w1/release")
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	must.NotEq(t, "Held", queueEntry(t, c, "w1").Reason)

	// A job that is not in the queue at all, and one already released.
	code, body = put("/v1/queue/job/nope/release")
	must.Eq(t, http.StatusNotFound, code)
	must.StrContains(t, body, `job "nope" in namespace "default" is not waiting in the batch queue`)
	code, body = put("/v1/queue/job/gate/top")
	must.Eq(t, http.StatusNotFound, code)
	must.StrContains(t, body, `job "gate" in namespace "default" is not waiting in the batch queue`)
}

// ?namespace=X lists X's entries only; "*" and no namespace list every
// namespace, as the line is one across them.
func TestQueueJobs_NamespaceFilter(t *testing.T) {
	_, c := queueAgent(t, structs.BatchQueueOrderFIFO, time.Minute)
	_, err := c.Namespaces().Register(&api.Namespace{Name: "etl"}, nil)
	must.NoError(t, err)
	gate(t, c)
	qRegister(t, c, rawJob("d1", 50, "1", 32))
	etl := rawJob("e1", 50, "1", 32)
	etl.Namespace = new("etl")
	qRegister(t, c, etl)

	list := func(params map[string]string) []string {
		t.Helper()
		var out []structs.BatchQueueListEntry
		_, err := c.Raw().Query("/v1/queue/jobs", &out, &api.QueryOptions{Params: params})
		must.NoError(t, err)
		var got []string
		for _, e := range out {
			got = append(got, e.Namespace+"/"+e.JobID)
		}
		sort.Strings(got)
		return got
	}
	all := []string{"default/d1", "default/gate", "default/hog", "etl/e1"}
	got := list(nil)
	// hog may have left the listing once placed; the rest is fixed.
	got = removeHog(got)
	must.Eq(t, removeHog(all), got)
	must.Eq(t, removeHog(all), removeHog(list(map[string]string{"namespace": "*"})))
	must.Eq(t, []string{"etl/e1"}, list(map[string]string{"namespace": "etl"}))
	must.Eq(t, []string{"default/d1", "default/gate"}, removeHog(list(map[string]string{"namespace": "default"})))
	must.Eq(t, []string(nil), list(map[string]string{"namespace": "other"}))
}

func removeHog(ids []string) []string {
	var out []string
	for _, id := range ids {
		if id != "default/hog" {
			out = append(out, id)
		}
	}
	return out
}
