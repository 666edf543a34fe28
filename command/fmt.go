package command

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

const fmtUsage = `
Usage: nomad fmt [options] [paths ...]

  Rewrites Nomad agent configuration and job files (.nomad and .hcl) in the
  canonical HCL layout. A directory means the files in it (and, with
  -recursive, in its subdirectories); no path means the current directory.
  A single "-" reads standard input and writes the result to standard
  output.

Format Options:

  -check      Only check: exit 1 when a file is not in the canonical layout
              (or is not valid HCL), and write nothing. Overrides -write.
  -list       List the files whose layout differs (default true).
  -recursive  Process the subdirectories of directories too.
  -write      Overwrite the files with the canonical layout (default true;
              ignored for standard input).
`

// hclFormatter carries one nomad fmt run: its settings and what it found.
type hclFormatter struct {
	list, check, write, toStdout, recursive bool

	out      io.Writer
	files    map[string]*hcl.File
	diags    hcl.Diagnostics
	errs     []error
	unformed bool
}

func runFmt(args []string, s Streams) int {
	f := &hclFormatter{out: s.Stdout, files: map[string]*hcl.File{}}
	fs := newFlagSet("fmt", s.Stderr, fmtUsage)
	fs.BoolVar(&f.check, "check", false, "Only check the files' layout")
	fs.BoolVar(&f.write, "write", true, "Overwrite the files")
	fs.BoolVar(&f.list, "list", true, "List the files whose layout differs")
	fs.BoolVar(&f.recursive, "recursive", false, "Process subdirectories")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	paths := fs.Args()
	stdin := len(paths) > 0 && paths[0] == "-"
	switch {
	case stdin && len(paths) > 1:
		fmt.Fprintln(s.Stderr, `"-" (standard input) cannot be combined with other paths`)
		return 1
	case stdin:
		f.toStdout, f.write, f.list = true, false, false
	case len(paths) == 0:
		paths = []string{"."}
	}
	if f.check {
		f.write = false
	}
	if !f.list && !f.write {
		f.toStdout = true
	}

	if stdin {
		in := s.Stdin
		if in == nil {
			in = os.Stdin
		}
		f.file("<stdin>", in)
	} else {
		for _, p := range paths {
			f.path(p)
		}
	}

	if f.diags.HasErrors() {
		w := hcl.NewDiagnosticTextWriter(s.Stderr, f.files, 80, false)
		_ = w.WriteDiagnostics(f.diags)
	}
	for _, err := range f.errs {
		fmt.Fprintln(s.Stderr, err)
	}
	if f.diags.HasErrors() || len(f.errs) > 0 || (f.check && f.unformed) {
		return 1
	}
	return 0
}

// isHCLFile reports whether nomad fmt handles a file of this name.
func isHCLFile(name string) bool {
	ext := filepath.Ext(name)
	return ext == ".nomad" || ext == ".hcl"
}

func (f *hclFormatter) path(p string) {
	info, err := os.Stat(p)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("No file or directory at %s", p))
		return
	}
	if info.IsDir() {
		f.dir(p)
		return
	}
	if !isHCLFile(p) {
		f.errs = append(f.errs, fmt.Errorf("%s: only .nomad and .hcl files can be processed using nomad fmt", p))
		return
	}
	f.open(p)
}

func (f *hclFormatter) dir(p string) {
	entries, err := os.ReadDir(p)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("Failed to list directory %s: %w", p, err))
		return
	}
	for _, e := range entries {
		sub := filepath.Join(p, e.Name())
		switch {
		case e.IsDir():
			if f.recursive {
				f.dir(sub)
			}
		case e.Type().IsRegular() && isHCLFile(e.Name()):
			f.open(sub)
		}
	}
}

func (f *hclFormatter) open(p string) {
	fp, err := os.Open(p)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("Failed to open file %s: %w", p, err))
		return
	}
	defer fp.Close()
	f.file(p, fp)
}

// file formats one file: files that are not valid HCL are reported and
// left as they are.
func (f *hclFormatter) file(name string, r io.Reader) {
	src, err := io.ReadAll(r)
	if err != nil {
		f.errs = append(f.errs, fmt.Errorf("Failed to read file %s: %w", name, err))
		return
	}
	f.files[name] = &hcl.File{Body: hcl.EmptyBody(), Bytes: src}
	if _, diags := hclsyntax.ParseConfig(src, name, hcl.InitialPos); diags.HasErrors() {
		f.diags = append(f.diags, diags...)
		return
	}
	wf, diags := hclwrite.ParseConfig(src, name, hcl.InitialPos)
	if diags.HasErrors() {
		f.diags = append(f.diags, diags...)
		return
	}
	out := wf.Bytes()
	if !bytes.Equal(src, out) {
		f.unformed = true
		if f.list {
			fmt.Fprintln(f.out, name)
		}
		if f.write {
			if err := writeInPlace(name, out); err != nil {
				f.errs = append(f.errs, fmt.Errorf("Failed to write file %s: %w", name, err))
				return
			}
		}
	}
	if f.toStdout {
		_, _ = f.out.Write(out)
	}
}

// writeInPlace replaces a file's contents, keeping its mode.
func writeInPlace(name string, data []byte) error {
	info, err := os.Stat(name)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	return os.WriteFile(name, data, info.Mode().Perm())
}
