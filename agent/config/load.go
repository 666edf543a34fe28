package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
)

// Load reads the given files and directories in order on top of c;
// a directory contributes its *.hcl and *.json files in lexical order
// (editor backups and lock files skipped). Later files override earlier
// ones key by key. Keys Nomad has but nomadq does not implement are
// reported through warn and otherwise ignored; a key Nomad does not have
// is an error naming the key and its position.
func Load(c *Config, paths []string, warn func(string)) error {
	for _, p := range paths {
		files, err := configFiles(p)
		if err != nil {
			return fmt.Errorf("error loading configuration from %s: %w", p, err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				return fmt.Errorf("error loading configuration from %s: %w", f, err)
			}
			if err := Parse(c, f, src, warn); err != nil {
				return err
			}
			c.Files = append(c.Files, f)
		}
	}
	return nil
}

// configFiles lists what one -config path contributes: the file itself
// (whatever its name), or a directory's config files in lexical order.
func configFiles(p string) ([]string, error) {
	fi, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || (ext != ".hcl" && ext != ".json") || isEditorFile(name) {
			continue
		}
		files = append(files, filepath.Join(p, name))
	}
	sort.Strings(files)
	return files, nil
}

// isEditorFile reports the files editors leave beside the one being
// edited (emacs lock and autosave files, backups ending in ~), which a
// config directory must not load half-written.
func isEditorFile(name string) bool {
	return strings.HasPrefix(name, ".#") ||
		strings.HasSuffix(name, "~") ||
		(strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"))
}

// Parse applies one config file's settings to c. The file is read
// as JSON when its name ends in .json or its content starts with "{"
// (Nomad's loader accepts JSON under any name), as HCL otherwise.
func Parse(c *Config, filename string, src []byte, warn func(string)) error {
	if warn == nil {
		warn = func(string) {}
	}
	var (
		f     *hcl.File
		diags hcl.Diagnostics
	)
	switch {
	case len(bytes.TrimSpace(src)) == 0:
		return nil
	case isJSONConfig(filename, src):
		f, diags = hcljson.Parse(src, filename)
	default:
		f, diags = hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return fmt.Errorf("error parsing %s: %s", filename, diags.Error())
	}
	d := &cfgDecoder{src: src}
	d.top(c, f.Body)
	for _, w := range sorted(d.warnings) {
		warn(w)
	}
	return d.err()
}

// isJSONConfig reports whether a config file is JSON: by its name, or,
// for any other name, by a first non-blank byte that opens an object,
// which no HCL file can start with.
func isJSONConfig(filename string, src []byte) bool {
	if strings.HasSuffix(filename, ".json") {
		return true
	}
	trimmed := bytes.TrimLeft(src, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}
