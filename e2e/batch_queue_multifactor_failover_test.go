package e2e

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"
)

// usageRow is the part of a GET /v1/queue/usage row this test reads.
type usageRow struct {
	Namespace string
	Usage     float64
}

// Three servers and a client; the queue is in the multifactor order.
// Namespace qa ran jobs to completion, qb none; both queue jobs behind a
// filler. After the leader is killed, the new leader's decayed usage of
// each namespace is within 5% of the old leader's and the line keeps its
// order: usage is computed from the allocations in Raft state.
func TestFailover_MultifactorUsageAndOrder(t *testing.T) {
	longTests(t)
	servers, leader, c, nodeMem := queueFailoverCluster(t)
	body := map[string]any{"BatchQueue": map[string]any{"Enabled": true, "Order": "multifactor", "ConcurrentPlacements": 1,
		"Multifactor": map[string]any{"PriorityWeight": 1000, "FairShareWeight": 2000, "UsageHalfLife": "1h"}}}
	_, err := c.Raw().Write("/v1/operator/scheduler/configuration", body, nil, nil)
	must.NoError(t, err)
	for _, ns := range []string{"qa", "qb"} {
		_, err := c.Namespaces().Register(&api.Namespace{Name: ns}, nil)
		must.NoError(t, err)
	}

	// qa runs three jobs of a tenth of the node to completion.
	for i := range 3 {
		_, _, err := c.Jobs().Register(sizedJob("qa", fmt.Sprintf("past-%d", i), nodeMem/10, 0), nil)
		must.NoError(t, err)
		// sizedJob sleeps 120 s: end each at once.
	}
	waitFor(t, 60*time.Second, func() error {
		allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: "qa"})
		if err != nil || len(allocs) != 3 {
			return fmt.Errorf("qa's jobs not placed yet: %v", err)
		}
		for _, al := range allocs {
			if al.ClientStatus != "running" {
				return fmt.Errorf("alloc %s is %s", al.ID, al.ClientStatus)
			}
		}
		return nil
	})
	time.Sleep(2 * time.Second) // let them run a while: that is the usage under test
	for i := range 3 {
		_, _, err := c.Jobs().Deregister(fmt.Sprintf("past-%d", i), false, &api.WriteOptions{Namespace: "qa"})
		must.NoError(t, err)
	}
	waitFor(t, 60*time.Second, func() error {
		allocs, _, err := c.Allocations().List(&api.QueryOptions{Namespace: "qa"})
		if err != nil {
			return err
		}
		for _, al := range allocs {
			if al.ClientStatus == "running" || al.ClientStatus == "pending" {
				return fmt.Errorf("alloc %s is %s", al.ID, al.ClientStatus)
			}
		}
		return nil
	})

	// A filler holds 90% of the node; both namespaces queue behind it.
	_, _, err = c.Jobs().Register(sizedJob("default", "filler", nodeMem*9/10, 0), nil)
	must.NoError(t, err)
	waitFor(t, 30*time.Second, func() error {
		allocs, _, err := c.Jobs().Allocations("filler", true, nil)
		if err != nil || len(allocs) == 0 {
			return fmt.Errorf("filler not placed yet: %v", err)
		}
		return nil
	})
	// qa-0 takes the queue's one slot (it cannot place beside the
	// filler); the rest queue, submitted interleaved so that the order
	// by submission is not the order under test.
	_, _, err = c.Jobs().Register(sizedJob("qa", "qa-0", nodeMem/5, 0), nil)
	must.NoError(t, err)
	waitFor(t, 30*time.Second, func() error {
		var rows []queueRow
		if _, err := c.Raw().Query("/v1/queue/jobs", &rows, nil); err != nil {
			return err
		}
		if len(rows) != 1 || rows[0].Status != "placing" {
			return fmt.Errorf("qa-0 not released yet: %+v", rows)
		}
		return nil
	})
	for _, id := range []string{"qa-1", "qb-0", "qa-2", "qb-1", "qb-2"} {
		_, _, err := c.Jobs().Register(sizedJob(id[:2], id, nodeMem/5, 0), nil)
		must.NoError(t, err)
	}
	usage := func(a *agentProc) (map[string]float64, error) {
		var rows []usageRow
		if _, err := a.api(t).Raw().Query("/v1/queue/usage", &rows, nil); err != nil {
			return nil, err
		}
		out := map[string]float64{}
		for _, r := range rows {
			out[r.Namespace] = r.Usage
		}
		return out, nil
	}
	queued := func(a *agentProc) ([]string, error) {
		var rows []queueRow
		if _, err := a.api(t).Raw().Query("/v1/queue/jobs", &rows, nil); err != nil {
			return nil, err
		}
		var ids []string
		for _, r := range rows {
			if r.Status == "queued" {
				ids = append(ids, r.Namespace+"/"+r.JobID)
			}
		}
		return ids, nil
	}
	var before []string
	waitFor(t, 30*time.Second, func() error {
		ids, err := queued(leader)
		if err != nil || len(ids) != 5 {
			return fmt.Errorf("want 5 queued behind the filler, got %v (%v)", ids, err)
		}
		before = ids
		return nil
	})
	// qb, which used nothing, goes first.
	must.Eq(t, []string{"qb/qb-0", "qb/qb-1", "qb/qb-2", "qa/qa-1", "qa/qa-2"}, before)
	usedBefore, err := usage(leader)
	must.NoError(t, err)
	must.Positive(t, usedBefore["qa"])
	t.Logf("before the failover: line %v, usage %v", before, usedBefore)

	newLeader := failoverKeeps(t, servers, leader, before, queued)
	usedAfter, err := usage(newLeader)
	must.NoError(t, err)
	t.Logf("after the failover: usage %v", usedAfter)
	// qa's runs ended: its usage only decays, by far less than 5% in the
	// seconds of an election with a one-hour half-life.
	must.Less(t, 0.05, math.Abs(usedAfter["qa"]-usedBefore["qa"])/usedBefore["qa"])
	must.Eq(t, usedBefore["qb"], usedAfter["qb"])
	// The filler still runs: default's usage only grows.
	must.GreaterEq(t, usedBefore["default"], usedAfter["default"])
}
