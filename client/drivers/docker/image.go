package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/moby/moby/api/pkg/authconfig"
	"github.com/moby/moby/client"
	"github.com/nomadq/nomadq/client/drivers"
)

// ensureImage pulls the task's image when the engine does not have it,
// or always with force_pull, within image_pull_timeout; a pull the engine
// reports no progress on for pull_activity_timeout is cancelled.
func (d *Driver) ensureImage(c taskConfig, tc *drivers.TaskConfig) error {
	if c.extra.load != "" {
		return d.loadImage(c, tc)
	}
	if !c.forcePull {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := d.client.ImageInspect(ctx, c.image)
		cancel()
		if err == nil {
			return nil
		}
		if !notFound(err) {
			return fmt.Errorf("docker: inspect image %q: %w", c.image, err)
		}
	}
	// As Nomad: every task that needs the pull says so, whether it starts
	// the pull or waits for another task's.
	details := map[string]string{"image": c.image}
	tc.EmitEvent("Downloading image", details)
	if err := d.pulls.do(c, tc.EmitEvent, d.pull); err != nil {
		return err
	}
	tc.EmitEvent(fmt.Sprintf("Image %s pulled", c.image), details)
	return nil
}

// loadImage loads the image archive (docker save's format) the task's
// load key names in its local dir, instead of pulling; the task's image
// must be in it.
func (d *Driver) loadImage(c taskConfig, tc *drivers.TaskConfig) error {
	archive := filepath.Join(tc.TaskDir, "local", c.extra.load)
	f, err := os.Open(archive)
	if err != nil {
		return fmt.Errorf("docker: load image: %w", err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), c.imagePullTimeout)
	defer cancel()
	res, err := d.client.ImageLoad(ctx, f, client.ImageLoadWithQuiet(true))
	if err != nil {
		return fmt.Errorf("docker: load image from %s: %w", c.extra.load, err)
	}
	_, _ = io.Copy(io.Discard, res)
	res.Close()
	if _, err := d.client.ImageInspect(ctx, c.image); err != nil {
		return fmt.Errorf("docker: image %q is not in the archive %s: %w", c.image, c.extra.load, err)
	}
	return nil
}

// pullCoordinator makes tasks that need an image while it is being
// pulled (with the same credentials) wait for that pull instead of
// starting their own.
type pullCoordinator struct {
	mu       sync.Mutex
	inflight map[pullKey]*pullCall
}

type pullKey struct{ image, user string }

type pullCall struct {
	done    chan struct{}
	err     error
	waiters int
	// emits are the event emitters of the tasks that need the pull.
	emits []func(string, map[string]string)
}

// do runs pull for the task unless a pull of the same image with the
// same credentials is under way, in which case it waits for that one.
// Progress the pull reports goes to every task that needs it.
func (p *pullCoordinator) do(c taskConfig, emit func(string, map[string]string), pull func(taskConfig, func(string)) error) error {
	key := pullKey{image: c.image}
	if c.auth != nil {
		key.user = c.auth.username + "\x00" + c.auth.password
	}
	p.mu.Lock()
	if p.inflight == nil {
		p.inflight = make(map[pullKey]*pullCall)
	}
	if call, ok := p.inflight[key]; ok {
		call.waiters++
		call.emits = append(call.emits, emit)
		p.mu.Unlock()
		<-call.done
		return call.err
	}
	call := &pullCall{done: make(chan struct{}), emits: []func(string, map[string]string){emit}}
	p.inflight[key] = call
	p.mu.Unlock()

	report := func(msg string) {
		p.mu.Lock()
		emits := slices.Clone(call.emits)
		p.mu.Unlock()
		for _, e := range emits {
			e(msg, map[string]string{"image": c.image})
		}
	}
	call.err = pull(c, report)
	p.mu.Lock()
	delete(p.inflight, key)
	p.mu.Unlock()
	close(call.done)
	return call.err
}

// waiting is how many tasks wait for another's pull of image (tests).
func (p *pullCoordinator) waiting(image string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for k, call := range p.inflight {
		if k.image == image {
			n += call.waiters
		}
	}
	return n
}

