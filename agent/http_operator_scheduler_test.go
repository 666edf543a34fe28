package agent

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/agent/config"
	"github.com/nomadq/nomadq/structs"
)

// storedSchedulerConfig reads the scheduler configuration as the wire
// shows it.
func storedSchedulerConfig(t *testing.T, a *Agent) map[string]any {
	t.Helper()
	code, body := aclCall(t, a, http.MethodGet, "/v1/operator/scheduler/configuration", "", "")
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	var out struct{ SchedulerConfig map[string]any }
	must.NoError(t, json.Unmarshal([]byte(body), &out))
	return out.SchedulerConfig
}

// TestOperatorScheduler_SetConfigRefusesInsteadOfCoercing: a scheduler
// configuration write with a null body or an explicit value out of range
// is a plain-text 400 naming the field, the value and what is allowed,
// and changes nothing; it is never stored as some other value. A body
// without BatchQueue (the official client's) keeps the stored batch
// queue, and {} means Nomad's defaults.
func TestOperatorScheduler_SetConfigRefusesInsteadOfCoercing(t *testing.T) {
	a := NewTestAgent(t, func(c *config.Config) {
		c.Server.DefaultSchedulerConfig.BatchQueue = structs.BatchQueueConfig{
			Enabled: true, Order: structs.BatchQueueOrderPriority, ConcurrentPlacements: 3,
			WorkloadTimeout: 2 * time.Minute, Backfill: true,
		}
	})
	before := storedSchedulerConfig(t, a)
	must.Eq[any](t, float64(3), before["BatchQueue"].(map[string]any)["ConcurrentPlacements"])

	const path = "/v1/operator/scheduler/configuration"
	for _, tc := range []struct{ name, body, msg string }{
		{"null body", `null`, "a null body is not allowed: send a JSON object ({} for the defaults)"},
		{"zero placements", `{"BatchQueue": {"ConcurrentPlacements": 0}}`, "BatchQueue.ConcurrentPlacements 0 is not allowed: must be at least 1"},
		{"negative placements", `{"BatchQueue": {"ConcurrentPlacements": -2}}`, "BatchQueue.ConcurrentPlacements -2 is not allowed: must be at least 1"},
		{"zero timeout", `{"BatchQueue": {"WorkloadTimeout": 0}}`, "BatchQueue.WorkloadTimeout 0s is not allowed: must be more than 0"},
		{"zero timeout string", `{"BatchQueue": {"WorkloadTimeout": "0s"}}`, "BatchQueue.WorkloadTimeout 0s is not allowed: must be more than 0"},
		{"negative timeout", `{"BatchQueue": {"WorkloadTimeout": -1000000000}}`, "BatchQueue.WorkloadTimeout -1s is not allowed: must be more than 0"},
		{"empty order", `{"BatchQueue": {"Order": ""}}`, `BatchQueue.Order "" is not allowed: must be "fifo", "priority", "fair" or "multifactor"`},
		{"unknown order", `{"BatchQueue": {"Order": "lifo"}}`, `BatchQueue.Order "lifo" is not allowed: must be "fifo", "priority", "fair" or "multifactor"`},
		{"unknown algorithm", `{"SchedulerAlgorithm": "random"}`, `SchedulerAlgorithm "random" is not allowed: must be "binpack" or "spread"`},
		{"valid beside invalid", `{"SchedulerAlgorithm": "spread", "BatchQueue": {"Enabled": false, "ConcurrentPlacements": 0}}`, "BatchQueue.ConcurrentPlacements 0 is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPut, a.HTTPAddr()+path, strings.NewReader(tc.body))
			must.NoError(t, err)
			resp, err := http.DefaultClient.Do(req)
			must.NoError(t, err)
			body := readBody(t, resp)
			resp.Body.Close()
			must.Eq(t, http.StatusBadRequest, resp.StatusCode, must.Sprint(body))
			must.StrHasPrefix(t, "text/plain", resp.Header.Get("Content-Type"))
			must.StrContains(t, body, "Invalid scheduler configuration: ")
			must.StrContains(t, body, tc.msg)
			must.Eq(t, before, storedSchedulerConfig(t, a), must.Sprint("a refused write must change nothing"))
		})
	}

	// The official client sends no BatchQueue: the stored one stays.
	c := apiClient(t, a)
	cfg, _, err := c.Operator().SchedulerGetConfiguration(nil)
	must.NoError(t, err)
	cfg.SchedulerConfig.SchedulerAlgorithm = api.SchedulerAlgorithmSpread
	upd, _, err := c.Operator().SchedulerSetConfiguration(cfg.SchedulerConfig, nil)
	must.NoError(t, err)
	must.True(t, upd.Updated)
	after := storedSchedulerConfig(t, a)
	must.Eq[any](t, "spread", after["SchedulerAlgorithm"])
	must.Eq(t, before["BatchQueue"], after["BatchQueue"])

	// {} is Nomad's defaults for every field it names; the batch queue,
	// absent, stays.
	code, body := aclCall(t, a, http.MethodPut, path, "", `{}`)
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	after = storedSchedulerConfig(t, a)
	must.Eq[any](t, "binpack", after["SchedulerAlgorithm"])
	must.Eq[any](t, map[string]any{"SystemSchedulerEnabled": false, "SysBatchSchedulerEnabled": false,
		"BatchSchedulerEnabled": false, "ServiceSchedulerEnabled": false}, after["PreemptionConfig"])
	must.Eq(t, before["BatchQueue"], after["BatchQueue"])

	// A field sent as null is absent: it takes its default.
	code, body = aclCall(t, a, http.MethodPut, path, "", `{"BatchQueue": {"Enabled": true, "Order": null, "ConcurrentPlacements": null, "WorkloadTimeout": null}}`)
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	must.Eq[any](t, map[string]any{"Enabled": true, "Order": "fifo", "ConcurrentPlacements": float64(1),
		"WorkloadTimeout": float64(5 * time.Minute), "Backfill": false, "Multifactor": map[string]any{
			"PriorityWeight": float64(1000), "AgeWeight": float64(1000), "FairShareWeight": float64(1000), "SizeWeight": float64(0),
			"MaxAge": float64(structs.DefaultBatchQueueMaxAge), "UsageHalfLife": float64(structs.DefaultBatchQueueUsageHalfLife)}},
		storedSchedulerConfig(t, a)["BatchQueue"])
}
