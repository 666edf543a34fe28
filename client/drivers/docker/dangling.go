package docker

import (
	"context"
	"time"

	"github.com/moby/moby/client"
)

// danglingMinGrace is the least creation_grace, as Nomad: a container
// younger than that may be one a task is still being started in.
const danglingMinGrace = time.Minute

// DanglingConfig is the plugin's gc { dangling_containers { ... } }: running
// containers labelled as Nomad's that no task of this driver tracks are
// removed, as Nomad's reconciler does.
type DanglingConfig struct {
	Enabled       bool
	Period        time.Duration
	CreationGrace time.Duration
	DryRun        bool
}

// reconcileDangling runs the reconciler until the driver shuts down.
func (d *Driver) reconcileDangling() {
	c := d.cfg.Dangling
	t := time.NewTimer(max(c.Period, c.CreationGrace))
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
		}
		if _, err := d.removeDangling(time.Now()); err != nil && d.ctx.Err() == nil {
			d.logger.Warn("cannot remove dangling containers", "error", err)
		}
		t.Reset(c.Period)
	}
}

// removeDangling removes the running containers that carry Nomad's alloc
// label, were created more than creation_grace before now and belong to
// no task this driver tracks (only logs them with dry_run); it returns
// the ones it found.
func (d *Driver) removeDangling(now time.Time) ([]string, error) {
	ctx, cancel := context.WithTimeout(d.ctx, 30*time.Second)
	defer cancel()
	list, err := d.client.ContainerList(ctx, client.ContainerListOptions{
		Filters: client.Filters{}.Add("label", LabelAllocID),
	})
	if err != nil {
		return nil, err
	}
	tracked := map[string]bool{}
	d.mu.Lock()
	for _, t := range d.tasks {
		tracked[t.containerID] = true
	}
	d.mu.Unlock()
	cutoff := now.Add(-d.cfg.Dangling.CreationGrace).Unix()
	var found []string
	for _, c := range list.Items {
		// Pause containers hold an alloc's network; the client removes
		// them with it.
		if tracked[c.ID] || c.Created > cutoff || isSandbox(c.Names) {
			continue
		}
		found = append(found, c.ID)
		if d.cfg.Dangling.DryRun {
			d.logger.Info("dangling container (dry run)", "container_id", shortID(c.ID))
			continue
		}
		if _, err := d.client.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true}); err != nil {
			d.logger.Warn("cannot remove dangling container", "container_id", shortID(c.ID), "error", err)
			continue
		}
		d.logger.Info("removed dangling container", "container_id", shortID(c.ID))
	}
	return found, nil
}
