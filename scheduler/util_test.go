package scheduler

import (
	"testing"

	"github.com/nomadq/nomadq/structs"
	"github.com/shoenig/test/must"
)

// memory_max is the client's hard memory limit only under memory
// oversubscription; without it the task is held to memory.
func TestAllocatedResources_MemoryMax(t *testing.T) {
	tg := &structs.TaskGroup{Name: "g", Tasks: []*structs.Task{{Name: "t", Resources: &structs.Resources{CPU: 100, MemoryMB: 64, MemoryMaxMB: 256}}}}
	cases := []struct {
		name          string
		oversubscribe bool
		wantMax       int64
	}{
		{"oversubscription off", false, 0},
		{"oversubscription on", true, 256},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ar, _, _ := allocatedResources(tg, tc.oversubscribe, nil)
			must.Eq(t, 64, ar.Tasks["t"].Memory.MemoryMB)
			must.Eq(t, tc.wantMax, ar.Tasks["t"].Memory.MemoryMaxMB)
		})
	}
}
