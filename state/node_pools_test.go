package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func poolNames(t *testing.T, s *StateStore, prefix string) []string {
	t.Helper()
	list, err := s.NodePoolsByNamePrefix(nil, prefix)
	must.NoError(t, err)
	var names []string
	for _, p := range list {
		names = append(names, p.Name)
	}
	return names
}

func TestNodePools_BuiltinAndCRUD(t *testing.T) {
	s := testStore(t)
	must.Eq(t, []string{"all", "default"}, poolNames(t, s, ""))

	must.NoError(t, s.UpsertNodePools(5, []*structs.NodePool{{Name: "dev-1"}, {Name: "prod"}}))
	must.NoError(t, s.UpsertNodePools(6, []*structs.NodePool{{Name: "dev-1", Description: "changed"}}))
	must.Eq(t, []string{"default", "dev-1"}, poolNames(t, s, "d"))
	got, err := s.NodePoolByName(nil, "dev-1")
	must.NoError(t, err)
	must.Eq(t, "changed", got.Description)
	must.Eq(t, 5, got.CreateIndex)
	must.Eq(t, 6, got.ModifyIndex)

	must.NoError(t, s.DeleteNodePools(7, []string{"dev-1"}))
	must.Eq(t, []string{"all", "default", "prod"}, poolNames(t, s, ""))
}

func TestNodePools_NodeCreatesItsPool(t *testing.T) {
	s := testStore(t)
	node := mockNode()
	node.NodePool = "gpu"
	must.NoError(t, s.UpsertNode(3, node))
	pool, err := s.NodePoolByName(nil, "gpu")
	must.NoError(t, err)
	must.NotNil(t, pool)
	must.Eq(t, structs.DefaultNodeIdentityTTL, pool.NodeIdentityTTL)
	nodes, err := s.NodesByNodePool(nil, "gpu")
	must.NoError(t, err)
	must.SliceLen(t, 1, nodes)
}

func TestNodePools_Refusals(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, s *StateStore)
		write   func(s *StateStore) error
		wantErr string
	}{
		{
			name: "change built-in",
			write: func(s *StateStore) error {
				return s.UpsertNodePools(12, []*structs.NodePool{{Name: "all", Description: "x"}})
			},
			wantErr: `modifying node pool "all" is not allowed`,
		},
		{
			name:    "delete missing",
			write:   func(s *StateStore) error { return s.DeleteNodePools(12, []string{"gpu", "missing"}) },
			wantErr: `node pool "missing" not found`,
		},
		{
			name:    "delete built-in",
			write:   func(s *StateStore) error { return s.DeleteNodePools(12, []string{"default"}) },
			wantErr: `deleting built-in node pool "default" is not allowed`,
		},
		{
			name: "delete with nodes",
			setup: func(t *testing.T, s *StateStore) {
				node := mockNode()
				node.NodePool = "gpu"
				must.NoError(t, s.UpsertNode(11, node))
			},
			write:   func(s *StateStore) error { return s.DeleteNodePools(12, []string{"gpu"}) },
			wantErr: `node pool "gpu" has nodes (1 nodes)`,
		},
		{
			name: "delete with jobs",
			setup: func(t *testing.T, s *StateStore) {
				job := mockJob("web")
				job.NodePool = "gpu"
				must.NoError(t, s.UpsertJob(11, job))
			},
			write:   func(s *StateStore) error { return s.DeleteNodePools(12, []string{"gpu"}) },
			wantErr: `node pool "gpu" has non-terminal jobs (1 jobs: default/web)`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			must.NoError(t, s.UpsertNodePools(10, []*structs.NodePool{{Name: "gpu"}}))
			if tc.setup != nil {
				tc.setup(t, s)
			}
			must.ErrorContains(t, tc.write(s), tc.wantErr)
			must.Eq(t, []string{"all", "default", "gpu"}, poolNames(t, s, ""))
			all, err := s.NodePoolByName(nil, "all")
			must.NoError(t, err)
			must.Eq(t, structs.AllNodePoolDescription, all.Description)
		})
	}
}

// Jobs of the default pool are listed from the id index and have no row
// in the node_pool index; other pools' jobs are found by the index, also
// after a job moves between pools.
func TestNodePools_JobsByPool(t *testing.T) {
	s := testStore(t)
	must.NoError(t, s.UpsertNodePools(2, []*structs.NodePool{{Name: "gpu"}}))
	index := uint64(3)
	put := func(id, pool string) {
		t.Helper()
		j := mockBatchJob(id)
		j.NodePool = pool
		must.NoError(t, s.UpsertJobWithSubmission(index, j, nil, nil))
		index++
	}
	put("c", structs.DefaultNodePool)
	put("a", "")
	put("b", "gpu")
	put("d", "gpu")
	ids := func(pool string) []string {
		t.Helper()
		jobs, err := s.JobsByNodePool(nil, pool)
		must.NoError(t, err)
		var out []string
		for _, j := range jobs {
			out = append(out, j.ID)
		}
		return out
	}
	must.Eq(t, []string{"a", "c"}, ids(structs.DefaultNodePool))
	must.Eq(t, []string{"b", "d"}, ids("gpu"))

	rows := func(pool string) int {
		t.Helper()
		iter, err := s.db.Txn(false).Get(TableJobs, "node_pool", pool)
		must.NoError(t, err)
		n := 0
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			n++
		}
		return n
	}
	must.Eq(t, 0, rows(structs.DefaultNodePool))
	must.Eq(t, 2, rows("gpu"))

	// Moving d to the default pool drops its row; moving a to gpu adds one.
	put("d", structs.DefaultNodePool)
	put("a", "gpu")
	must.Eq(t, []string{"c", "d"}, ids(structs.DefaultNodePool))
	must.Eq(t, []string{"a", "b"}, ids("gpu"))
	must.Eq(t, 2, rows("gpu"))
	_, jobs, err := s.NodePoolUsage("gpu")
	must.NoError(t, err)
	must.SliceLen(t, 2, jobs)
}
