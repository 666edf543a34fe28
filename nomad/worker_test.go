package nomad

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestWorker_SubmitPlanEndsWithItsContext: a worker whose plan no applier
// will ever answer (the applier returned when leadership ended) must give
// up when its context does. Before, it waited forever, which kept the
// worker pool and so revokeLeadership and Server.Shutdown from returning.
func TestWorker_SubmitPlanEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broker, err := NewEvalBroker(time.Minute, time.Second, time.Second, 3)
		must.NoError(t, err)
		q := NewPlanQueue()
		q.SetEnabled(true) // enabled, but no applier takes plans
		s := &Server{config: &Config{}, logger: hclog.NewNullLogger(), evalBroker: broker, planQueue: q}

		ctx, cancel := context.WithCancel(context.Background())
		w := s.newWorker(nil)
		w.ctx = ctx
		var done bool
		var submitErr error
		go func() {
			_, _, submitErr = w.SubmitPlan(&structs.Plan{EvalID: "eval", Priority: 50})
			done = true
		}()
		synctest.Wait()
		must.Eq(t, 1, q.Stats().Depth, must.Sprint("the plan is queued"))
		must.False(t, done, must.Sprint("SubmitPlan returned before its context ended"))

		cancel()
		synctest.Wait()
		must.True(t, done, must.Sprint("SubmitPlan still waiting after its context ended"))
		must.True(t, errors.Is(submitErr, context.Canceled), must.Sprintf("got %v", submitErr))
	})
}
