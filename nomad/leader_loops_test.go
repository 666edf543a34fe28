package nomad

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/evalbroker"
	"github.com/nomadq/nomadq/structs"
)

// TestFailedDelivery_NamesConfiguredLimit checks that an eval failed by the
// broker names the delivery limit the server runs with, not the default.
func TestFailedDelivery_NamesConfiguredLimit(t *testing.T) {
	now := time.Unix(1700000000, 0)
	for _, limit := range []int{1, evalbroker.DefaultDeliveryLimit, 7} {
		eval := &structs.Evaluation{ID: structs.GenerateUUID(), Namespace: "default", Priority: 60,
			Type: structs.JobTypeBatch, JobID: "j", Status: structs.EvalStatusPending}
		failed, followup := failedDelivery(eval, limit, now)
		must.Eq(t, structs.EvalStatusFailed, failed.Status)
		must.Eq(t, fmt.Sprintf("evaluation reached delivery limit (%d)", limit), failed.StatusDescription)
		must.Eq(t, structs.EvalStatusPending, eval.Status) // the broker's copy is untouched
		must.Eq(t, followup.ID, failed.NextEval)
		must.Eq(t, eval.ID, followup.PreviousEval)
		must.Eq(t, structs.EvalTriggerFailedFollowUp, followup.TriggeredBy)
		must.Eq(t, time.Minute, followup.Wait)
		must.Eq(t, now.UnixNano(), followup.CreateTime)
	}
}
