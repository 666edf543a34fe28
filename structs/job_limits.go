package structs

import (
	"fmt"
	"math"
)

// JobDefaultMaxCount is the default of the server's job_max_count: the
// most allocations one job may ask for, as a single group's count and as
// the sum of its groups' counts. It is Nomad's default. A server holds
// every allocation of a job in memory and the scheduler builds them all
// in one plan, so a count in the billions (a typo, or a hostile request)
// exhausts a server's memory before any limit downstream is reached.
const JobDefaultMaxCount = 50_000

// Size limits of what one job may hold. The request body limit (10 MB)
// bounds a job's total size but not how it is spread: one list may hold
// a hundred thousand items, and most lists cost more than their bytes.
// Tasks, services, artifacts, templates, env and meta are multiplied by
// every allocation (each task runs, fetches and renders on its own and
// gets its own environment); constraints, affinities, spreads and
// datacenters by every node the scheduler considers. These limits bound
// each list on its own. They are far above what hand-written or
// generated jobs use (a few groups and tasks, a few dozen meta or env
// keys and rules), so they only refuse jobs that could not have been
// meant.
const (
	// MaxTaskGroupsPerJob bounds a job's task groups. Each group is
	// reconciled on its own in every evaluation and has its own summary.
	MaxTaskGroupsPerJob = 1000

	// MaxTasksPerGroup bounds a group's tasks. All of them run on one
	// node in every allocation; no node runs a thousand processes for
	// one allocation.
	MaxTasksPerGroup = 1000

	// MaxMapKeys bounds the keys of one meta map (of the job, a group or
	// a task) and of a task's env: each becomes an environment variable
	// of every task of every allocation.
	MaxMapKeys = 1000

	// MaxRulesPerBlock bounds the constraints, the affinities and the
	// spreads of one job, group or task (each kind on its own), and the
	// targets of one spread: the scheduler checks each against every
	// node it considers.
	MaxRulesPerBlock = 256

	// MaxPortsPerNetwork bounds the ports (static and dynamic) of one
	// network block; a node's default dynamic range has 12,000.
	MaxPortsPerNetwork = 1000

	// MaxListEntries bounds the other lists of a job: its datacenters
	// and periodic crons, a group's services and volumes, and a task's
	// services, artifacts, templates and volume mounts.
	MaxListEntries = 256
)

// tooMany reports, and adds to errs, a collection of what at ctx that
// holds more than limit items. Callers skip checking the items of a
// collection that is too large: its size is the problem to fix first,
// and one message per item would make the answer as large as the job.
func tooMany(errs *MultiError, ctx, what string, n, limit int) bool {
	if n <= limit {
		return false
	}
	errs.Add(fmt.Errorf("%s: %d %s are not allowed: at most %d", ctx, n, what, limit))
	return true
}

// CheckMaxCount refuses a job whose task group counts are above limit,
// the server's job_max_count: each group on its own, and, when no group
// alone is, their sum. A limit of 0 (or less) means no limit, as in
// Nomad. Negative counts are Validate's to refuse; they are left out of
// the sum here.
func (j *Job) CheckMaxCount(limit int) error {
	if limit <= 0 {
		return nil
	}
	var errs MultiError
	total := 0
	for _, tg := range j.TaskGroups {
		if tg == nil || tg.Count <= 0 {
			continue
		}
		if tg.Count > limit {
			errs.Add(fmt.Errorf("task group %q count %d is more than the server's job_max_count %d", tg.Name, tg.Count, limit))
		}
		// Saturate rather than wrap: a wrapped sum could pass the check.
		if total > math.MaxInt-tg.Count {
			total = math.MaxInt
		} else {
			total += tg.Count
		}
	}
	if len(errs.Errors) == 0 && total > limit {
		errs.Add(fmt.Errorf("total count of the job's task groups %d is more than the server's job_max_count %d", total, limit))
	}
	return errs.ErrorOrNil()
}

// CheckPriority refuses a job whose priority is outside 1 and max, the
// server's job_max_priority, in Nomad's words with the value added.
// Validate only bounds a priority by JobMaxPriorityLimit, so that a job
// checked before it reaches a server (by the CLI, or an agent without
// one) is not refused for a priority its servers allow.
func (j *Job) CheckPriority(max int) error {
	if j.Type == JobTypeCore || (j.Priority >= JobMinPriority && j.Priority <= max) {
		return nil
	}
	return fmt.Errorf("job priority must be between [%d, %d], got %d (the server's job_max_priority is %d)", JobMinPriority, max, j.Priority, max)
}

// MaxValueDepth bounds how deep a free-form value of a job (a task's
// driver config, a group's scaling policy) may nest maps and lists. The
// Raft codec refuses to decode anything nested deeper than 1,024 levels
// (go-msgpack's limit), so a deeper value would be accepted, written to
// the log and then fail to apply on every server. 100 leaves the codec
// room for the request around the value and is far beyond any driver's
// configuration.
const MaxValueDepth = 100

// tooDeep reports, and adds to errs, a free-form value at ctx that nests
// deeper than MaxValueDepth.
func tooDeep(errs *MultiError, ctx, what string, v any) {
	if valueDepth(v, MaxValueDepth) > MaxValueDepth {
		errs.Add(fmt.Errorf("%s: %s nests more than %d levels of maps and lists: at most %d are allowed", ctx, what, MaxValueDepth, MaxValueDepth))
	}
}

// valueDepth returns how many levels of maps and lists v nests (a scalar
// is 0, an empty map 1), counting no further than limit+1 so that a
// hostile value costs no more than a legal one.
func valueDepth(v any, limit int) int {
	if limit < 0 {
		return 0
	}
	deepest := 0
	visit := func(e any) {
		if d := valueDepth(e, limit-1); d > deepest {
			deepest = d
		}
	}
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			visit(e)
		}
	case []any:
		for _, e := range x {
			visit(e)
		}
	case []map[string]any:
		for _, e := range x {
			visit(e)
		}
	default:
		return 0
	}
	return deepest + 1
}
