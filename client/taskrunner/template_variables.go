package taskrunner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	ctdep "github.com/hashicorp/consul-template/dependency"
	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

// VariableSource reads Nomad Variables from the servers for the
// nomadVar, nomadVarExists, nomadVarList and nomadVarListSafe template
// functions. Both calls are blocking queries: with a MinIndex they return
// once the answer's index passes it, or after MaxWait.
type VariableSource interface {
	// ReadVariable returns the variable at q.Path (nil when there is
	// none) and the index of the answer.
	ReadVariable(ctx context.Context, q VariableQuery) (*structs.VariableDecrypted, uint64, error)
	// ListVariables returns the metadata of the variables whose path
	// starts with q.Path, and the index of the answer.
	ListVariables(ctx context.Context, q VariableQuery) ([]*structs.VariableMetadata, uint64, error)
}

// VariableQuery is one read or list of variables.
type VariableQuery struct {
	// Token authenticates the read: the task's workload identity.
	Token     string
	Namespace string
	// Path is the variable's path, or the prefix of a list.
	Path     string
	MinIndex uint64
	MaxWait  time.Duration
}

// errNomadVarUnwired is the render error of nomadVar on a client without
// a VariableSource.
var errNomadVarUnwired = errors.New("this client reads no Nomad Variables")

// varDep is one variable read or listing a render used, with the index it
// saw: the watcher waits for the servers' answer to move past it.
type varDep struct {
	list      bool
	namespace string
	path      string
	index     uint64
	// svc is set on a read of the service catalog (template_services.go).
	svc *svcDep
}

func (d varDep) key() string {
	if d.svc != nil {
		return d.svc.key(d)
	}
	kind := "get"
	if d.list {
		kind = "list"
	}
	return kind + "\x00" + d.namespace + "\x00" + d.path
}

// String names the dependency as consul-template (and so Nomad's task
// events) does.
func (d varDep) String() string {
	if d.svc != nil {
		return d.svc.String(d)
	}
	if d.list {
		return fmt.Sprintf("nomad.var.list(%s@%s)", d.path, d.namespace)
	}
	return fmt.Sprintf("nomad.var.block(%s@%s)", d.path, d.namespace)
}

// varReads serves the variable functions of one render pass through a
// VariableSource, caching each answer for the pass and recording what was
// read (deps) and what the render is waiting for (missing): a nomadVar of
// a variable that does not exist, or a nomadVarListSafe that lists
// nothing, which Nomad waits on before rendering.
type varReads struct {
	ctx       context.Context
	src       VariableSource
	token     string
	namespace string
	region    string

	deps    map[string]*varDep
	gets    map[string]*structs.VariableDecrypted
	lists   map[string][]*structs.VariableMetadata
	missing []string
	// services reads the service catalog; nil refuses nomadService.
	services *serviceReads
}

func newVarReads(ctx context.Context, src VariableSource, token, namespace, region string) *varReads {
	return &varReads{ctx: ctx, src: src, token: token, namespace: namespace, region: region,
		deps: map[string]*varDep{}, gets: map[string]*structs.VariableDecrypted{}, lists: map[string][]*structs.VariableMetadata{}}
}

// target splits "path@namespace.region" (namespace and region optional)
// as consul-template does; only the task's own region is served.
func (r *varReads) target(name, spec string) (string, string, error) {
	path, ns := strings.Trim(strings.TrimSpace(spec), "/"), r.namespace
	if i := strings.LastIndex(path, "@"); i >= 0 {
		path, ns = path[:i], path[i+1:]
		if n, region, ok := strings.Cut(ns, "."); ok {
			ns = n
			if region != r.region {
				return "", "", fmt.Errorf("function %s: %q names region %q; nomadq templates read variables of their own region (%q) only", name, spec, region, r.region)
			}
		}
	}
	if ns == "" {
		ns = r.namespace
	}
	return path, ns, nil
}

