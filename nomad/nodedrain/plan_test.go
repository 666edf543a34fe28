package nodedrain

import (
	"sort"
	"testing"
	"time"

	memdb "github.com/hashicorp/go-memdb"
	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func TestPlanDrains(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	deadline := func(d time.Duration) *structs.DrainStrategy {
		return &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: d}, StartedAt: now.Add(-time.Minute), ForceDeadline: now.Add(-time.Minute).Add(d)}
	}
	longAgo := now.Add(-time.Hour)

	cases := []struct {
		name string
		// setup returns the allocation IDs expected to be marked, the
		// expected completions and the expected wake time.
		setup func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time)
		drain *structs.DrainStrategy
	}{
		{
			name:  "a node with nothing on it completes at once",
			drain: deadline(time.Hour),
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				return nil, map[string]bool{fx.draining.ID: false}, time.Time{}
			},
		},
		{
			name:  "batch allocations run until the deadline",
			drain: deadline(time.Hour),
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				job := fx.job(t, "batch", structs.JobTypeBatch, 1, 0)
				fx.running(t, job, fx.draining, 0, longAgo)
				return nil, map[string]bool{}, now.Add(59 * time.Minute)
			},
		},
		{
			name:  "at the deadline everything left is migrated and the drain completes",
			drain: deadline(30 * time.Second),
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				batch := fx.job(t, "batch", structs.JobTypeBatch, 1, 0)
				svc := fx.job(t, "svc", structs.JobTypeService, 1, 1)
				sys := fx.job(t, "sys", structs.JobTypeSystem, 1, 0)
				a := fx.running(t, batch, fx.draining, 0, longAgo)
				b := fx.running(t, svc, fx.draining, 0, longAgo)
				c := fx.running(t, sys, fx.draining, 0, longAgo)
				return []string{a.ID, b.ID, c.ID}, map[string]bool{fx.draining.ID: true}, time.Time{}
			},
		},
		{
			name:  "a forced drain has passed its deadline",
			drain: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -time.Second}, StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				a := fx.running(t, fx.job(t, "batch", structs.JobTypeBatch, 1, 0), fx.draining, 0, longAgo)
				return []string{a.ID}, map[string]bool{fx.draining.ID: true}, time.Time{}
			},
		},
		{
			name:  "ignore-system leaves system allocations at the deadline",
			drain: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{Deadline: -time.Second, IgnoreSystemJobs: true}, StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				return nil, map[string]bool{fx.draining.ID: true}, time.Time{}
			},
		},
		{
			name:  "ignore-system lets a node holding only system allocations complete",
			drain: &structs.DrainStrategy{DrainSpec: structs.DrainSpec{IgnoreSystemJobs: true}, StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				return nil, map[string]bool{fx.draining.ID: false}, time.Time{}
			},
		},
		{
			name:  "system allocations leave once nothing else runs",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				sys := fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				done := fx.running(t, fx.job(t, "batch", structs.JobTypeBatch, 1, 0), fx.draining, 0, longAgo)
				fx.finish(t, done)
				return []string{sys.ID}, map[string]bool{}, time.Time{}
			},
		},
		{
			name:  "system allocations wait while other work runs",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				fx.running(t, fx.job(t, "sys", structs.JobTypeSystem, 1, 0), fx.draining, 0, longAgo)
				fx.running(t, fx.job(t, "batch", structs.JobTypeBatch, 1, 0), fx.draining, 0, longAgo)
				return nil, map[string]bool{}, time.Time{}
			},
		},
		{
			name:  "service allocations move max_parallel at a time",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				svc := fx.job(t, "svc", structs.JobTypeService, 3, 2)
				var as []*structs.Allocation
				for i := range uint(3) {
					as = append(as, fx.running(t, svc, fx.draining, i, longAgo))
				}
				ids := allocIDs(as)
				sort.Strings(ids)
				return ids[:2], map[string]bool{}, time.Time{}
			},
		},
		{
			name:  "a replacement counts as healthy only after min_healthy_time",
			drain: &structs.DrainStrategy{StartedAt: now},
			setup: func(t *testing.T, fx *drainFixture) ([]string, map[string]bool, time.Time) {
				svc := fx.job(t, "svc", structs.JobTypeService, 2, 1)
				moving := fx.running(t, svc, fx.draining, 0, longAgo)
				must.NoError(t, fx.MarkMigrate(&structs.AllocUpdateDesiredTransitionRequest{
					Allocs: map[string]*structs.DesiredTransition{moving.ID: {Migrate: new(true)}},
				}))
				fx.running(t, svc, fx.draining, 1, longAgo)
				fx.running(t, svc, fx.other, 0, now.Add(-3*time.Second))
				// min_healthy_time is 10s: the replacement is healthy in 7s.
				return nil, map[string]bool{}, now.Add(7 * time.Second)
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fx := newDrainFixture(t, c.drain)
			wantMigrate, wantComplete, wantWake := c.setup(t, fx)
			p, err := planDrains(memdb.NewWatchSet(), fx.st, now)
			must.NoError(t, err)
			got := allocIDs(p.migrate)
			sort.Strings(got)
			wantMigrate = append([]string{}, wantMigrate...)
			sort.Strings(wantMigrate)
			must.Eq(t, wantMigrate, got)
			must.Eq(t, wantComplete, p.complete)
			must.True(t, wantWake.Equal(p.wake), must.Sprintf("wake %v, want %v", p.wake, wantWake))
		})
	}
}
