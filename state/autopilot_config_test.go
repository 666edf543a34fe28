package state

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestAutopilotConfig_CAS(t *testing.T) {
	s := testStore(t)
	idx, cfg, err := s.AutopilotConfig(nil)
	must.NoError(t, err)
	must.Nil(t, cfg)
	must.Eq(t, 0, idx)

	steps := []struct {
		name      string
		index     uint64
		cas       bool
		casIndex  uint64
		threshold time.Duration
		applied   bool
		wantIndex uint64
		want      time.Duration
	}{
		{"cas against a config that is not there yet with a nonzero index loses", 3, true, 7, time.Second, false, 0, 0},
		{"cas 0 writes the first config", 4, true, 0, time.Second, true, 4, time.Second},
		{"a stale cas loses and keeps the stored config", 5, true, 3, 2 * time.Second, false, 4, time.Second},
		{"the current index wins", 6, true, 4, 3 * time.Second, true, 6, 3 * time.Second},
		{"a plain set always writes", 7, false, 0, 4 * time.Second, true, 7, 4 * time.Second},
	}
	for _, step := range steps {
		c := structs.DefaultAutopilotConfig()
		c.LastContactThreshold = step.threshold
		applied, err := s.AutopilotSetConfig(step.index, c, step.cas, step.casIndex)
		must.NoError(t, err, must.Sprint(step.name))
		must.Eq(t, step.applied, applied, must.Sprint(step.name))
		idx, got, err := s.AutopilotConfig(nil)
		must.NoError(t, err)
		must.Eq(t, step.wantIndex, idx, must.Sprint(step.name))
		if step.wantIndex == 0 {
			must.Nil(t, got, must.Sprint(step.name))
			continue
		}
		must.Eq(t, step.want, got.LastContactThreshold, must.Sprint(step.name))
		must.Eq(t, 4, got.CreateIndex, must.Sprint(step.name))
	}
}
