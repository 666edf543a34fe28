package taskrunner

import (
	"errors"
	"fmt"
	"strings"
)

// VariableReader reads Nomad Variables for the nomadVar and nomadVarExists
// template functions. The client passes one once it can read variables
// from the servers; until then templates that call those functions fail
// at render time with errNomadVarUnwired.
//
// Templates render once before each run, so a variable read here is the
// value the run starts with: a change during the run re-renders nothing.
// Whoever wires a reader in also owns watching variables for change_mode
// (or refusing change modes other than noop on such templates).
type VariableReader interface {
	// ReadVariable returns the items of the variable at path in
	// namespace; found is false when there is no such variable.
	ReadVariable(namespace, path string) (items map[string]string, found bool, err error)
}

// errNomadVarUnwired is the render error of nomadVar on a client without
// a VariableReader.
var errNomadVarUnwired = errors.New("Nomad Variables are not available to templates in nomadq yet")

// nomadVarFuncs returns the template functions backed by r: nomadVar
// (the items of a variable, as a map from key to value) and
// nomadVarExists. A path may name a namespace as "path@namespace";
// otherwise the task's namespace is used, as in Nomad.
func nomadVarFuncs(r VariableReader, namespace string) map[string]any {
	read := func(name, spec string) (map[string]string, bool, error) {
		if r == nil {
			return nil, false, fmt.Errorf("function %s: %w", name, errNomadVarUnwired)
		}
		path, ns := spec, namespace
		if i := strings.LastIndex(spec, "@"); i >= 0 {
			path, ns = spec[:i], spec[i+1:]
		}
		return r.ReadVariable(ns, path)
	}
	return map[string]any{
		"nomadVar": func(spec string) (map[string]string, error) {
			items, found, err := read("nomadVar", spec)
			if err != nil {
				return nil, err
			}
			if !found {
				// Nomad waits for a missing variable to appear; a render
				// that runs once can only say it is not there.
				return nil, fmt.Errorf("function nomadVar: variable %q not found", spec)
			}
			return items, nil
		},
		"nomadVarExists": func(spec string) (bool, error) {
			_, found, err := read("nomadVarExists", spec)
			return found, err
		},
	}
}
