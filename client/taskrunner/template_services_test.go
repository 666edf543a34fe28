package taskrunner

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/structs"
)

// fakeCatalog is a ServiceSource over registrations, with one index for
// all of them; blocking queries wait for a change.
type fakeCatalog struct {
	mu      sync.Mutex
	index   uint64
	regs    []*structs.ServiceRegistration
	changed chan struct{}
	queries []ServiceQuery
}

func newFakeCatalog(regs ...*structs.ServiceRegistration) *fakeCatalog {
	return &fakeCatalog{index: 1, regs: regs, changed: make(chan struct{})}
}

func (f *fakeCatalog) set(regs ...*structs.ServiceRegistration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.index++
	f.regs = regs
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *fakeCatalog) wait(ctx context.Context, q ServiceQuery) error {
	for {
		f.mu.Lock()
		f.queries = append(f.queries, q)
		idx, ch := f.index, f.changed
		f.mu.Unlock()
		if q.MinIndex == 0 || idx > q.MinIndex {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *fakeCatalog) ReadService(ctx context.Context, q ServiceQuery) ([]*structs.ServiceRegistration, uint64, error) {
	if err := f.wait(ctx, q); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*structs.ServiceRegistration
	for _, r := range f.regs {
		if r.ServiceName == q.Name && r.Namespace == q.Namespace {
			out = append(out, r)
		}
	}
	if q.Choose != "" && len(out) > 1 {
		out = out[:1]
	}
	return out, f.index, nil
}

func (f *fakeCatalog) ListServices(ctx context.Context, q ServiceQuery) ([]*structs.ServiceRegistrationListStub, uint64, error) {
	if err := f.wait(ctx, q); err != nil {
		return nil, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	stub := &structs.ServiceRegistrationListStub{Namespace: q.Namespace}
	seen := map[string]*structs.ServiceRegistrationStub{}
	for _, r := range f.regs {
		if r.Namespace != q.Namespace {
			continue
		}
		s, ok := seen[r.ServiceName]
		if !ok {
			s = &structs.ServiceRegistrationStub{ServiceName: r.ServiceName}
			seen[r.ServiceName] = s
			stub.Services = append(stub.Services, s)
		}
		s.Tags = append(s.Tags, r.Tags...)
	}
	return []*structs.ServiceRegistrationListStub{stub}, f.index, nil
}

func svcReg(name, addr string, port int, tags ...string) *structs.ServiceRegistration {
	return &structs.ServiceRegistration{ID: "_nomad-task-x-" + name, ServiceName: name, Namespace: "default", NodeID: "n1",
		Datacenter: "dc1", JobID: "job", AllocID: "a1", Address: addr, Port: port, Tags: tags}
}

func renderOnce(t *testing.T, cat ServiceSource, tmpl string) (string, error) {
	req := testPrestartRequest(t)
	req.Task.Templates = []*structs.Template{{EmbeddedTmpl: tmpl, DestPath: "local/out", LeftDelim: "{{", RightDelim: "}}", Once: true}}
	h := newTemplateHook(templateHookConfig{Region: "global", Services: cat, NodeSecret: "node-secret"})
	if err := h.Prestart(context.Background(), req, &prestartResponse{}); err != nil {
		return "", err
	}
	b, err := os.ReadFile(filepath.Join(req.TaskDir, "local/out"))
	return string(b), err
}

func TestTemplateHook_NomadService(t *testing.T) {
	cat := newFakeCatalog(svcReg("web", "10.0.0.1", 8080, "v1"), svcReg("web", "10.0.0.2", 8081, "v2"), svcReg("db", "10.0.0.3", 5432, "primary"))
	cases := []struct {
		name, tmpl, want, err string
	}{
		{name: "address and port", tmpl: `{{ range nomadService "web" }}{{ .Address }}:{{ .Port }} {{ end }}`, want: "10.0.0.1:8080 10.0.0.2:8081 "},
		{name: "tag filter", tmpl: `{{ range nomadService "v2.web" }}{{ .Address }}{{ end }}`, want: "10.0.0.2"},
		{name: "fields", tmpl: `{{ with index (nomadService "db") 0 }}{{ .Name }} {{ .Node }} {{ .Datacenter }} {{ .JobID }} {{ .AllocID }} {{ join "," .Tags }}{{ end }}`, want: "db n1 dc1 job a1 primary"},
		{name: "choose", tmpl: `{{ range nomadService 1 "k" "web" }}{{ .Port }}{{ end }}`, want: "8080"},
		{name: "no instance renders empty", tmpl: `[{{ range nomadService "nope" }}x{{ end }}]`, want: "[]"},
		{name: "list", tmpl: `{{ range nomadServices }}{{ .Name }}={{ join "," .Tags }};{{ end }}`, want: "db=primary;web=v1,v2;"},
		{name: "other region", tmpl: `{{ nomadService "web@eu" }}`, err: `names region "eu"`},
		{name: "bad args", tmpl: `{{ nomadService 1 "web" }}`, err: "expected arguments <service> or <count> <key> <service>"},
		{name: "no source", tmpl: `{{ nomadService "web" }}`, err: "this client reads no Nomad services"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := ServiceSource(cat)
			if tc.name == "no source" {
				src = nil
			}
			out, err := renderOnce(t, src, tc.tmpl)
			if tc.err != "" {
				must.ErrorContains(t, err, tc.err)
				return
			}
			must.NoError(t, err)
			must.Eq(t, tc.want, out)
		})
	}
	cat.mu.Lock()
	defer cat.mu.Unlock()
	must.Eq(t, "node-secret", cat.queries[0].Token)
	must.Eq(t, "default", cat.queries[0].Namespace)
}

// A service's new instance renders the template again and applies its
// change_mode.
func TestTemplateHook_NomadServiceWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cat := newFakeCatalog(svcReg("web", "10.0.0.1", 8080))
		ctl := &fakeControl{}
		stop := make(chan struct{})
		defer close(stop)
		req := testPrestartRequest(t)
		req.Task.Templates = []*structs.Template{{EmbeddedTmpl: `{{ range nomadService "web" }}{{ .Address }}:{{ .Port }}{{ end }}`,
			DestPath: "local/out", LeftDelim: "{{", RightDelim: "}}", ChangeMode: structs.TemplateChangeModeRestart}}
		h := newTemplateHook(templateHookConfig{Region: "global", Services: cat, Control: ctl, Stop: []<-chan struct{}{stop}})
		must.NoError(t, h.Prestart(context.Background(), req, &prestartResponse{}))
		cat.set(svcReg("web", "10.0.0.9", 9090))
		time.Sleep(time.Minute)
		synctest.Wait()
		b, err := os.ReadFile(filepath.Join(req.TaskDir, "local/out"))
		must.NoError(t, err)
		must.Eq(t, "10.0.0.9:9090", string(b))
		ctl.mu.Lock()
		defer ctl.mu.Unlock()
		must.Eq(t, []string{reasonTemplateRestart}, ctl.restarts)
	})
}
