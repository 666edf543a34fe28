package command

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

const jobPlanUsage = `
Usage: nomad job plan [options] <path>

  Plan invokes a dry-run of the scheduler to determine the effects of
  submitting either a new or updated version of a job. It shows the
  difference from the submitted job (including max_run_duration changes)
  and what the scheduler would place.

  Exit codes: 0 when no allocations would be created or destroyed, 1 when
  some would, 255 on errors.
`

func runJobPlan(args []string, s Streams) int {
	var (
		af      apiFlags
		jf      jobFileFlags
		diff    bool
		verbose bool
	)
	fs := newFlagSet("job plan", s.Stderr, jobPlanUsage)
	af.register(fs)
	jf.register(fs)
	fs.BoolVar(&diff, "diff", true, "Show the difference between the submitted and the planned job")
	fs.BoolVar(&verbose, "verbose", false, "Show the unchanged fields too and full scores")
	if err := fs.Parse(args); err != nil {
		return 255
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <path>")
		return 255
	}
	path := fs.Arg(0)
	job, err := jf.parse(path, s.Stdin)
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 255
	}
	if _, err := validateJob(job, jf.maxRunWarnings); err != nil {
		fmt.Fprintf(s.Stderr, "Job validation errors:\n%s\n", err)
		return 255
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 255
	}
	if job.Region != nil && *job.Region != "" {
		client.SetRegion(*job.Region)
	}
	if job.Namespace != nil && *job.Namespace != "" {
		client.SetNamespace(*job.Namespace)
	}
	resp, reasons, err := planJob(client, job, diff, jf.maxRunWarnings)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error during plan: %s\n", err)
		return 255
	}
	if resp.Diff != nil {
		fmt.Fprintln(s.Stdout, formatJobDiff(resp.Diff, verbose))
		fmt.Fprintln(s.Stdout)
	}
	fmt.Fprintln(s.Stdout, "Scheduler dry-run:")
	fmt.Fprintln(s.Stdout, formatDryRun(resp, reasons))
	if resp.Warnings != "" {
		fmt.Fprintf(s.Stdout, "\nJob Warnings:\n%s\n", resp.Warnings)
	}
	fmt.Fprintf(s.Stdout, "\nJob Modify Index: %d\n", resp.JobModifyIndex)
	fmt.Fprintf(s.Stdout, `To submit the job with version verification run:

nomad job run -check-index %d %s

When running the job with the check-index flag, the job will only be run if the
job modify index given matches the server-side version. If the index has
changed, another user has modified the job and the plan's results are
potentially invalid.
`, resp.JobModifyIndex, path)
	return planExitCode(resp)
}

func planExitCode(resp *api.JobPlanResponse) int {
	if resp.Annotations == nil {
		return 0
	}
	for _, u := range resp.Annotations.DesiredTGUpdates {
		if u.Place+u.Stop+u.DestructiveUpdate+u.Migrate+u.Canary > 0 {
			return 1
		}
	}
	return 0
}

// planJob asks the server for a dry run, as api.Jobs.Plan does, and also
// returns the reason nomadq gives for each group no node can take
// (InfeasibleReason, which api.AllocationMetric does not carry): it names
// what is missing, such as a driver no node offers.
func planJob(client *api.Client, job *api.Job, diff bool, warnings maxRunWarnings) (*api.JobPlanResponse, map[string]string, error) {
	var raw json.RawMessage
	req, err := planRequestBody(job, diff, warnings)
	if err != nil {
		return nil, nil, err
	}
	if _, err := client.Raw().Write(planPath(job), req, &raw, nil); err != nil {
		return nil, nil, err
	}
	var resp api.JobPlanResponse
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, nil, err
	}
	var extra struct {
		FailedTGAllocs map[string]struct{ InfeasibleReason string }
	}
	if err := json.Unmarshal(raw, &extra); err != nil {
		return nil, nil, err
	}
	reasons := make(map[string]string, len(extra.FailedTGAllocs))
	for tg, m := range extra.FailedTGAllocs {
		if m.InfeasibleReason != "" {
			reasons[tg] = m.InfeasibleReason
		}
	}
	return &resp, reasons, nil
}

// formatDryRun renders the scheduler part of a plan; reasons are the
// groups' infeasibility reasons (see planJob).
func formatDryRun(resp *api.JobPlanResponse, reasons map[string]string) string {
	var b strings.Builder
	if len(resp.FailedTGAllocs) == 0 {
		b.WriteString("- All tasks successfully allocated.")
	} else {
		b.WriteString("- WARNING: Failed to place all allocations.")
		for _, tg := range sortedKeys(resp.FailedTGAllocs) {
			m := resp.FailedTGAllocs[tg]
			noun := "allocation"
			if m.CoalescedFailures > 0 {
				noun += "s"
			}
			fmt.Fprintf(&b, "\n  Task Group %q (failed to place %d %s):\n%s", tg, m.CoalescedFailures+1, noun, strings.TrimRight(formatAllocMetrics(m, false, "    "), "\n"))
			if r := reasons[tg]; r != "" {
				fmt.Fprintf(&b, "\n    * Infeasible: %s", r)
			}
		}
	}
	if !resp.NextPeriodicLaunch.IsZero() {
		fmt.Fprintf(&b, "\n- If submitted now, next periodic launch would be at %s.", formatTime(resp.NextPeriodicLaunch))
	}
	return b.String()
}

func diffMarker(t string) string {
	switch t {
	case "Added":
		return "+"
	case "Deleted":
		return "-"
	case "Edited":
		return "+/-"
	}
	return ""
}

