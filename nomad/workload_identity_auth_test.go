package nomad

import (
	"testing"
	"time"

	"github.com/shoenig/test/must"
	"github.com/shoenig/test/wait"

	"github.com/nomadq/nomadq/structs"
)

// placedIdentity registers a job of one long task and returns the
// identity the servers signed for its alloc's task "main".
func placedIdentity(t *testing.T, s *Server, root *structs.ACLToken, jobID string) string {
	t.Helper()
	job := mockJob(jobID)
	job.TaskGroups[0].Tasks[0].Config = map[string]any{"run_for": "1h"}
	job.TaskGroups[0].Tasks[0].Identity = &structs.WorkloadIdentity{Env: true}
	var reg structs.JobRegisterResponse
	must.NoError(t, s.RPC("Job.Register", &structs.JobRegisterRequest{Job: job, WriteRequest: structs.WriteRequest{AuthToken: root.SecretID}}, &reg))
	var token string
	must.Wait(t, wait.InitialSuccess(wait.Timeout(30*time.Second), wait.Gap(20*time.Millisecond), wait.BoolFunc(func() bool {
		allocs, err := s.State().AllocsByJob(nil, structs.DefaultNamespace, jobID, true)
		if err != nil || len(allocs) != 1 {
			return false
		}
		token = allocs[0].SignedIdentities["main"]
		return token != ""
	})))
	return token
}

// A task's workload identity reads the variables of its own job, group
// and task (nomad/jobs, nomad/jobs/<job>, .../<group>, .../<task>) in its
// namespace through the ACL checks, and nothing else.
func TestWorkloadIdentity_ReadsItsOwnVariablesOnly(t *testing.T) {
	s := aclServer(t, nil)
	root := bootstrap(t, s)
	waitForKeyring(t, s)
	var nr structs.NodeUpdateResponse
	must.NoError(t, s.RPC("Node.Register", &structs.NodeRegisterRequest{Node: mockNode(structs.GenerateUUID())}, &nr))
	web := placedIdentity(t, s, root, "web")
	other := placedIdentity(t, s, root, "other")

	own := []string{"nomad/jobs", "nomad/jobs/web", "nomad/jobs/web/work", "nomad/jobs/web/work/main"}
	foreign := []string{"nomad/jobs/other", "nomad/jobs/web/work/main/deeper", "nomad/jobs/web/other-group", "nomad/jobs/webx", "app/config", "nomad/jobs/web/work/side"}
	for _, p := range append(append([]string{}, own...), foreign...) {
		var reply structs.VariablesApplyResponse
		must.NoError(t, s.RPC("Variables.Apply", &structs.VariablesApplyRequest{Op: structs.VarOpSet,
			Var:          &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: p}, Items: structs.VariableItems{"k": p}},
			WriteRequest: structs.WriteRequest{AuthToken: root.SecretID}}, &reply))
	}

	read := func(token, ns, path string) (*structs.VariablesReadResponse, error) {
		var reply structs.VariablesReadResponse
		err := s.RPC("Variables.Read", &structs.VariablesReadRequest{Path: path, QueryOptions: structs.QueryOptions{AuthToken: token, Namespace: ns}}, &reply)
		return &reply, err
	}
	for _, p := range own {
		reply, err := read(web, "default", p)
		must.NoError(t, err, must.Sprint(p))
		must.NotNil(t, reply.Data, must.Sprint(p))
		must.Eq(t, p, reply.Data.Items["k"])
	}
	for _, p := range foreign {
		_, err := read(web, "default", p)
		must.ErrorContains(t, err, "403", must.Sprint(p))
	}
	// Another job's identity does not reach web's variables, and web's
	// does not reach another namespace.
	_, err := read(other, "default", "nomad/jobs/web")
	must.ErrorContains(t, err, "403")
	_, err = read(web, "prod", "nomad/jobs/web")
	must.ErrorContains(t, err, "403")
	// A token whose signature does not verify is no identity.
	tampered := web[:len(web)-4] + "AAAA"
	if tampered == web {
		tampered = web[:len(web)-4] + "BBBB"
	}
	_, err = read(tampered, "default", "nomad/jobs/web")
	must.ErrorContains(t, err, "403")

	var list structs.VariablesListResponse
	must.NoError(t, s.RPC("Variables.List", &structs.VariablesListRequest{QueryOptions: structs.QueryOptions{AuthToken: web, Namespace: "default", Prefix: "nomad/jobs"}}, &list))
	var listed []string
	for _, m := range list.Data {
		listed = append(listed, m.Path)
	}
	must.SliceContainsAll(t, own, listed)
	err = s.RPC("Variables.List", &structs.VariablesListRequest{QueryOptions: structs.QueryOptions{AuthToken: tampered, Namespace: "default"}}, &list)
	must.ErrorContains(t, err, "403")

	// Writes stay with the ACL: the identity grants reads only.
	var reply structs.VariablesApplyResponse
	err = s.RPC("Variables.Apply", &structs.VariablesApplyRequest{Op: structs.VarOpSet,
		Var:          &structs.VariableDecrypted{VariableMetadata: structs.VariableMetadata{Path: "nomad/jobs/web"}, Items: structs.VariableItems{"k": "v"}},
		WriteRequest: structs.WriteRequest{AuthToken: web}}, &reply)
	must.ErrorContains(t, err, "403")
}
