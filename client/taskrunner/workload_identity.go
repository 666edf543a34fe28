package taskrunner

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
)

// exposeWorkloadIdentity hands a task the identity the servers signed for
// it, as its identity block asks: NOMAD_TOKEN in env (env = true) and
// secrets/nomad_token (file = true). A task without the block gets
// neither. A block with nothing signed for the task is an error: the
// servers sign every placed task, so the alloc did not come from them.
func exposeWorkloadIdentity(dir *allocdir.AllocDir, task *structs.Task, alloc *structs.Allocation, env map[string]string) error {
	wi := task.Identity
	if wi == nil || (!wi.Env && !wi.File) {
		return nil
	}
	token, ok := alloc.SignedIdentities[task.Name]
	if !ok {
		return fmt.Errorf("workload identity: allocation %s carries no signed identity for task %q", alloc.ID, task.Name)
	}
	if wi.Env {
		env[structs.WorkloadIdentityTokenEnv] = token
	}
	if wi.File {
		if dir == nil {
			return fmt.Errorf("workload identity: task %q has no secrets directory", task.Name)
		}
		path := filepath.Join(dir.SecretsDir(task.Name), structs.WorkloadIdentityTokenFile)
		// The token is a credential: readable by the task's user only.
		if err := os.WriteFile(path, []byte(token), 0o600); err != nil {
			return fmt.Errorf("workload identity: write %s: %w", path, err)
		}
	}
	return nil
}
