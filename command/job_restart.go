package command

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/nomad/api"
)

const jobRestartUsage = `
Usage: nomad job restart [options] <job>

  Restarts or reschedules the running allocations of a job, in batches.

  By default the running tasks of each allocation are restarted in place
  (as "nomad alloc restart" does); with -reschedule each allocation is
  stopped and the command waits until its replacement runs.

  Ctrl-C stops the restart after the batch in flight; allocations already
  restarted stay restarted.

Restart Options:

  -all-tasks        Restart every task, including the lifecycle tasks
                    that already finished. Not allowed with -task.
  -batch-size=<n|n%>
                    How many allocations to restart at once, a number or a
                    percentage of the allocations (default 1).
  -batch-wait=<duration|ask>
                    How long to wait between batches (default 0s); "ask"
                    asks before each batch (interactive terminals only,
                    unless -yes).
  -group=<name>     Only allocations of this group; repeatable.
  -task=<name>      Only restart this task; repeatable. Not allowed with
                    -all-tasks or -reschedule.
  -no-shutdown-delay
                    With -reschedule, ignore the groups' and tasks'
                    shutdown_delay.
  -on-error=<ask|fail>
                    After a batch with errors, ask whether to go on (the
                    default; interactive terminals only, unless -yes) or
                    stop.
  -reschedule       Stop each allocation and wait for its replacement
                    instead of restarting it in place.
  -yes              Answer yes to every question.
  -verbose          Show full IDs and the allocations skipped.
`

var batchSizeRe = regexp.MustCompile(`^(\d+)%?$`)

// stringsFlag is a repeatable string flag.
type stringsFlag []string

func (f *stringsFlag) String() string     { return strings.Join(*f, ",") }
func (f *stringsFlag) Set(v string) error { *f = append(*f, v); return nil }

// jobRestart carries one nomad job restart run.
type jobRestart struct {
	client                                     *api.Client
	out, errw                                  io.Writer
	in                                         *bufio.Reader
	allTasks, reschedule, noShutdownDelay, yes bool
	verbose                                    bool
	onError                                    string
	batchWaitAsk                               bool
	batchWait                                  time.Duration
	groups, tasks                              []string
	mu                                         sync.Mutex
}

func runJobRestart(args []string, s Streams) int {
	var (
		af                   apiFlags
		batchSize, batchWait string
		groups, tasks        stringsFlag
	)
	r := &jobRestart{out: s.Stdout, errw: s.Stderr}
	fs := newFlagSet("job restart", s.Stderr, jobRestartUsage)
	af.register(fs)
	fs.BoolVar(&r.allTasks, "all-tasks", false, "Restart every task, including finished lifecycle tasks")
	fs.BoolVar(&r.yes, "yes", false, "Answer yes to every question")
	fs.StringVar(&batchSize, "batch-size", "1", "How many allocations to restart at once (n or n%)")
	fs.StringVar(&batchWait, "batch-wait", "0s", `How long to wait between batches, or "ask"`)
	fs.StringVar(&r.onError, "on-error", "ask", `After a batch with errors: "ask" or "fail"`)
	fs.BoolVar(&r.noShutdownDelay, "no-shutdown-delay", false, "With -reschedule, ignore shutdown_delay")
	fs.BoolVar(&r.reschedule, "reschedule", false, "Stop each allocation and wait for its replacement")
	fs.BoolVar(&r.verbose, "verbose", false, "Show full IDs and the allocations skipped")
	fs.Var(&groups, "group", "Only allocations of this group (repeatable)")
	fs.Var(&tasks, "task", "Only restart this task (repeatable)")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(s.Stderr, "This command takes one argument: <job>")
		return 1
	}
	r.groups, r.tasks = groups, tasks
	_, tty := stdinTerminal(s.Stdin)
	m := batchSizeRe.FindStringSubmatch(batchSize)
	if m == nil {
		fmt.Fprintf(s.Stderr, "Invalid -batch-size value %q: batch size must be an integer or a percentage\n", batchSize)
		return 1
	}
	size, err := strconv.Atoi(m[1])
	if err != nil || size == 0 {
		fmt.Fprintf(s.Stderr, "Invalid -batch-size value %q: number value must be greater than zero\n", batchSize)
		return 1
	}
	percent := strings.HasSuffix(batchSize, "%")
	if strings.EqualFold(batchWait, "ask") {
		if !tty && !r.yes {
			fmt.Fprintln(s.Stderr, `Invalid -batch-wait value "ask": "ask" cannot be used when terminal is not interactive`)
			return 1
		}
		r.batchWaitAsk = true
	} else if r.batchWait, err = time.ParseDuration(batchWait); err != nil || r.batchWait < 0 {
		fmt.Fprintf(s.Stderr, "Invalid -batch-wait value %q: must be a duration such as \"10s\" or \"ask\"\n", batchWait)
		return 1
	}
	switch r.onError {
	case "ask":
		if !tty && !r.yes {
			fmt.Fprintln(s.Stderr, `Invalid -on-error value "ask": "ask" cannot be used when terminal is not interactive (use -on-error=fail or -yes)`)
			return 1
		}
	case "fail":
	default:
		fmt.Fprintf(s.Stderr, "Invalid -on-error value %q: valid options are \"ask\" and \"fail\"\n", r.onError)
		return 1
	}
	if r.allTasks && len(tasks) > 0 {
		fmt.Fprintln(s.Stderr, "The -all-tasks option cannot be used with -task")
		return 1
	}
	if r.reschedule && len(tasks) > 0 {
		fmt.Fprintln(s.Stderr, "The -reschedule option cannot be used with -task")
		return 1
	}
	if r.noShutdownDelay && !r.reschedule {
		fmt.Fprintln(s.Stderr, "The -no-shutdown-delay option only applies with -reschedule")
		return 1
	}
	if s.Stdin != nil {
		r.in = bufio.NewReader(s.Stdin)
	}
	if r.client, err = af.client(); err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	job, err := resolveJob(r.client, fs.Arg(0))
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if r.reschedule && job.Type != api.JobTypeBatch && job.Type != api.JobTypeService && job.Type != api.JobTypeSystem {
		fmt.Fprintf(s.Stderr, "Jobs of type %q are not allowed to be rescheduled.\n", job.Type)
		return 1
	}
	return r.run(job, size, percent)
}

