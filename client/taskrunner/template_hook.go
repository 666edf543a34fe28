package taskrunner

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cttemplate "github.com/hashicorp/consul-template/template"
	"github.com/hashicorp/go-envparse"
	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// templateDenylist are the functions Nomad's client denies by default
// (template.function_denylist): plugin runs a program on the client and
// writeToFile writes outside the destination.
var templateDenylist = []string{"plugin", "writeToFile"}

// unsupportedTemplateFuncs read from Consul or Vault, neither of which
// nomadq has. consul-template would leave them waiting for data forever;
// here they fail the render with their name.
var unsupportedTemplateFuncs = []string{
	"caLeaf", "caRoots", "connect", "datacenters", "exportedServices",
	"key", "keyExists", "keyOrDefault", "ls", "safeLs", "tree", "safeTree",
	"node", "nodes", "partitions", "peerings", "pkiCert",
	"secret", "secrets", "service", "services",
}

// Reasons recorded on the events of a template's change_mode.
const (
	reasonTemplateRestart = "Template with change_mode restart re-rendered"
	reasonTemplateSignal  = "Template re-rendered"
)

// templateControl is what a template's change_mode does to its task.
type templateControl interface {
	restartFor(reason string) error
	signalFor(signal, reason string) error
	Exec(ctx context.Context, opts *drivers.ExecOptions) (int, error)
	Kill(opts KillOpts)
}

// templateHookConfig builds a templateHook.
type templateHookConfig struct {
	// Vars reads variables for nomadVar and friends; nil refuses them.
	Vars VariableSource
	// Token is the task's workload identity, which the servers accept
	// for the variables of the task's own job.
	Token  string
	Region string
	// Services reads the service catalog for nomadService and
	// nomadServices, with NodeSecret; nil refuses them.
	Services   ServiceSource
	NodeSecret string
	// Control applies change_mode; nil renders again but changes nothing.
	Control templateControl
	// Emit records a task event.
	Emit func(*structs.TaskEvent)
	// Stop channels end the watch of variables (the task is killed, the
	// runner is done or the client shuts down).
	Stop []<-chan struct{}
}

// templateHook renders a task's templates before each run, with
// consul-template's renderer (the one Nomad uses, so the language and its
// helper functions are Nomad's). Templates that read Nomad Variables wait
// for a variable that does not exist yet, and are watched while the task
// runs: when a variable they read changes, they render again and their
// change_mode (noop, restart, signal, script) applies, as in Nomad.
type templateHook struct {
	cfg templateHookConfig

	mu     sync.Mutex
	cancel context.CancelFunc
}

func newTemplateHook(cfg templateHookConfig) *templateHook {
	if cfg.Emit == nil {
		cfg.Emit = func(*structs.TaskEvent) {}
	}
	return &templateHook{cfg: cfg}
}

// Name implements prestartHook.
func (h *templateHook) Name() string { return "template" }

// rendered is one template's output for its destination.
type rendered struct {
	tmpl *structs.Template
	dest string
	out  []byte
}

// Prestart implements prestartHook: it renders every template to its
// destination and returns the variables of env templates. A template
// that waits for a variable holds the task until the variable exists.
func (h *templateHook) Prestart(ctx context.Context, req *prestartRequest, resp *prestartResponse) error {
	h.stopWatch()
	announced := false
	for {
		reads := h.newReads(ctx, req)
		outs, err := h.renderAll(req, reads, false)
		if err != nil {
			return templateFailed(err)
		}
		if len(reads.missing) > 0 {
			if !announced {
				announced = true
				e := NewEvent(structs.TaskHookMessage)
				e.DisplayMessage = "Template: Missing: " + strings.Join(reads.missing, ", ")
				e.Message = e.DisplayMessage
				h.cfg.Emit(e)
			}
			if err := waitVarChange(ctx, h.cfg.Vars, h.cfg.Token, reads.depList()); err != nil {
				return err
			}
			continue
		}
		for _, r := range outs {
			if err := writeRendered(r.dest, r.out, r.tmpl); err != nil {
				return templateFailed(fmt.Errorf("%s: %w", r.tmpl.DestPath, err))
			}
			if !r.tmpl.Envvars {
				continue
			}
			vars, err := envparse.Parse(bytes.NewReader(r.out))
			if err != nil {
				return templateFailed(fmt.Errorf("%s: read environment variables: %w", r.tmpl.DestPath, err))
			}
			if resp.Env == nil {
				resp.Env = make(map[string]string, len(vars))
			}
			for k, v := range vars {
				resp.Env[k] = v
			}
		}
		if deps := reads.depList(); len(deps) > 0 && watched(req.Task.Templates) {
			h.startWatch(req, deps, outs)
		}
		return nil
	}
}

