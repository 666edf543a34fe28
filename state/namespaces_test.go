package state

import (
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

func namespaceNames(t *testing.T, s *StateStore, prefix string) []string {
	t.Helper()
	list, err := s.NamespacesByNamePrefix(nil, prefix)
	must.NoError(t, err)
	var names []string
	for _, ns := range list {
		names = append(names, ns.Name)
	}
	return names
}

func TestNamespaces_BuiltinAndCRUD(t *testing.T) {
	s := testStore(t)
	must.Eq(t, []string{"default"}, namespaceNames(t, s, ""))

	must.NoError(t, s.UpsertNamespaces(5, []*structs.Namespace{{Name: "foo-a"}, {Name: "foo-b", Meta: map[string]string{"k": "v"}}}))
	must.NoError(t, s.UpsertNamespaces(6, []*structs.Namespace{{Name: "foo-a", Description: "changed"}}))
	must.Eq(t, []string{"default", "foo-a", "foo-b"}, namespaceNames(t, s, ""))
	must.Eq(t, []string{"foo-b"}, namespaceNames(t, s, "foo-b"))

	got, err := s.NamespaceByName(nil, "foo-a")
	must.NoError(t, err)
	must.Eq(t, "changed", got.Description)
	must.Eq(t, 5, got.CreateIndex)
	must.Eq(t, 6, got.ModifyIndex)

	must.NoError(t, s.DeleteNamespaces(7, []string{"foo-a"}))
	must.Eq(t, []string{"default", "foo-b"}, namespaceNames(t, s, ""))
}

func TestNamespaces_DeleteRefused(t *testing.T) {
	cases := []struct {
		name    string
		setup   func(t *testing.T, s *StateStore)
		delete  []string
		wantErr string
	}{
		{
			name:    "missing",
			delete:  []string{"other", "missing"},
			wantErr: `namespace "missing" not found`,
		},
		{
			name:    "default",
			delete:  []string{"default"},
			wantErr: "can not delete default namespace",
		},
		{
			name: "non-terminal job",
			setup: func(t *testing.T, s *StateStore) {
				job := mockJob("web")
				job.Namespace = "prod"
				must.NoError(t, s.UpsertJob(11, job))
			},
			delete:  []string{"other", "prod"},
			wantErr: `namespace "prod" has non-terminal jobs (1 jobs: web)`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			must.NoError(t, s.UpsertNamespaces(10, []*structs.Namespace{{Name: "prod"}, {Name: "other"}}))
			if tc.setup != nil {
				tc.setup(t, s)
			}
			err := s.DeleteNamespaces(12, tc.delete)
			must.ErrorContains(t, err, tc.wantErr)
			// Nothing is deleted when one name is refused.
			must.Eq(t, []string{"default", "other", "prod"}, namespaceNames(t, s, ""))
		})
	}
}

func TestUpsertJob_UnknownNamespaceOrPool(t *testing.T) {
	cases := []struct {
		name    string
		change  func(j *structs.Job)
		wantErr string
	}{
		{"namespace", func(j *structs.Job) { j.Namespace = "nope" }, `job "web" is in nonexistent namespace "nope"`},
		{"pool", func(j *structs.Job) { j.NodePool = "nope" }, `job "web" is in nonexistent node pool "nope"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := testStore(t)
			job := mockJob("web")
			tc.change(job)
			must.ErrorContains(t, s.UpsertJob(3, job), tc.wantErr)
			must.MapEmpty(t, dumpState(t, &s.reader))
		})
	}
}