func (r *varReads) get(name, spec string) (*structs.VariableDecrypted, *varDep, error) {
	if r.src == nil {
		return nil, nil, fmt.Errorf("function %s: %w", name, errNomadVarUnwired)
	}
	path, ns, err := r.target(name, spec)
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		return nil, nil, fmt.Errorf("function %s: a variable path is required", name)
	}
	d := varDep{namespace: ns, path: path}
	if v, ok := r.gets[d.key()]; ok {
		return v, r.deps[d.key()], nil
	}
	v, idx, err := r.src.ReadVariable(r.ctx, VariableQuery{Token: r.token, Namespace: ns, Path: path})
	if err != nil {
		return nil, nil, fmt.Errorf("function %s: read variable %q in namespace %q: %w", name, path, ns, err)
	}
	d.index = idx
	r.deps[d.key()] = &d
	r.gets[d.key()] = v
	return v, &d, nil
}

func (r *varReads) list(name string, args []string) ([]*structs.VariableMetadata, *varDep, error) {
	if r.src == nil {
		return nil, nil, fmt.Errorf("function %s: %w", name, errNomadVarUnwired)
	}
	if len(args) > 1 {
		return nil, nil, fmt.Errorf("function %s takes one prefix or none; got %d arguments", name, len(args))
	}
	spec := ""
	if len(args) == 1 {
		spec = args[0]
	}
	prefix, ns, err := r.target(name, spec)
	if err != nil {
		return nil, nil, err
	}
	d := varDep{list: true, namespace: ns, path: prefix}
	if l, ok := r.lists[d.key()]; ok {
		return l, r.deps[d.key()], nil
	}
	l, idx, err := r.src.ListVariables(r.ctx, VariableQuery{Token: r.token, Namespace: ns, Path: prefix})
	if err != nil {
		return nil, nil, fmt.Errorf("function %s: list variables under %q in namespace %q: %w", name, prefix, ns, err)
	}
	d.index = idx
	r.deps[d.key()] = &d
	r.lists[d.key()] = l
	return l, &d, nil
}

func (r *varReads) addMissing(d *varDep) {
	s := d.String()
	for _, m := range r.missing {
		if m == s {
			return
		}
	}
	r.missing = append(r.missing, s)
}

// funcs are the template functions, with consul-template's result types
// so that templates written for Nomad (.Parent, .Keys, .Path, ...) work.
func (r *varReads) funcs() map[string]any {
	listed := func(name string, safe bool) func(...string) ([]*ctdep.NomadVarMeta, error) {
		return func(args ...string) ([]*ctdep.NomadVarMeta, error) {
			l, d, err := r.list(name, args)
			if err != nil {
				return nil, err
			}
			out := make([]*ctdep.NomadVarMeta, 0, len(l))
			for _, m := range l {
				out = append(out, ctdep.NewNomadVarMeta(&api.VariableMetadata{Namespace: m.Namespace, Path: m.Path,
					CreateIndex: m.CreateIndex, ModifyIndex: m.ModifyIndex, CreateTime: m.CreateTime, ModifyTime: m.ModifyTime}))
			}
			if safe && len(out) == 0 {
				r.addMissing(d)
			}
			return out, nil
		}
	}
	return map[string]any{
		"nomadVar": func(spec string) (*ctdep.NomadVarItems, error) {
			v, d, err := r.get("nomadVar", spec)
			if err != nil {
				return nil, err
			}
			if v == nil {
				r.addMissing(d)
				return nil, nil
			}
			nv := ctdep.NewNomadVariable(&api.Variable{Namespace: v.Namespace, Path: v.Path,
				CreateIndex: v.CreateIndex, ModifyIndex: v.ModifyIndex, CreateTime: v.CreateTime, ModifyTime: v.ModifyTime,
				Items: api.VariableItems(v.Items)})
			return &nv.Items, nil
		},
		"nomadVarExists": func(spec string) (bool, error) {
			v, _, err := r.get("nomadVarExists", spec)
			return v != nil, err
		},
		"nomadVarList":     listed("nomadVarList", false),
		"nomadVarListSafe": listed("nomadVarListSafe", true),
	}
}

// depList returns what the pass read, for the watcher.
func (r *varReads) depList() []varDep {
	out := make([]varDep, 0, len(r.deps))
	for _, d := range r.deps {
		out = append(out, *d)
	}
	return out
}
