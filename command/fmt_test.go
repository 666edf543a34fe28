package command

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/shoenig/test/must"
)

const (
	unformattedHCL = "job \"a\" {\ndatacenters=[\"*\"]\n  group \"g\" {\n      count = 1\n  }\n}\n"
	formattedHCL   = "job \"a\" {\n  datacenters = [\"*\"]\n  group \"g\" {\n    count = 1\n  }\n}\n"
)

func TestFmt(t *testing.T) {
	dir := t.TempDir()
	top := filepath.Join(dir, "top.nomad")
	sub := filepath.Join(dir, "sub", "deep.hcl")
	other := filepath.Join(dir, "notes.txt")
	must.NoError(t, os.MkdirAll(filepath.Dir(sub), 0o755))
	reset := func() {
		for _, p := range []string{top, sub, other} {
			must.NoError(t, os.WriteFile(p, []byte(unformattedHCL), 0o644))
		}
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		must.NoError(t, err)
		return string(b)
	}

	t.Run("-check lists and exits 1, writing nothing", func(t *testing.T) {
		reset()
		code, out, _ := run(t, "", "fmt", "-check", "-recursive", dir)
		must.Eq(t, 1, code)
		must.Eq(t, sub+"\n"+top+"\n", out)
		must.Eq(t, unformattedHCL, read(top))
	})
	t.Run("a directory without -recursive stays at its level", func(t *testing.T) {
		reset()
		code, out, errOut := run(t, "", "fmt", dir)
		must.Eq(t, 0, code, must.Sprint(errOut))
		must.Eq(t, top+"\n", out)
		must.Eq(t, formattedHCL, read(top))
		must.Eq(t, unformattedHCL, read(sub))
		must.Eq(t, unformattedHCL, read(other))
		code, out, _ = run(t, "", "fmt", "-check", top)
		must.Eq(t, 0, code)
		must.Eq(t, "", out)
	})
	t.Run("-recursive", func(t *testing.T) {
		reset()
		code, _, _ := run(t, "", "fmt", "-recursive", dir)
		must.Eq(t, 0, code)
		must.Eq(t, formattedHCL, read(sub))
	})
	t.Run("-write=false -list=false prints the result", func(t *testing.T) {
		reset()
		code, out, _ := run(t, "", "fmt", "-write=false", "-list=false", top)
		must.Eq(t, 0, code)
		must.Eq(t, formattedHCL, out)
		must.Eq(t, unformattedHCL, read(top))
	})
	t.Run("standard input", func(t *testing.T) {
		code, out, _ := run(t, unformattedHCL, "fmt", "-")
		must.Eq(t, 0, code)
		must.Eq(t, formattedHCL, out)
	})
	t.Run("invalid HCL is reported and left alone", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "bad.hcl")
		must.NoError(t, os.WriteFile(bad, []byte("job \"a\" {\n"), 0o644))
		code, _, errOut := run(t, "", "fmt", bad)
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "Unclosed configuration block")
		must.Eq(t, "job \"a\" {\n", read(bad))
	})
	t.Run("refusals", func(t *testing.T) {
		code, _, errOut := run(t, "", "fmt", other)
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "only .nomad and .hcl files can be processed")
		code, _, errOut = run(t, "", "fmt", filepath.Join(dir, "missing.hcl"))
		must.Eq(t, 1, code)
		must.StrContains(t, errOut, "No file or directory at")
	})
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		must.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must.NoError(t, os.WriteFile(p, []byte(src), 0o644))
		return p
	}
	good := write("conf/a.hcl", "data_dir = \"/tmp/x\"\nserver {\n  enabled = true\n}\n")
	write("conf/b.json", `{"client": {"enabled": true}}`)

	code, out, errOut := run(t, "", "config", "validate", filepath.Dir(good))
	must.Eq(t, 0, code, must.Sprint(errOut))
	must.Eq(t, "Configuration is valid!\n", out)

	for _, tc := range []struct {
		name, src, wantErr string
	}{
		{"unknown key", "data_dir = \"/x\"\nserver {\n  enabeld = true\n}\n", "enabeld"},
		{"no server or client", "data_dir = \"/x\"\n", "must specify either server, client or dev mode"},
		{"bad value", "data_dir = \"/x\"\nserver {\n  enabled = true\n  bootstrap_expect = -1\n}\n", "server.bootstrap_expect -1 is not allowed"},
		{"syntax", "server {\n", "Unclosed configuration block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := write(tc.name+".hcl", tc.src)
			code, out, errOut := run(t, "", "config", "validate", p)
			must.Eq(t, 1, code)
			must.Eq(t, "", out)
			must.StrContains(t, errOut, tc.wantErr)
		})
	}
	code, _, errOut = run(t, "", "config", "validate")
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Must specify at least one config file or directory")
	code, _, errOut = run(t, "", "config", "validate", filepath.Join(dir, "missing"))
	must.Eq(t, 1, code)
	must.StrContains(t, errOut, "Error loading configuration from")
}
