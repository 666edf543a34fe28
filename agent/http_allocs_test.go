package agent

import (
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"
)

// What the api suite's Allocations tests read: index 0 for a listing
// before any alloc exists, AllocatedResources only with ?resources=true,
// and a NetworkStatus once the client has reported the alloc.
func TestAllocsHTTP_ListIndexResourcesNetworkStatus(t *testing.T) {
	a := NewTestAgent(t, nil)
	c := apiClient(t, a)

	allocs, qm, err := c.Allocations().List(nil)
	must.NoError(t, err)
	must.Len(t, 0, allocs)
	must.Zero(t, qm.LastIndex)
	_, qm, err = c.Allocations().PrefixList("")
	must.NoError(t, err)
	must.Zero(t, qm.LastIndex)

	job := mockJob("res", 1)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1h"}
	register(t, c, job)

	cases := []struct {
		params map[string]string
		want   bool
	}{
		{nil, false},
		{map[string]string{"resources": "false"}, false},
		{map[string]string{"resources": "true"}, true},
	}
	for _, tc := range cases {
		allocs, qm, err := c.Allocations().List(&api.QueryOptions{Params: tc.params})
		must.NoError(t, err)
		must.Positive(t, qm.LastIndex)
		must.Len(t, 1, allocs)
		must.Eq(t, tc.want, allocs[0].AllocatedResources != nil, must.Sprint(tc.params))
		if tc.want {
			must.Eq(t, int64(100), allocs[0].AllocatedResources.Tasks["t"].Cpu.CpuShares)
		}
	}
	_, err = c.Raw().Query("/v1/allocations?resources=maybe", nil, nil)
	must.ErrorContains(t, err, "resources must be a bool")

	must.Wait(t, wait.InitialSuccess(wait.ErrorFunc(func() error {
		allocs, _, err := c.Allocations().List(nil)
		if err != nil {
			return err
		}
		al, _, err := c.Allocations().Info(allocs[0].ID, nil)
		if err != nil {
			return err
		}
		if al.ClientStatus != "running" || al.NetworkStatus == nil {
			return fmt.Errorf("alloc %s, network status %v", al.ClientStatus, al.NetworkStatus)
		}
		return nil
	}), wait.Timeout(10*time.Second), wait.Gap(50*time.Millisecond)))

	// The mock driver runs nothing inside its tasks: exec says so.
	allocs, _, err = c.Allocations().List(nil)
	must.NoError(t, err)
	_, _, _, err = wsExec(t, a.HTTPAddr(), allocs[0].ID, "t", false, "", "true")
	must.ErrorContains(t, err, `exec is not supported by this task's driver: driver "mock_driver"`)
}
