package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hashicorp/nomad/api"
)

const varLockUsage = `
Usage:
nomad var lock [options] <lock spec file reference> child...
nomad var lock [options] <path to store variable> [<variable spec file reference>] child...

  Acquires a lock on a variable (creating the variable when it does not
  exist) and runs the child command while it holds it, renewing the lock
  (every 0.7 TTL) until the child exits and releasing it then; when a
  renewal fails the child is killed. Without -early-return the command
  waits until it gets the lock. A spec file reference is an @-prefixed path to a variable
  specification (HCL for .hcl and .nomad files, JSON otherwise), whose
  items and lock settings are used.

  The child runs in $SHELL -c (or /bin/sh) unless -shell=false. The exit
  code is the child's.

Var lock Options:

  -ttl=<duration>     How long the lock lasts without renewal (default 15s).
  -delay=<duration>   How long the variable cannot be locked after a lock
                      expired (default 15s).
  -max-retry=<n>      How many times to retry a request the server fails
                      with a 5xx while acquiring, renewing or releasing
                      (default 5; 0 disables).
  -early-return       Return (exit 0, without running the child) when the
                      lock is held by someone else instead of waiting.
  -backoff=<duration> How long to wait between attempts to get the lock
                      (default 1.1 times the TTL).
  -shell              Run the child in a shell (default true).
  -verbose            Report each step on standard error.
`