func (r *jobRestart) say(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintf(r.out, format+"\n", args...)
}

func (r *jobRestart) id(id string) string { return shortID(id, r.verbose) }

func (r *jobRestart) run(job *api.JobListStub, size int, percent bool) int {
	q := &api.QueryOptions{Namespace: job.Namespace}
	stubs, _, err := r.client.Jobs().Allocations(job.ID, true, q)
	if err != nil {
		fmt.Fprintf(r.errw, "Error retrieving allocations for job %q: %v\n", job.ID, err)
		return 1
	}
	allocs := r.filter(stubs)
	if len(allocs) == 0 {
		r.say("No allocations to restart")
		return 0
	}
	if percent {
		size = int(math.Ceil(float64(len(allocs)*size) / 100))
	}
	r.say("==> %s: Restarting %d allocation%s", formatTime(time.Now()), len(allocs), plural(len(allocs)))

	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	defer signal.Stop(interrupted)

	var errs []error
	canceled := false
	for start := 0; start < len(allocs); start += size {
		batch := allocs[start:min(start+size, len(allocs))]
		if size > 1 {
			r.say("==> %s: Restarting %s batch of %d allocations", formatTime(time.Now()), ordinal(start/size+1), len(batch))
		}
		var (
			wg       sync.WaitGroup
			batchMu  sync.Mutex
			batchErr []error
		)
		for _, a := range batch {
			wg.Go(func() {
				if err := r.handle(a, job.Namespace); err != nil {
					batchMu.Lock()
					batchErr = append(batchErr, fmt.Errorf("Error restarting allocation %q: %w", r.id(a.ID), err))
					batchMu.Unlock()
				}
			})
		}
		wg.Wait()
		errs = append(errs, batchErr...)
		if start+size >= len(allocs) {
			break
		}
		select {
		case <-interrupted:
			r.say("==> %s: Restart interrupted, no more allocations will be restarted", formatTime(time.Now()))
			canceled = true
		default:
		}
		if canceled {
			break
		}
		if len(batchErr) > 0 && r.onError == "fail" {
			r.say("==> %s: Stopping job restart due to error", formatTime(time.Now()))
			break
		}
		if !r.yes && (r.batchWaitAsk || len(batchErr) > 0) {
			if len(batchErr) > 0 {
				fmt.Fprintf(r.errw, "==> %s: %v\n", formatTime(time.Now()), errors.Join(batchErr...))
			}
			if !r.proceed(len(batchErr) > 0) {
				r.say("==> %s: Job restart canceled", formatTime(time.Now()))
				canceled = true
				break
			}
		}
		if r.batchWait > 0 {
			r.say("==> %s: Waiting %s before restarting the next batch", formatTime(time.Now()), r.batchWait)
			select {
			case <-time.After(r.batchWait):
			case <-interrupted:
				r.say("==> %s: Restart interrupted, no more allocations will be restarted", formatTime(time.Now()))
				canceled = true
			}
			if canceled {
				break
			}
		}
	}
	if len(errs) > 0 {
		if !canceled {
			r.say("==> %s: Job restart finished with errors", formatTime(time.Now()))
		}
		fmt.Fprintf(r.errw, "\n%v\n", errors.Join(errs...))
		return 1
	}
	if !canceled {
		r.say("==> %s: Job restart finished", formatTime(time.Now()))
		r.say("\nJob restarted successfully!")
	}
	return 0
}

