package taskrunner

import (
	"sort"
	"strconv"
	"strings"

	"github.com/nomadq/nomadq/client/allocdir"
	"github.com/nomadq/nomadq/structs"
)

// EnvInput is what a task's environment is built from.
type EnvInput struct {
	Alloc    *structs.Allocation
	Task     *structs.Task
	Node     *structs.Node
	Region   string
	AllocDir *allocdir.AllocDir
	// Extra is added last, e.g. variables that alloc hooks provide.
	Extra map[string]string
}

// TaskEnv is a task's environment and the values ${...} can refer to.
type TaskEnv struct {
	Env  map[string]string
	node *structs.Node
}

// BuildEnv returns the NOMAD_* variables, the metadata and the task's own
// env (interpolated) of a task.
func BuildEnv(in EnvInput) *TaskEnv {
	e := &TaskEnv{Env: make(map[string]string), node: in.Node}
	a, t := in.Alloc, in.Task
	env := e.Env
	env["NOMAD_ALLOC_ID"] = a.ID
	if len(a.ID) >= 8 {
		env["NOMAD_SHORT_ALLOC_ID"] = a.ID[:8]
	}
	env["NOMAD_ALLOC_NAME"] = a.Name
	env["NOMAD_ALLOC_INDEX"] = strconv.FormatUint(uint64(a.Index()), 10)
	env["NOMAD_GROUP_NAME"] = a.TaskGroup
	env["NOMAD_TASK_NAME"] = t.Name
	env["NOMAD_NAMESPACE"] = a.Namespace
	env["NOMAD_REGION"] = in.Region
	if in.Node != nil {
		env["NOMAD_DC"] = in.Node.Datacenter
	}
	if in.AllocDir != nil {
		env["NOMAD_ALLOC_DIR"] = in.AllocDir.SharedDir()
		env["NOMAD_TASK_DIR"] = in.AllocDir.LocalDir(t.Name)
		env["NOMAD_SECRETS_DIR"] = in.AllocDir.SecretsDir(t.Name)
	}
	if t.Resources != nil {
		env["NOMAD_CPU_LIMIT"] = strconv.Itoa(t.Resources.CPU)
		env["NOMAD_MEMORY_LIMIT"] = strconv.Itoa(t.Resources.MemoryMB)
	}
	addResourceEnv(env, a, t.Name)
	var meta []map[string]string
	if j := a.Job; j != nil {
		env["NOMAD_JOB_ID"] = j.ID
		env["NOMAD_JOB_NAME"] = j.Name
		if j.ParentID != "" {
			env["NOMAD_JOB_PARENT_ID"] = j.ParentID
		}
		meta = append(meta, j.Meta)
		if tg := j.LookupTaskGroup(a.TaskGroup); tg != nil {
			meta = append(meta, tg.Meta)
		}
	} else {
		env["NOMAD_JOB_ID"] = a.JobID
		env["NOMAD_JOB_NAME"] = a.JobID
	}
	meta = append(meta, t.Meta)
	// Task meta overrides group meta overrides job meta; Nomad exposes
	// each key as written and upper-cased.
	for _, m := range meta {
		for k, v := range m {
			env["NOMAD_META_"+k] = v
			env["NOMAD_META_"+strings.ToUpper(k)] = v
		}
	}
	for k, v := range in.Extra {
		env[k] = v
	}
	// The task's own env may refer to all of the above.
	keys := make([]string, 0, len(t.Env))
	for k := range t.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	resolved := make(map[string]string, len(keys))
	for _, k := range keys {
		resolved[k] = e.Interpolate(t.Env[k])
	}
	for k, v := range resolved {
		env[k] = v
	}
	return e
}

// Interpolate replaces ${attr.X}, ${node.*}, ${meta.X}, ${env["X"]} and
// ${VAR} (any variable of the environment) in s. References that resolve
// to nothing are left as written, as Nomad does.
func (e *TaskEnv) Interpolate(s string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		ref := s[i+2 : i+j]
		if v, ok := e.lookup(strings.TrimSpace(ref)); ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
}

func (e *TaskEnv) lookup(ref string) (string, bool) {
	n := e.node
	switch {
	case strings.HasPrefix(ref, "env[") && strings.HasSuffix(ref, "]"):
		key := strings.Trim(ref[4:len(ref)-1], `"'`)
		v, ok := e.Env[key]
		return v, ok
	case strings.HasPrefix(ref, "attr.") && n != nil:
		v, ok := n.Attributes[ref[5:]]
		return v, ok
	case strings.HasPrefix(ref, "meta.") && n != nil:
		v, ok := n.Meta[ref[5:]]
		return v, ok
	case strings.HasPrefix(ref, "node.") && n != nil:
		switch ref {
		case "node.unique.id":
			return n.ID, true
		case "node.unique.name":
			return n.Name, true
		case "node.datacenter":
			return n.Datacenter, true
		case "node.class":
			return n.NodeClass, true
		case "node.pool":
			return n.NodePool, true
		case "node.region":
			v, ok := e.Env["NOMAD_REGION"]
			return v, ok
		}
	}
	v, ok := e.Env[ref]
	return v, ok
}

// InterpolateConfig returns a copy of a driver config with every string
// in it interpolated.
func (e *TaskEnv) InterpolateConfig(cfg map[string]any) map[string]any {
	out := make(map[string]any, len(cfg))
	for k, v := range cfg {
		out[k] = e.interpolateValue(v)
	}
	return out
}

func (e *TaskEnv) interpolateValue(v any) any {
	switch x := v.(type) {
	case string:
		return e.Interpolate(x)
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = e.interpolateValue(el)
		}
		return out
	case []string:
		out := make([]string, len(x))
		for i, el := range x {
			out[i] = e.Interpolate(el)
		}
		return out
	case map[string]any:
		return e.InterpolateConfig(x)
	}
	return v
}