func runVarLock(args []string, s Streams) int {
	var (
		af                   apiFlags
		ttl, delay           string
		maxRetry             int64
		earlyReturn, verbose bool
		shell                = true
		backoff              time.Duration
	)
	fs := newFlagSet("var lock", s.Stderr, varLockUsage)
	af.register(fs)
	fs.StringVar(&ttl, "ttl", "", "How long the lock lasts without renewal (default 15s)")
	fs.StringVar(&delay, "delay", "", "How long the variable stays unlockable after a lock expired (default 15s)")
	fs.Int64Var(&maxRetry, "max-retry", 5, "How many times to retry a request that fails with a 5xx")
	fs.BoolVar(&earlyReturn, "early-return", false, "Return when the lock is held elsewhere instead of waiting")
	fs.DurationVar(&backoff, "backoff", 0, "How long to wait between attempts to get the lock")
	fs.BoolVar(&shell, "shell", true, "Run the child in a shell")
	fs.BoolVar(&verbose, "verbose", false, "Report each step on standard error")
	if err := fs.Parse(args); err != nil {
		return 1
	}
	say := func(format string, a ...any) {
		if verbose {
			fmt.Fprintf(s.Stderr, format+"\n", a...)
		}
	}
	if af.namespace == "*" {
		fmt.Fprintln(s.Stderr, errWildcardNamespaceNotAllowed)
		return 1
	}
	rest := fs.Args()
	if len(rest) < 2 {
		fmt.Fprintf(s.Stderr, "Not enough arguments (expected >2, got %d)\n", len(rest))
		return 1
	}
	if maxRetry < 0 {
		fmt.Fprintf(s.Stderr, "Invalid -max-retry %d: must be 0 or more\n", maxRetry)
		return 1
	}
	if backoff < 0 {
		fmt.Fprintf(s.Stderr, "Invalid -backoff %s: must not be negative\n", backoff)
		return 1
	}

	var spec *api.Variable
	readSpec := func(ref string) error {
		file := strings.TrimPrefix(ref, "@")
		format := "json"
		if ext := filepath.Ext(file); ext == ".hcl" || ext == ".nomad" {
			format = "hcl"
		}
		say("Reading whole %s variable specification from %q", strings.ToUpper(format), file)
		raw, err := os.ReadFile(file)
		if err != nil {
			return fmt.Errorf("Error reading %q: %s", file, err)
		}
		if spec, err = parseVarSpec(raw, format); err != nil {
			return fmt.Errorf("Failed to parse variable data: %s", err)
		}
		return nil
	}
	var path string
	if strings.HasPrefix(rest[0], "@") {
		if err := readSpec(rest[0]); err != nil {
			fmt.Fprintln(s.Stderr, err)
			return 1
		}
		path, rest = spec.Path, rest[1:]
	} else {
		path, rest = strings.Trim(rest[0], "/"), rest[1:]
		if strings.HasPrefix(rest[0], "@") {
			if err := readSpec(rest[0]); err != nil {
				fmt.Fprintln(s.Stderr, err)
				return 1
			}
			rest = rest[1:]
		}
	}
	if len(rest) == 0 {
		fmt.Fprintln(s.Stderr, "No child command to run under the lock")
		return 1
	}
	if path == "" {
		fmt.Fprintln(s.Stderr, "The variable specification gives no path")
		return 1
	}
	if spec == nil {
		spec = &api.Variable{}
	}
	spec.Path = path
	if af.namespace != "" {
		spec.Namespace = af.namespace
	}
	if spec.Lock == nil {
		spec.Lock = &api.VariableLock{TTL: api.DefaultLockTTL.String(), LockDelay: api.DefaultLockDelay.String()}
	}
	for _, d := range []struct {
		flag, value string
		into        *string
	}{{"-ttl", ttl, &spec.Lock.TTL}, {"-delay", delay, &spec.Lock.LockDelay}} {
		if d.value == "" {
			continue
		}
		v, err := time.ParseDuration(d.value)
		if err != nil || v <= 0 {
			fmt.Fprintf(s.Stderr, "Invalid %s %q: must be a positive duration such as \"15s\"\n", d.flag, d.value)
			return 1
		}
		*d.into = d.value
	}

	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	locks, err := client.Locks(api.WriteOptions{Namespace: spec.Namespace}, *spec, api.LocksOptionWithMaxRetries(maxRetry))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error initializing lock handler: %s\n", err)
		return 1
	}
	var leaserOpts []api.LockLeaserOption
	if earlyReturn {
		leaserOpts = append(leaserOpts, api.LockLeaserOptionWithEarlyReturn(true))
	}
	if backoff > 0 {
		leaserOpts = append(leaserOpts, api.LockLeaserOptionWithWaitPeriod(backoff))
	}
	leaser := client.NewLockLeaser(locks, leaserOpts...)

	ran := false
	childCode := 0
	say("Attempting to acquire lock on %q", path)
	err = leaser.Start(context.Background(), func(ctx context.Context) error {
		ran = true
		say("Variable locked, ready to execute: %s", strings.Join(rest, " "))
		childCode = runLockedChild(ctx, rest, shell, s)
		return nil
	})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Lock error: %s\n", err)
		return 1
	}
	if !ran {
		say("The lock is held elsewhere; returning early")
		return 0
	}
	say("Released the lock")
	return childCode
}

// runLockedChild runs the child until it exits or ctx ends (the lock was
// lost), forwarding interrupts to it, and returns its exit code.
func runLockedChild(ctx context.Context, args []string, shell bool, s Streams) int {
	var cmd *exec.Cmd
	if shell {
		sh := "/bin/sh"
		for _, kv := range Env() {
			if v, ok := strings.CutPrefix(kv, "SHELL="); ok && v != "" {
				sh = v
			}
		}
		cmd = exec.CommandContext(ctx, sh, "-c", strings.Join(args, " "))
	} else {
		cmd = exec.CommandContext(ctx, args[0], args[1:]...)
	}
	cmd.Env = Env()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(s.Stderr, "Error starting the child: %s\n", err)
		return 1
	}
	sigCh := make(chan os.Signal, 4)
	signal.Notify(sigCh, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigCh)
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case sig := <-sigCh:
				_ = cmd.Process.Signal(sig)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	if ctx.Err() != nil && cmd.ProcessState != nil && !cmd.ProcessState.Exited() {
		fmt.Fprintln(s.Stderr, "Lock lost: the child was killed")
		return 1
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		if code := exitErr.ExitCode(); code >= 0 {
			return code
		}
		return 1
	}
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error running the child: %s\n", err)
		return 1
	}
	return 0
}
