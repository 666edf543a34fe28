package jobspec

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// The go-cty-funcs filesystem package needs github.com/bmatcuk/doublestar,
// which is not in go.sum, so the filesystem functions are implemented here.
// fileset (which needs ** globbing) is not offered.

// fsFunctions returns the filesystem functions. Relative paths are resolved
// in baseDir, the directory of the job file.
func fsFunctions(baseDir string) map[string]function.Function {
	resolve := func(p string) string {
		p, err := expandHome(p)
		if err != nil || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(baseDir, p)
	}
	strFunc := func(impl func(string) (string, error)) function.Function {
		return function.New(&function.Spec{
			Params: []function.Parameter{{Name: "path", Type: cty.String}},
			Type:   function.StaticReturnType(cty.String),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				s, err := impl(args[0].AsString())
				if err != nil {
					return cty.UnknownVal(cty.String), err
				}
				return cty.StringVal(s), nil
			},
		})
	}
	return map[string]function.Function{
		"file": strFunc(func(p string) (string, error) {
			b, err := os.ReadFile(resolve(p))
			if err != nil {
				return "", fmt.Errorf("read %s: %w", p, err)
			}
			if !utf8.Valid(b) {
				return "", fmt.Errorf("contents of %s are not valid UTF-8; use filebase64 instead", p)
			}
			return string(b), nil
		}),
		"filebase64": strFunc(func(p string) (string, error) {
			b, err := os.ReadFile(resolve(p))
			if err != nil {
				return "", fmt.Errorf("read %s: %w", p, err)
			}
			return base64.StdEncoding.EncodeToString(b), nil
		}),
		"fileexists": function.New(&function.Spec{
			Params: []function.Parameter{{Name: "path", Type: cty.String}},
			Type:   function.StaticReturnType(cty.Bool),
			Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
				p := args[0].AsString()
				fi, err := os.Stat(resolve(p))
				switch {
				case os.IsNotExist(err):
					return cty.False, nil
				case err != nil:
					return cty.UnknownVal(cty.Bool), fmt.Errorf("stat %s: %w", p, err)
				case !fi.Mode().IsRegular():
					return cty.UnknownVal(cty.Bool), fmt.Errorf("%s is not a regular file", p)
				}
				return cty.True, nil
			},
		}),
		"abspath": strFunc(func(p string) (string, error) {
			return filepath.Abs(resolve(p))
		}),
		"basename": strFunc(func(p string) (string, error) {
			return filepath.Base(p), nil
		}),
		"dirname": strFunc(func(p string) (string, error) {
			return filepath.Dir(p), nil
		}),
		"pathexpand": strFunc(expandHome),
	}
}

// expandHome replaces a leading ~ with the user's home directory.
func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expand %s: %w", p, err)
	}
	return filepath.Join(home, p[1:]), nil
}
