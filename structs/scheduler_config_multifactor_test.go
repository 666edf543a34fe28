package structs

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
)

// TestBatchQueueMultifactor_Validate: weights below 0, a MaxAge or
// UsageHalfLife of 0 or below with its weight set, and all weights 0 with
// the multifactor order are refused, each naming the field.
func TestBatchQueueMultifactor_Validate(t *testing.T) {
	ok := DefaultBatchQueueMultifactor()
	for _, tc := range []struct {
		name   string
		modify func(*BatchQueueMultifactor)
		order  string
		want   string
	}{
		{"defaults", func(*BatchQueueMultifactor) {}, BatchQueueOrderMultifactor, ""},
		{"negative priority weight", func(m *BatchQueueMultifactor) { m.PriorityWeight = -1 }, BatchQueueOrderMultifactor,
			"BatchQueue.Multifactor.PriorityWeight -1 is not allowed: must be a number of at least 0"},
		{"negative size weight under fifo", func(m *BatchQueueMultifactor) { m.SizeWeight = -0.5 }, BatchQueueOrderFIFO,
			"BatchQueue.Multifactor.SizeWeight -0.5 is not allowed"},
		{"zero max age with age weight", func(m *BatchQueueMultifactor) { m.MaxAge = 0 }, BatchQueueOrderMultifactor,
			"BatchQueue.Multifactor.MaxAge 0s is not allowed: must be more than 0 when AgeWeight is set"},
		{"zero max age without age weight", func(m *BatchQueueMultifactor) { m.MaxAge, m.AgeWeight = 0, 0 }, BatchQueueOrderMultifactor, ""},
		{"negative half-life with fair share weight", func(m *BatchQueueMultifactor) { m.UsageHalfLife = -time.Second }, BatchQueueOrderMultifactor,
			"BatchQueue.Multifactor.UsageHalfLife -1s is not allowed: must be more than 0 when FairShareWeight is set"},
		{"all weights zero", func(m *BatchQueueMultifactor) { *m = BatchQueueMultifactor{} }, BatchQueueOrderMultifactor,
			`BatchQueue.Multifactor weights are all 0, which is not allowed with order "multifactor"`},
		{"all weights zero under fair", func(m *BatchQueueMultifactor) { *m = BatchQueueMultifactor{} }, BatchQueueOrderFair, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := BatchQueueConfig{Order: tc.order, Multifactor: ok}
			c.Canonicalize()
			tc.modify(&c.Multifactor)
			err := c.Validate()
			if tc.want == "" {
				must.NoError(t, err)
				return
			}
			must.ErrorContains(t, err, tc.want)
		})
	}
}
