package nomad

import (
	"fmt"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// Namespace meta keys that bound max_run_duration for the batch and
// sysbatch jobs of a namespace, so a platform team sets the limit once
// rather than every job author. Meta, not new fields, so that
// `nomad namespace apply` and the official client set them as they are.
const (
	// NamespaceMaxRunDefaultKey is the max_run_duration a batch or
	// sysbatch group without one is stored with.
	NamespaceMaxRunDefaultKey = "max_run_duration_default"
	// NamespaceMaxRunMaxKey is the longest max_run_duration a group may
	// ask for; with no default set, it is the default too.
	NamespaceMaxRunMaxKey = "max_run_duration_max"
)

// namespaceMaxRun is what a namespace's meta says about max_run_duration;
// zero means unset.
type namespaceMaxRun struct {
	def, ceiling time.Duration
}

// parseNamespaceMaxRun reads and checks the namespace's max_run_duration
// meta keys: Go durations of at least one second, the default no longer
// than the ceiling. The error names the key and the value.
func parseNamespaceMaxRun(meta map[string]string) (namespaceMaxRun, error) {
	var out namespaceMaxRun
	read := func(key string, into *time.Duration) error {
		v, ok := meta[key]
		if !ok {
			return nil
		}
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			return fmt.Errorf("meta %s %q is not a duration: use a Go duration such as \"30m\" or \"2h\"", key, v)
		case d < structs.MinMaxRunDuration:
			return fmt.Errorf("meta %s %q is not allowed: must be at least %s", key, v, structs.MinMaxRunDuration)
		}
		*into = d
		return nil
	}
	if err := read(NamespaceMaxRunDefaultKey, &out.def); err != nil {
		return out, err
	}
	if err := read(NamespaceMaxRunMaxKey, &out.ceiling); err != nil {
		return out, err
	}
	if out.def > 0 && out.ceiling > 0 && out.def > out.ceiling {
		return out, fmt.Errorf("meta %s %q is not allowed: above %s %q", NamespaceMaxRunDefaultKey, meta[NamespaceMaxRunDefaultKey], NamespaceMaxRunMaxKey, meta[NamespaceMaxRunMaxKey])
	}
	return out, nil
}

// validateNamespaceMaxRun refuses, with a 400, a namespace write whose
// max_run_duration meta is malformed; nothing is stored.
func validateNamespaceMaxRun(ns *structs.Namespace) error {
	if _, err := parseNamespaceMaxRun(ns.Meta); err != nil {
		return structs.NewBadRequestf("Invalid namespace %q: %v", ns.Name, err)
	}
	return nil
}

// applyNamespaceMaxRun gives each batch or sysbatch group of job without
// max_run_duration the namespace's default (or its ceiling when only
// that is set), and refuses, with a 400, a group asking for more than
// the ceiling. Service and system jobs are left alone. Only the job
// being admitted is touched: changing the meta never rewrites stored
// jobs, and the next version of a job meets the values of that time.
func applyNamespaceMaxRun(ns *structs.Namespace, job *structs.Job) error {
	if job.Type != structs.JobTypeBatch && job.Type != structs.JobTypeSysBatch {
		return nil
	}
	lim, err := parseNamespaceMaxRun(ns.Meta)
	if err != nil {
		// Written before the check existed: refuse rather than guess.
		return structs.NewBadRequestf("namespace %q: %v", ns.Name, err)
	}
	def := lim.def
	if def == 0 {
		def = lim.ceiling
	}
	var errs structs.MultiError
	for _, tg := range job.TaskGroups {
		switch {
		case tg.MaxRunDuration == nil:
			if def > 0 {
				tg.MaxRunDuration = new(def)
			}
		case lim.ceiling > 0 && *tg.MaxRunDuration > lim.ceiling:
			errs.Add(fmt.Errorf("Task group %q: max_run_duration %s is above the ceiling of namespace %q (meta %s = %s)", tg.Name, *tg.MaxRunDuration, ns.Name, NamespaceMaxRunMaxKey, lim.ceiling))
		}
	}
	if err := errs.ErrorOrNil(); err != nil {
		return structs.NewBadRequest(err.Error())
	}
	return nil
}
