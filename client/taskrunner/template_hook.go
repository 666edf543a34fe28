package taskrunner

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	cttemplate "github.com/hashicorp/consul-template/template"
	"github.com/hashicorp/go-envparse"
	"github.com/nomadq/nomadq/structs"
)

// templateDenylist are the functions Nomad's client denies by default
// (template.function_denylist): plugin runs a program on the client and
// writeToFile writes outside the destination.
var templateDenylist = []string{"plugin", "writeToFile"}

// unsupportedTemplateFuncs read from Consul, Vault or Nomad's service
// catalog, none of which nomadq has. consul-template would leave them
// waiting for data forever; here they fail the render with their name.
var unsupportedTemplateFuncs = []string{
	"caLeaf", "caRoots", "connect", "datacenters", "exportedServices",
	"key", "keyExists", "keyOrDefault", "ls", "safeLs", "tree", "safeTree",
	"node", "nodes", "partitions", "peerings", "pkiCert",
	"secret", "secrets", "service", "services",
	"nomadService", "nomadServices", "nomadVarList", "nomadVarListSafe",
}

// templateHook renders a task's templates before each run, with
// consul-template's renderer (the one Nomad uses, so the language and its
// helper functions are Nomad's). Data never changes during a run here, so
// a template is rendered once per run and change_mode never triggers.
type templateHook struct {
	vars VariableReader
}

func newTemplateHook(vars VariableReader) *templateHook {
	return &templateHook{vars: vars}
}

// Name implements prestartHook.
func (h *templateHook) Name() string { return "template" }

// Prestart implements prestartHook: it renders every template to its
// destination and returns the variables of env templates.
func (h *templateHook) Prestart(_ context.Context, req *prestartRequest, resp *prestartResponse) error {
	for _, t := range req.Task.Templates {
		if t == nil {
			continue
		}
		vars, err := h.render(req, t)
		if err != nil {
			err = fmt.Errorf("Template failed: %w", err)
			e := NewEvent(structs.TaskHookFailed)
			e.Message = err.Error()
			e.DisplayMessage = err.Error()
			return &hookError{err: err, event: e}
		}
		if vars != nil && resp.Env == nil {
			resp.Env = make(map[string]string, len(vars))
		}
		for k, v := range vars {
			resp.Env[k] = v
		}
	}
	return nil
}

// render renders one template to its destination; for an env template
// it returns the variables the file sets.
func (h *templateHook) render(req *prestartRequest, t *structs.Template) (map[string]string, error) {
	dest, err := insideDir(req.TaskDir, req.Env.Interpolate(t.DestPath))
	if err != nil {
		return nil, fmt.Errorf("destination: %w", err)
	}
	contents := t.EmbeddedTmpl
	if t.SourcePath != "" {
		src, err := insideDir(req.TaskDir, req.Env.Interpolate(t.SourcePath))
		if err != nil {
			return nil, fmt.Errorf("source: %w", err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return nil, fmt.Errorf("read source %s: %w", t.SourcePath, err)
		}
		contents = string(b)
	}
	out, err := h.execute(req, t, contents, dest)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.DestPath, err)
	}
	if err := writeRendered(dest, out, t); err != nil {
		return nil, fmt.Errorf("%s: %w", t.DestPath, err)
	}
	if !t.Envvars {
		return nil, nil
	}
	vars, err := envparse.Parse(bytes.NewReader(out))
	if err != nil {
		return nil, fmt.Errorf("%s: read environment variables: %w", t.DestPath, err)
	}
	return vars, nil
}

// execute renders contents with the task's environment as what env
// sees.
func (h *templateHook) execute(req *prestartRequest, t *structs.Template, contents, dest string) ([]byte, error) {
	funcs := map[string]any{
		"file": sandboxedFile(req.TaskDir),
	}
	for _, name := range unsupportedTemplateFuncs {
		funcs[name] = unsupportedFunc(name)
	}
	namespace := req.Env.Env["NOMAD_NAMESPACE"]
	for name, fn := range nomadVarFuncs(h.vars, namespace) {
		funcs[name] = fn
	}
	tmpl, err := cttemplate.NewTemplate(&cttemplate.NewTemplateInput{
		Contents:         contents,
		Destination:      dest,
		ErrMissingKey:    t.ErrMissingKey,
		LeftDelim:        t.LeftDelim,
		RightDelim:       t.RightDelim,
		ExtFuncMap:       funcs,
		FunctionDenylist: templateDenylist,
		SandboxPath:      req.TaskDir,
	})
	if err != nil {
		return nil, err
	}
	res, err := tmpl.Execute(&cttemplate.ExecuteInput{
		Brain: cttemplate.NewBrain(),
		Env:   templateEnv(req.Env.Env),
	})
	if err != nil {
		return nil, err
	}
	// Every data-source function is replaced above; one that slipped
	// through would otherwise render as empty.
	if res.Missing != nil && res.Missing.Len() > 0 {
		return nil, fmt.Errorf("template reads data nomadq does not have: %s", res.Missing.String())
	}
	return res.Output, nil
}

// templateEnv is the environment the env function sees: the task's, with
// every variable of the client's own process that the task does not set
// masked as empty, as Nomad does, so a template cannot read the agent's
// environment.
func templateEnv(task map[string]string) []string {
	env := make(map[string]string, len(task))
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		env[k] = ""
	}
	for k, v := range task {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// writeRendered writes a rendered template with its perms (and owner,
// when uid or gid is set), replacing any earlier render atomically.
func writeRendered(dest string, out []byte, t *structs.Template) error {
	perms := os.FileMode(0o644)
	if t.Perms != "" {
		p, err := strconv.ParseUint(t.Perms, 8, 12)
		if err != nil {
			return fmt.Errorf("perms %q is not an octal file mode", t.Perms)
		}
		perms = os.FileMode(p)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	// Chmod after writing: the umask must not narrow the mode asked for.
	if err := os.Chmod(tmp.Name(), perms); err != nil {
		return err
	}
	if t.Uid != nil || t.Gid != nil {
		uid, gid := -1, -1
		if t.Uid != nil {
			uid = *t.Uid
		}
		if t.Gid != nil {
			gid = *t.Gid
		}
		if err := os.Chown(tmp.Name(), uid, gid); err != nil {
			return fmt.Errorf("set owner uid %d gid %d: %w", uid, gid, err)
		}
	}
	return os.Rename(tmp.Name(), dest)
}

// sandboxedFile is the file function: a path relative to the task
// directory (or absolute inside it), read when the template renders.
func sandboxedFile(taskDir string) func(string) (string, error) {
	return func(p string) (string, error) {
		full, err := insideDir(taskDir, p)
		if err != nil {
			return "", fmt.Errorf("function file: %w", err)
		}
		b, err := os.ReadFile(full)
		if err != nil {
			return "", fmt.Errorf("function file: %w", err)
		}
		return string(b), nil
	}
}

// unsupportedFunc fails a render that calls name.
func unsupportedFunc(name string) func(...any) (string, error) {
	return func(...any) (string, error) {
		return "", fmt.Errorf("function %s is not supported by nomadq: it reads Consul, Vault or Nomad service data, which nomadq does not have", name)
	}
}