func templateFailed(err error) error {
	err = fmt.Errorf("Template failed: %w", err)
	e := NewEvent(structs.TaskHookFailed)
	e.Message = err.Error()
	e.DisplayMessage = err.Error()
	return &hookError{err: err, event: e}
}

// watched reports whether any template renders more than once.
func watched(ts []*structs.Template) bool {
	for _, t := range ts {
		if t != nil && !t.Once {
			return true
		}
	}
	return false
}

func (h *templateHook) newReads(ctx context.Context, req *prestartRequest) *varReads {
	r := newVarReads(ctx, h.cfg.Vars, h.cfg.Token, req.Env.Env["NOMAD_NAMESPACE"], h.cfg.Region)
	r.useServices(h.cfg.Services, h.cfg.NodeSecret)
	return r
}

// renderAll renders every template (skipping once-only ones when again)
// without writing anything.
func (h *templateHook) renderAll(req *prestartRequest, reads *varReads, again bool) ([]rendered, error) {
	var outs []rendered
	for _, t := range req.Task.Templates {
		if t == nil || again && t.Once {
			continue
		}
		dest, out, err := h.render(req, t, reads)
		if err != nil {
			return nil, err
		}
		outs = append(outs, rendered{tmpl: t, dest: dest, out: out})
	}
	return outs, nil
}

// render renders one template and returns its destination and output.
func (h *templateHook) render(req *prestartRequest, t *structs.Template, reads *varReads) (string, []byte, error) {
	dest, err := insideDir(req.TaskDir, req.Env.Interpolate(t.DestPath))
	if err != nil {
		return "", nil, fmt.Errorf("destination: %w", err)
	}
	contents := t.EmbeddedTmpl
	if t.SourcePath != "" {
		src, err := insideDir(req.TaskDir, req.Env.Interpolate(t.SourcePath))
		if err != nil {
			return "", nil, fmt.Errorf("source: %w", err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return "", nil, fmt.Errorf("read source %s: %w", t.SourcePath, err)
		}
		contents = string(b)
	}
	out, err := h.execute(req, t, contents, dest, reads)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", t.DestPath, err)
	}
	return dest, out, nil
}