// filter keeps the allocations to restart: running, not yet replaced, of
// the groups and with the tasks asked for.
func (r *jobRestart) filter(stubs []*api.AllocationListStub) []*api.AllocationListStub {
	var keep []*api.AllocationListStub
	skip := func(a *api.AllocationListStub, why string) {
		if r.verbose {
			r.say("    %s: Skipping allocation %q because %s", formatTime(time.Now()), r.id(a.ID), why)
		}
	}
	for _, a := range stubs {
		switch {
		case a.DesiredStatus != api.AllocDesiredStatusRun || a.ClientStatus != api.AllocClientStatusRunning:
			skip(a, fmt.Sprintf("desired status is %q and client status is %q", a.DesiredStatus, a.ClientStatus))
		case a.NextAllocation != "":
			skip(a, fmt.Sprintf("it has already been replaced by %q", r.id(a.NextAllocation)))
		case len(r.groups) > 0 && !slices.Contains(r.groups, a.TaskGroup):
			skip(a, "it doesn't have any of requested groups")
		case len(r.tasks) > 0 && !slices.ContainsFunc(r.tasks, func(t string) bool { _, ok := a.TaskStates[t]; return ok }):
			skip(a, "it doesn't have any of requested tasks")
		default:
			keep = append(keep, a)
		}
	}
	return keep
}

func (r *jobRestart) handle(a *api.AllocationListStub, namespace string) error {
	alloc := &api.Allocation{ID: a.ID, Namespace: a.Namespace}
	q := &api.QueryOptions{Namespace: namespace}
	if r.reschedule {
		return r.stopAndWait(a, q)
	}
	switch {
	case r.allTasks:
		r.say("    %s: Restarting all tasks in allocation %q for group %q", formatTime(time.Now()), r.id(a.ID), a.TaskGroup)
		return r.client.Allocations().RestartAllTasks(alloc, q)
	case len(r.tasks) == 0:
		r.say("    %s: Restarting running tasks in allocation %q for group %q", formatTime(time.Now()), r.id(a.ID), a.TaskGroup)
		return r.client.Allocations().Restart(alloc, "", q)
	}
	var errs []error
	for _, t := range r.tasks {
		if _, ok := a.TaskStates[t]; !ok {
			continue
		}
		r.say("    %s: Restarting task %q in allocation %q for group %q", formatTime(time.Now()), t, r.id(a.ID), a.TaskGroup)
		if err := r.client.Allocations().Restart(alloc, t, q); err != nil {
			errs = append(errs, fmt.Errorf("Failed to restart task %q: %w", t, err))
		}
	}
	return errors.Join(errs...)
}

