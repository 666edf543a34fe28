package agent

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// A forced garbage collection (PUT /v1/system/gc) deletes a namespace's
// finished batch allocs but not their usage: GET /v1/queue/usage reads
// the same within 1% before and after, and a reset after the collection
// zeroes it.
func TestBatchQueue_UsageSurvivesGC(t *testing.T) {
	a, c := multifactorAgent(t, structs.BatchQueueMultifactor{FairShareWeight: 1000, UsageHalfLife: 24 * time.Hour})
	_, err := c.Namespaces().Register(&api.Namespace{Name: "qa"}, nil)
	must.NoError(t, err)
	tenth := nodeMemory(t, c) / 10
	for i := range 3 {
		qRegister(t, c, inNamespace(rawJob(fmt.Sprintf("past-%d", i), 50, "1", tenth), "qa"))
	}
	qaAllocs := func() []*api.AllocationListStub {
		allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: "qa"})
		must.NoError(t, err)
		return allocs
	}
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool {
		allocs := qaAllocs()
		if len(allocs) < 3 {
			return false
		}
		for _, al := range allocs {
			if al.ClientStatus != api.AllocClientStatusComplete {
				return false
			}
		}
		return true
	}), wait.Timeout(60*time.Second), wait.Gap(100*time.Millisecond)))
	before := queueUsage(t, c)["qa"].Usage
	must.Positive(t, before)

	must.NoError(t, c.System().GarbageCollect())
	must.Wait(t, wait.InitialSuccess(wait.BoolFunc(func() bool { return len(qaAllocs()) == 0 }),
		wait.Timeout(20*time.Second), wait.Gap(50*time.Millisecond)))
	after := queueUsage(t, c)["qa"].Usage
	must.True(t, math.Abs(after-before) <= before/100,
		must.Sprintf("qa's usage %v before the collection, %v after", before, after))

	req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+"/v1/queue/usage/reset?namespace=qa", nil)
	must.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	must.NoError(t, err)
	resp.Body.Close()
	must.Eq(t, http.StatusOK, resp.StatusCode)
	must.Eq(t, 0, queueUsage(t, c)["qa"].Usage)
}