// execute renders contents with the task's environment as what env
// sees.
func (h *templateHook) execute(req *prestartRequest, t *structs.Template, contents, dest string, reads *varReads) ([]byte, error) {
	funcs := map[string]any{
		"file": sandboxedFile(req.TaskDir),
	}
	for _, name := range unsupportedTemplateFuncs {
		funcs[name] = unsupportedFunc(name)
	}
	for name, fn := range reads.funcs() {
		funcs[name] = fn
	}
	for name, fn := range reads.serviceFuncs() {
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

// stopWatch ends the watch of an earlier run.
func (h *templateHook) stopWatch() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cancel != nil {
		h.cancel()
		h.cancel = nil
	}
}

// startWatch watches deps until the next run's Prestart or a stop.
func (h *templateHook) startWatch(req *prestartRequest, deps []varDep, outs []rendered) {
	ctx, cancel := context.WithCancel(context.Background())
	h.mu.Lock()
	h.cancel = cancel
	h.mu.Unlock()
	for _, ch := range h.cfg.Stop {
		go func() {
			select {
			case <-ch:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	last := make(map[*structs.Template][]byte, len(outs))
	for _, r := range outs {
		last[r.tmpl] = r.out
	}
	go h.watch(ctx, req, deps, last)
}

// watch renders again each time a variable the templates read changes,
// writes the templates whose output changed and applies their
// change_mode. A restart ends the watch: the next run's Prestart renders
// and watches anew.
func (h *templateHook) watch(ctx context.Context, req *prestartRequest, deps []varDep, last map[*structs.Template][]byte) {
	for {
		if err := waitVarChange(ctx, h.cfg.Vars, h.cfg.Token, deps); err != nil {
			return
		}
		reads := h.newReads(ctx, req)
		outs, err := h.renderAll(req, reads, true)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			// The files keep their last content; the next change may
			// render again.
			e := NewEvent(structs.TaskHookMessage)
			e.DisplayMessage = fmt.Sprintf("Template failed to render again: %v", err)
			e.Message = e.DisplayMessage
			h.cfg.Emit(e)
			if d := reads.depList(); len(d) > 0 {
				deps = d
			}
			continue
		}
		deps = reads.depList()
		if len(reads.missing) > 0 {
			// As in Nomad, a template waits for its data and keeps its
			// last render meanwhile.
			continue
		}
		var changed []*structs.Template
		for _, r := range outs {
			if bytes.Equal(last[r.tmpl], r.out) {
				continue
			}
			if err := writeRendered(r.dest, r.out, r.tmpl); err != nil {
				e := NewEvent(structs.TaskHookMessage)
				e.DisplayMessage = fmt.Sprintf("Template failed to write %s: %v", r.tmpl.DestPath, err)
				e.Message = e.DisplayMessage
				h.cfg.Emit(e)
				continue
			}
			last[r.tmpl] = r.out
			changed = append(changed, r.tmpl)
		}
		if len(changed) > 0 && h.applyChange(ctx, req, changed) {
			return
		}
	}
}

// applyChange applies the change_mode of the templates that rendered
// anew, after a random wait of up to their splay: a restart (which wins
// over everything else, and ends the watch: true), else each distinct
// signal once, then each script.
func (h *templateHook) applyChange(ctx context.Context, req *prestartRequest, changed []*structs.Template) bool {
	ctl := h.cfg.Control
	if ctl == nil {
		return false
	}
	var splay time.Duration
	restart := false
	var signals []string
	var scripts []*structs.ChangeScript
	for _, t := range changed {
		splay = max(splay, t.Splay)
		switch t.ChangeMode {
		case structs.TemplateChangeModeRestart:
			restart = true
		case structs.TemplateChangeModeSignal:
			if !slices.Contains(signals, t.ChangeSignal) {
				signals = append(signals, t.ChangeSignal)
			}
		case structs.TemplateChangeModeScript:
			if t.ChangeScript != nil {
				scripts = append(scripts, t.ChangeScript)
			}
		}
	}
	if !restart && len(signals) == 0 && len(scripts) == 0 {
		return false
	}
	if splay > 0 {
		select {
		case <-time.After(rand.N(splay)):
		case <-ctx.Done():
			return true
		}
	}
	if restart {
		if err := ctl.restartFor(reasonTemplateRestart); err != nil {
			h.message(fmt.Sprintf("Template re-rendered but the task could not be restarted: %v", err))
		}
		return true
	}
	for _, sig := range signals {
		if err := ctl.signalFor(sig, reasonTemplateSignal); err != nil {
			h.message(fmt.Sprintf("Template re-rendered but signal %s could not be sent: %v", sig, err))
		}
	}
	for _, sc := range scripts {
		h.runScript(ctx, req, sc)
	}
	return false
}

func (h *templateHook) message(msg string) {
	e := NewEvent(structs.TaskHookMessage)
	e.DisplayMessage = msg
	e.Message = msg
	h.cfg.Emit(e)
}

// runScript runs a change_mode script inside the task; a failure kills
// the task when the script asks for it (fail_on_error).
func (h *templateHook) runScript(ctx context.Context, req *prestartRequest, sc *structs.ChangeScript) {
	timeout := sc.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	sctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := []string{req.Env.Interpolate(sc.Command)}
	for _, a := range sc.Args {
		cmd = append(cmd, req.Env.Interpolate(a))
	}
	var out bytes.Buffer
	code, err := h.cfg.Control.Exec(sctx, &drivers.ExecOptions{Command: cmd, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out})
	if err == nil && code == 0 {
		h.message(fmt.Sprintf("Template re-rendered and ran change script %q (exit code 0)", sc.Command))
		return
	}
	msg := fmt.Sprintf("Template re-rendered and its change script %q exited with code %d", sc.Command, code)
	if err != nil {
		msg = fmt.Sprintf("Template re-rendered but its change script %q failed: %v", sc.Command, err)
	}
	h.message(msg)
	if sc.FailOnError {
		h.cfg.Control.Kill(KillOpts{DisplayMessage: msg, Reason: msg})
	}
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
		return "", fmt.Errorf("function %s is not supported by nomadq: it reads Consul or Vault data, which nomadq does not have", name)
	}
}
