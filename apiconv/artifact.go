package apiconv

import (
	"maps"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func artifact(a *api.TaskArtifact) *structs.TaskArtifact {
	if a == nil {
		return nil
	}
	return &structs.TaskArtifact{
		GetterSource:   deref(a.GetterSource),
		GetterOptions:  maps.Clone(a.GetterOptions),
		GetterHeaders:  maps.Clone(a.GetterHeaders),
		GetterMode:     deref(a.GetterMode),
		GetterInsecure: deref(a.GetterInsecure),
		RelativeDest:   deref(a.RelativeDest),
		Chown:          a.Chown,
	}
}