// stopAndWait stops an allocation and waits until its replacement runs or
// the scheduler cannot place it.
func (r *jobRestart) stopAndWait(a *api.AllocationListStub, q *api.QueryOptions) error {
	r.say("    %s: Rescheduling allocation %q for group %q", formatTime(time.Now()), r.id(a.ID), a.TaskGroup)
	sq := *q
	if r.noShutdownDelay {
		sq.Params = map[string]string{"no_shutdown_delay": "true"}
	}
	resp, err := r.client.Allocations().Stop(&api.Allocation{ID: a.ID, Namespace: a.Namespace}, &sq)
	if err != nil {
		return fmt.Errorf("Failed to stop allocation: %w", err)
	}
	if a.JobType == api.JobTypeSystem {
		if _, _, err := r.client.Jobs().EvaluateWithOpts(a.JobID, api.EvalOptions{ForceReschedule: true}, &api.WriteOptions{Namespace: q.Namespace}); err != nil {
			return fmt.Errorf("Failed to evaluate job: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 2)
	go func() { done <- r.watchPlacement(ctx, a, resp.LastIndex, q) }()
	go func() { done <- r.watchReplacement(ctx, a, q) }()
	tick := time.NewTicker(time.Minute)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			r.say("    %s: Still waiting for allocation %q to be replaced", formatTime(time.Now()), r.id(a.ID))
		case err := <-done:
			return err
		}
	}
}

// watchPlacement reports the placement failures of the evaluations the
// stop created for the allocation's group.
func (r *jobRestart) watchPlacement(ctx context.Context, a *api.AllocationListStub, index uint64, q *api.QueryOptions) error {
	wq := *q
	wq.WaitIndex = index
	for ctx.Err() == nil {
		evals, qm, err := r.client.Jobs().Evaluations(a.JobID, wq.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("Failed to retrieve evaluations for job %q: %w", a.JobID, err)
		}
		for _, e := range evals {
			if e.CreateIndex < index || e.Status != api.EvalStatusBlocked {
				continue
			}
			if m := e.FailedTGAllocs[a.TaskGroup]; m != nil {
				return fmt.Errorf("Evaluation %q has placement failures for group %q: %s", r.id(e.ID), a.TaskGroup, placementFailureSummary(m))
			}
		}
		wq.WaitIndex = qm.LastIndex
	}
	return nil
}

// placementFailureSummary says in one line why a group could not be placed.
func placementFailureSummary(m *api.AllocationMetric) string {
	var parts []string
	for _, k := range sortedKeys(m.DimensionExhausted) {
		parts = append(parts, fmt.Sprintf("dimension %q exhausted on %d nodes", k, m.DimensionExhausted[k]))
	}
	for _, k := range sortedKeys(m.ConstraintFiltered) {
		parts = append(parts, fmt.Sprintf("constraint %q filtered %d nodes", k, m.ConstraintFiltered[k]))
	}
	if len(parts) == 0 {
		return fmt.Sprintf("%d nodes evaluated, none fit", m.NodesEvaluated)
	}
	return strings.Join(parts, "; ")
}

// watchReplacement follows the allocation's replacements until one runs.
func (r *jobRestart) watchReplacement(ctx context.Context, a *api.AllocationListStub, q *api.QueryOptions) error {
	current := a.ID
	wq := *q
	wq.WaitIndex = 1
	for ctx.Err() == nil {
		alloc, qm, err := r.client.Allocations().Info(current, wq.WithContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("Failed to retrieve allocation %q: %w", r.id(current), err)
		}
		if alloc.NextAllocation != "" {
			r.say("    %s: Allocation %q replaced by %q, waiting for %q to start running", formatTime(time.Now()), r.id(alloc.ID), r.id(alloc.NextAllocation), r.id(alloc.NextAllocation))
			current = alloc.NextAllocation
			wq.WaitIndex = 1
			continue
		}
		if alloc.ID != a.ID && alloc.ClientStatus == api.AllocClientStatusRunning {
			r.say("    %s: Allocation %q is %q", formatTime(time.Now()), r.id(alloc.ID), alloc.ClientStatus)
			return nil
		}
		wq.WaitIndex = qm.LastIndex
	}
	return nil
}

// proceed asks whether to restart the next batch; with -batch-wait=ask a
// duration answer sets the wait for the batches that follow.
func (r *jobRestart) proceed(hadErr bool) bool {
	question, options := "Proceed with the next batch?", "Y/n"
	if hadErr {
		question, options = "Ignore the errors above and proceed with the next batch?", "y/N"
	}
	if r.batchWaitAsk {
		options += "/<wait duration>"
	}
	for {
		r.say("%s [%s]", question, options)
		if r.in == nil {
			return false
		}
		line, err := r.in.ReadString('\n')
		answer := strings.ToLower(strings.TrimSpace(line))
		switch answer {
		case "":
			if err != nil {
				return false
			}
			return !hadErr
		case "y", "yes":
			return true
		case "n", "no":
			return false
		}
		if d, perr := time.ParseDuration(answer); perr == nil && r.batchWaitAsk && d >= 0 {
			r.batchWaitAsk, r.batchWait = false, d
			r.say("==> %s: Proceeding restarts with new wait time of %s", formatTime(time.Now()), d)
			return true
		}
		if err != nil {
			return false
		}
		fmt.Fprintf(r.errw, "Invalid answer %q\n", answer)
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ordinal writes 1 as 1st, 2 as 2nd, 11 as 11th.
func ordinal(n int) string {
	suffix := "th"
	switch n % 10 {
	case 1:
		suffix = "st"
	case 2:
		suffix = "nd"
	case 3:
		suffix = "rd"
	}
	if n%100 >= 11 && n%100 <= 13 {
		suffix = "th"
	}
	return strconv.Itoa(n) + suffix
}
