package config

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// TestParseConfig_BatchQueueMultifactor: the seed block's multifactor
// block sets the weights and durations; a weight it leaves out is 0, and
// without the block the defaults stay.
func TestParseConfig_BatchQueueMultifactor(t *testing.T) {
	cfg := Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte(`data_dir = "data"
server {
  enabled = true
  default_scheduler_config {
    batch_queue {
      order = "multifactor"
      multifactor {
        priority_weight = 1000
        age_weight      = 2000.5
        max_age         = "4s"
      }
    }
  }
}
`), nil))
	bq := cfg.Server.DefaultSchedulerConfig.BatchQueue
	must.Eq(t, structs.BatchQueueOrderMultifactor, bq.Order)
	must.True(t, bq.Backfill)
	must.Eq(t, structs.BatchQueueMultifactor{PriorityWeight: 1000, AgeWeight: 2000.5, MaxAge: 4 * time.Second,
		UsageHalfLife: structs.DefaultBatchQueueUsageHalfLife}, bq.Multifactor)
	must.NoError(t, cfg.Validate())

	cfg = Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte("server {\n default_scheduler_config {\n  batch_queue { order = \"multifactor\" }\n }\n}\n"), nil))
	must.Eq(t, structs.DefaultBatchQueueMultifactor(), cfg.Server.DefaultSchedulerConfig.BatchQueue.Multifactor)

	cfg = Default()
	must.NoError(t, Parse(cfg, "x.hcl", []byte("server {\n enabled = true\n default_scheduler_config {\n  batch_queue {\n order = \"multifactor\"\n multifactor { age_weight = -1 }\n }\n }\n}\n"), nil))
	must.ErrorContains(t, cfg.Validate(), "BatchQueue.Multifactor.AgeWeight -1 is not allowed")
	must.ErrorContains(t, Parse(Default(), "x.hcl", []byte("server {\n default_scheduler_config {\n  batch_queue {\n multifactor { age_weight = \"lots\" }\n }\n }\n}\n"), nil),
		"server.default_scheduler_config.batch_queue.multifactor.age_weight must be a number")
}