// pull pulls the task's image, sending report Nomad's progress events
// while it runs; its error names the image and says why the engine
// refused it.
func (d *Driver) pull(c taskConfig, report func(string)) error {
	ref, err := reference.ParseNormalizedNamed(c.image)
	if err != nil {
		return fmt.Errorf("docker: image %q: %w", c.image, err)
	}
	opts := client.ImagePullOptions{}
	auth, err := d.resolveAuth(c)
	if err != nil {
		if !c.authSoftFail {
			return fmt.Errorf("docker: find registry credentials for %q: %w", c.image, err)
		}
		d.logger.Warn("cannot find registry credentials; pulling without (auth_soft_fail)", "image", c.image, "error", err)
		auth = nil
	}
	if auth != nil {
		if auth.ServerAddress == "" {
			auth.ServerAddress = reference.Domain(ref)
		}
		enc, err := authconfig.Encode(*auth)
		if err != nil {
			return fmt.Errorf("docker: encode registry auth: %w", err)
		}
		opts.RegistryAuth = enc
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.imagePullTimeout)
	defer cancel()
	d.logger.Info("pulling image", "image", c.image)
	resp, err := d.client.ImagePull(ctx, reference.TagNameOnly(ref).String(), opts)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return recoverableError{fmt.Errorf("docker: pull image %q: not done within image_pull_timeout %s", c.image, c.imagePullTimeout)}
		}
		return pullError(c.image, err)
	}
	defer resp.Close()

	// Each message from the engine is activity; none for
	// pull_activity_timeout cancels the pull.
	watch := newPullWatch(d.cfg.PullActivityTimeout, report, cancel)
	done := make(chan struct{})
	defer close(done)
	go watch.run(done)
	for msg, err := range resp.JSONMessages(ctx) {
		if err == nil {
			watch.observe(msg)
			if msg.Error != nil {
				err = errors.New(msg.Error.Message)
			}
		}
		if err != nil {
			if watch.isStalled() {
				return recoverableError{fmt.Errorf("docker: pull image %q: no progress for %s (pull_activity_timeout); last: %s",
					c.image, d.cfg.PullActivityTimeout, watch.summary())}
			}
			if ctx.Err() == context.DeadlineExceeded {
				return recoverableError{fmt.Errorf("docker: pull image %q: not done within image_pull_timeout %s", c.image, c.imagePullTimeout)}
			}
			return pullError(c.image, err)
		}
	}
	d.logger.Info("image pulled", "image", c.image, "progress", watch.summary())
	return nil
}

// recoverableError is a start error another attempt may not meet (a
// pull that timed out, a registry or engine failing for a moment): the
// task runner restarts the task as its restart policy allows, as Nomad
// does. Other start errors fail the task at once.
type recoverableError struct{ error }

// IsRecoverable reports that another attempt may succeed.
func (recoverableError) IsRecoverable() bool { return true }

func (e recoverableError) Unwrap() error { return e.error }

// pullError words the engine's refusal of a pull: the image, what kind
// of failure it is when that is known (a registry that refuses the
// credentials, an image it does not have: both hopeless, so not
// recoverable), and the engine's own words; any other refusal is
// recoverable.
func pullError(image string, err error) error {
	msg := strings.ToLower(err.Error())
	switch {
	case cerrdefs.IsUnauthorized(err) ||
		strings.Contains(msg, "unauthorized") || strings.Contains(msg, "authentication required") ||
		strings.Contains(msg, "no basic auth credentials") || strings.Contains(msg, "pull access denied") ||
		strings.Contains(msg, "requested access to the resource is denied"):
		return fmt.Errorf("docker: pull image %q: authentication failed: %w", image, err)
	case cerrdefs.IsNotFound(err) || strings.Contains(msg, "manifest unknown") || strings.Contains(msg, "not found"):
		return fmt.Errorf("docker: pull image %q: image not found: %w", image, err)
	}
	return recoverableError{fmt.Errorf("docker: pull image %q: %w", image, err)}
}

// notFound reports the engine's "no such image/container".
func notFound(err error) bool {
	return err != nil && (cerrdefs.IsNotFound(err) || strings.Contains(strings.ToLower(err.Error()), "no such"))
}