// formatJobDiff renders a job diff as Nomad's job plan does: the job, its
// task groups and their tasks, each with its changed fields and objects.
// An added or deleted job, group or task prints only its header unless
// verbose, as every field of a new job is "added" and most are defaults.
// Durations print as durations ("10m"), not nanoseconds.
func formatJobDiff(d *api.JobDiff, verbose bool) string {
	var b strings.Builder
	if d.Type == "None" {
		fmt.Fprintf(&b, "Job: %q", d.ID)
	} else {
		fmt.Fprintf(&b, "%s Job: %q", diffMarker(d.Type), d.ID)
	}
	if d.Type == "Edited" || verbose {
		writeFields(&b, d.Fields, "  ", jobType)
		writeObjects(&b, d.Objects, "  ", jobType)
	}
	for _, tg := range d.TaskGroups {
		fmt.Fprintf(&b, "\n%s Task Group: %q", diffMarker(tg.Type), tg.Name)
		if len(tg.Updates) > 0 {
			var parts []string
			for _, k := range sortedKeys(tg.Updates) {
				parts = append(parts, fmt.Sprintf("%d %s", tg.Updates[k], k))
			}
			fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
		}
		if tg.Type == "Edited" || verbose {
			writeFields(&b, tg.Fields, "  ", groupType)
			writeObjects(&b, tg.Objects, "  ", groupType)
		}
		for _, t := range tg.Tasks {
			fmt.Fprintf(&b, "\n  %s Task: %q", diffMarker(t.Type), t.Name)
			if len(t.Annotations) > 0 {
				fmt.Fprintf(&b, " (%s)", strings.Join(t.Annotations, ", "))
			}
			if t.Type == "Edited" || verbose {
				writeFields(&b, t.Fields, "    ", taskType)
				writeObjects(&b, t.Objects, "    ", taskType)
			}
		}
	}
	return b.String()
}

// The types the server's diff walks: a field's name (or, in a flattened
// list or map, its path such as "Services[0].Checks[0].Interval") names
// a field of these, which tells a duration from a number.
var (
	jobType      = reflect.TypeFor[structs.Job]()
	groupType    = reflect.TypeFor[structs.TaskGroup]()
	taskType     = reflect.TypeFor[structs.Task]()
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
)

// writeFields writes the changed fields of an object of type owner.
func writeFields(b *strings.Builder, fields []*api.FieldDiff, indent string, owner reflect.Type) {
	sort.SliceStable(fields, func(i, j int) bool { return fields[i].Name < fields[j].Name })
	for _, f := range fields {
		isDuration := pathType(owner, f.Name) == durationType
		value := func(v string) string {
			if isDuration {
				v = diffDuration(v)
			}
			return strconv.Quote(v)
		}
		switch f.Type {
		case "Added":
			fmt.Fprintf(b, "\n%s+ %s: %s", indent, f.Name, value(f.New))
		case "Deleted":
			fmt.Fprintf(b, "\n%s- %s: %s", indent, f.Name, value(f.Old))
		case "Edited":
			fmt.Fprintf(b, "\n%s+/- %s: %s => %s", indent, f.Name, value(f.Old), value(f.New))
		case "None":
			fmt.Fprintf(b, "\n%s%s: %s", indent, f.Name, value(f.New))
		}
	}
}

// writeObjects writes the changed objects of an object of type owner: a
// nested struct's fields are named within it, a flattened list's or
// map's by their path from owner.
func writeObjects(b *strings.Builder, objs []*api.ObjectDiff, indent string, owner reflect.Type) {
	for _, o := range objs {
		inner := owner
		if t := nestedStruct(owner, o.Name); t != nil {
			inner = t
		}
		fmt.Fprintf(b, "\n%s%s %s {", indent, diffMarker(o.Type), o.Name)
		writeFields(b, o.Fields, indent+"  ", inner)
		writeObjects(b, o.Objects, indent+"  ", inner)
		fmt.Fprintf(b, "\n%s}", indent)
	}
}

// pathType is the type of the field path names in owner, pointers and
// list elements taken off; nil when owner has no such field (a map
// key, a driver's config).
func pathType(owner reflect.Type, path string) reflect.Type {
	t := owner
	for _, seg := range strings.Split(path, ".") {
		if i := strings.IndexByte(seg, '['); i >= 0 {
			seg = seg[:i]
		}
		t = elemType(t)
		switch t.Kind() {
		case reflect.Map:
			// The segment is a key; a key with dots in it ends
			// in a field no struct has, which reads as unknown.
			t = t.Elem()
		case reflect.Struct:
			f, ok := t.FieldByName(seg)
			if !ok {
				return nil
			}
			t = f.Type
		default:
			return nil
		}
	}
	return elemType(t)
}

// nestedStruct is the struct type of owner's field name when it holds
// one struct (the server diffs it as an object of its own fields), nil
// for a list, a map or anything else (diffed as flattened paths).
func nestedStruct(owner reflect.Type, name string) reflect.Type {
	for owner.Kind() == reflect.Pointer {
		owner = owner.Elem()
	}
	if owner.Kind() != reflect.Struct {
		return nil
	}
	f, ok := owner.FieldByName(name)
	if !ok {
		return nil
	}
	t := f.Type
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType {
		return nil
	}
	return t
}

func elemType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t
}

// diffDuration renders a diff's nanoseconds as a duration without
// trailing zero units ("10m", "1h30m", "1.5s"); any other text is left
// as it is.
func diffDuration(ns string) string {
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return ns
	}
	return shortDuration(time.Duration(n))
}

// shortDuration is d.String() without the zero units it ends with:
// "10m" for 10m0s, "1h" for 1h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
