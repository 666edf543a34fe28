package agent

import (
	"net/http"
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestOperatorScheduler_Multifactor: the multifactor order's settings
// are stored and read back; a negative weight, a zero MaxAge with an age
// weight and all weights 0 are 400s naming the field, and change nothing.
func TestOperatorScheduler_Multifactor(t *testing.T) {
	a := NewTestAgent(t, nil)
	const path = "/v1/operator/scheduler/configuration"
	code, body := aclCall(t, a, http.MethodPut, path, "", `{"BatchQueue": {"Enabled": true, "Order": "multifactor",
		"Multifactor": {"PriorityWeight": 1000, "AgeWeight": 2000, "MaxAge": "4s", "UsageHalfLife": 3600000000000}}}`)
	must.Eq(t, http.StatusOK, code, must.Sprint(body))
	stored := storedSchedulerConfig(t, a)
	bq := stored["BatchQueue"].(map[string]any)
	must.Eq[any](t, "multifactor", bq["Order"])
	must.Eq[any](t, true, bq["Backfill"])
	must.Eq[any](t, map[string]any{"PriorityWeight": float64(1000), "AgeWeight": float64(2000), "FairShareWeight": float64(0),
		"SizeWeight": float64(0), "MaxAge": float64(4 * time.Second), "UsageHalfLife": float64(time.Hour)}, bq["Multifactor"])

	for _, tc := range []struct{ name, body, msg string }{
		{"negative priority weight", `{"BatchQueue": {"Order": "multifactor", "Multifactor": {"PriorityWeight": -5}}}`,
			"BatchQueue.Multifactor.PriorityWeight -5 is not allowed: must be a number of at least 0"},
		{"zero max age", `{"BatchQueue": {"Order": "multifactor", "Multifactor": {"AgeWeight": 1, "MaxAge": 0}}}`,
			"BatchQueue.Multifactor.MaxAge 0s is not allowed: must be more than 0 when AgeWeight is set"},
		{"zero half-life", `{"BatchQueue": {"Order": "multifactor", "Multifactor": {"FairShareWeight": 1, "UsageHalfLife": "0s"}}}`,
			"BatchQueue.Multifactor.UsageHalfLife 0s is not allowed: must be more than 0 when FairShareWeight is set"},
		{"all weights zero", `{"BatchQueue": {"Order": "multifactor", "Multifactor": {}}}`,
			"BatchQueue.Multifactor weights are all 0"},
		{"bad duration", `{"BatchQueue": {"Order": "multifactor", "Multifactor": {"AgeWeight": 1, "MaxAge": "soon"}}}`,
			`BatchQueue.Multifactor.MaxAge "soon" is not a duration`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := aclCall(t, a, http.MethodPut, path, "", tc.body)
			must.Eq(t, http.StatusBadRequest, code, must.Sprint(body))
			must.StrContains(t, body, tc.msg)
			must.Eq(t, stored, storedSchedulerConfig(t, a), must.Sprint("a refused write must change nothing"))
		})
	}
}
