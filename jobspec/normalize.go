package jobspec

import (
	"time"

	"github.com/hashicorp/nomad/api"
)

// Parser-time normalisations. These are what the job language itself
// defines, not server defaults: Canonicalize stays on the server.

// Template values the job language fills in when a template block leaves
// them out.
const (
	templateChangeMode = "restart"
	templatePerms      = "0644"
	templateSplay      = 5 * time.Second
	vaultChangeMode    = "restart"
	// changeScriptTimeout is a template change_script's timeout when it
	// sets none.
	changeScriptTimeout = 5 * time.Second
)

// periodicSpecCron is the SpecType of a periodic block with cron specs.
const periodicSpecCron = "cron"

// groupScalingType is the type of a group's scaling block, which Nomad's
// parser writes out.
const groupScalingType = "horizontal"

// normalizeJob applies the parser-time normalisations to a decoded job.
func normalizeJob(job *api.Job) {
	if p := job.Periodic; p != nil && (p.Spec != nil || len(p.Specs) > 0) {
		p.SpecType = ptr(periodicSpecCron)
	}
	for _, tg := range job.TaskGroups {
		if tg.Scaling != nil && tg.Scaling.Type == "" {
			tg.Scaling.Type = groupScalingType
		}
		for _, n := range tg.Networks {
			normalizeNetwork(n)
		}
		for _, t := range tg.Tasks {
			normalizeTask(t)
		}
	}
}

func normalizeTask(t *api.Task) {
	if t.Resources != nil {
		for _, n := range t.Resources.Networks {
			normalizeNetwork(n)
		}
	}
	for _, tmpl := range t.Templates {
		if tmpl.ChangeMode == nil {
			tmpl.ChangeMode = ptr(templateChangeMode)
		}
		if tmpl.Perms == nil {
			tmpl.Perms = ptr(templatePerms)
		}
		if tmpl.Splay == nil {
			tmpl.Splay = ptr(templateSplay)
		}
		if tmpl.ErrMissingKey == nil {
			tmpl.ErrMissingKey = ptr(false)
		}
		if cs := tmpl.ChangeScript; cs != nil {
			if cs.Args == nil {
				cs.Args = []string{}
			}
			if cs.Timeout == nil {
				cs.Timeout = ptr(changeScriptTimeout)
			}
			if cs.FailOnError == nil {
				cs.FailOnError = ptr(false)
			}
			if cs.RunOnFirstRender == nil {
				cs.RunOnFirstRender = ptr(false)
			}
		}
	}
	if v := t.Vault; v != nil {
		if v.Env == nil {
			v.Env = ptr(true)
		}
		if v.ChangeMode == nil {
			v.ChangeMode = ptr(vaultChangeMode)
		}
		if v.DisableFile == nil {
			v.DisableFile = ptr(false)
		}
	}
	// The unnamed (or "default") identity is the task's default identity.
	// With more than one, all stay in Identities, where the server's check
	// refuses them: moving one would drop the others.
	defaults := 0
	for _, id := range t.Identities {
		if id.Name == "" || id.Name == "default" {
			defaults++
		}
	}
	if defaults != 1 {
		return
	}
	// What is left stays a list, empty when the default was the only one:
	// Nomad's parser writes "Identities": [] there, and so does this one.
	kept := make([]*api.WorkloadIdentity, 0, len(t.Identities)-1)
	for _, id := range t.Identities {
		if id.Name == "" || id.Name == "default" {
			t.Identity = id
			continue
		}
		kept = append(kept, id)
	}
	t.Identities = kept
}

// normalizeNetwork moves ports with a static value from the dynamic list,
// where every `port` block lands, to the reserved list.
func normalizeNetwork(n *api.NetworkResource) {
	var dynamic []api.Port
	for _, p := range n.DynamicPorts {
		if p.Value > 0 {
			n.ReservedPorts = append(n.ReservedPorts, p)
			continue
		}
		dynamic = append(dynamic, p)
	}
	n.DynamicPorts = dynamic
}

func ptr[T any](v T) *T { return &v }
