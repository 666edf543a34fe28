package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestSchedulerConfig(t *testing.T) {
	s := testStore(t)
	idx, cfg, err := s.SchedulerConfig()
	must.NoError(t, err)
	must.Eq(t, 0, idx)
	must.Nil(t, cfg)

	// CAS against a config that does not exist yet needs index 0.
	ok, _, err := s.SchedulerCASConfig(3, 7, structs.DefaultSchedulerConfiguration())
	must.NoError(t, err)
	must.False(t, ok)
	ok, _, err = s.SchedulerCASConfig(4, 0, structs.DefaultSchedulerConfiguration())
	must.NoError(t, err)
	must.True(t, ok)

	next := structs.DefaultSchedulerConfiguration()
	next.BatchQueue.Enabled = true
	_, err = s.SchedulerSetConfig(5, next)
	must.NoError(t, err)
	idx, cfg, err = s.SchedulerConfig()
	must.NoError(t, err)
	must.Eq(t, 5, idx)
	must.True(t, cfg.BatchQueue.Enabled)
	must.Eq(t, []uint64{4, 5}, []uint64{cfg.CreateIndex, cfg.ModifyIndex})

	// A stale CAS is refused and writes nothing.
	stale := structs.DefaultSchedulerConfiguration()
	ok, _, err = s.SchedulerCASConfig(6, 4, stale)
	must.NoError(t, err)
	must.False(t, ok)
	idx, cfg, err = s.SchedulerConfig()
	must.NoError(t, err)
	must.Eq(t, 5, idx)
	must.True(t, cfg.BatchQueue.Enabled)

	ok, _, err = s.SchedulerCASConfig(7, 5, stale)
	must.NoError(t, err)
	must.True(t, ok)
	must.Eq(t, map[string]uint64{TableSchedulerConfig: 7}, indexTable(t, s))

	_, err = s.SchedulerSetConfig(8, nil)
	must.ErrorContains(t, err, "config is nil")
}
