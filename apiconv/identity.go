package apiconv

import (
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// workloadIdentity converts the default identity block of a task.
// Check has refused what it does not carry: a name other than "default",
// another audience, and every field but env and file.
func workloadIdentity(wi *api.WorkloadIdentity) *structs.WorkloadIdentity {
	if wi == nil {
		return nil
	}
	return &structs.WorkloadIdentity{
		Name:     structs.WorkloadIdentityDefaultName,
		Audience: []string{structs.IdentityDefaultAud},
		Env:      wi.Env,
		File:     wi.File,
	}
}

// defaultIdentity is the task's default identity block: Identity, or an
// unnamed or "default" entry of Identities (where the JSON of other
// clients may put it).
func defaultIdentity(t *api.Task) *api.WorkloadIdentity {
	if t.Identity != nil {
		return t.Identity
	}
	for _, wi := range t.Identities {
		if wi != nil && (wi.Name == "" || wi.Name == structs.WorkloadIdentityDefaultName) {
			return wi
		}
	}
	return nil
}
