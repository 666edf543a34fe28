package nomad

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/nomad/evalbroker"
)

// TestWorker_IdleStopsAtOnce: an idle worker waits on the broker with its
// context, so it stops the moment the context ends (leadership lost, the
// pool reconfigured) instead of at the end of a half-second poll, and
// it does not wake while idle.
func TestWorker_IdleStopsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		broker, err := evalbroker.New(time.Minute, time.Second, time.Second, 3)
		must.NoError(t, err)
		broker.SetEnabled(true)
		s := &Server{config: &Config{}, logger: hclog.NewNullLogger(), evalBroker: broker}
		w := s.newWorker([]string{"service"})

		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			w.run(ctx)
		}()
		synctest.Wait()
		must.Eq(t, WorkloadWaitingToDequeue, w.Workload())

		start := time.Now()
		cancel()
		synctest.Wait()
		must.Eq(t, WorkloadStopped, w.Workload(), must.Sprint("the worker is still waiting for its poll to end"))
		must.Eq(t, time.Duration(0), time.Since(start))
		<-done
	})
}
