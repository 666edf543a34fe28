package client

import (
	"maps"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// defaultDriverHealthInterval is how often drivers are fingerprinted again
// after the start: Nomad's driver fingerprint period.
const defaultDriverHealthInterval = 30 * time.Second

// driverHealth is the drivers' latest fingerprint as the servers should
// see it. The node built at the start (c.node) stays as it was, since
// alloc runners and the sync loop read it without locks; the node sent on
// registration is c.node with these drivers and their attributes.
type driverHealth struct {
	drivers map[string]*structs.DriverInfo
	attrs   map[string]string
	class   string
}

// watchDriverHealth fingerprints the drivers every interval; when one
// changed (an engine that went away or came back), the node registers
// again so that the servers place tasks only where their driver is
// healthy.
func (c *Client) watchDriverHealth() {
	for c.sleep(c.cfg.DriverHealthInterval) {
		if c.refreshDriverHealth() {
			select {
			case c.nodeChanged <- struct{}{}:
			default:
			}
		}
	}
}

// refreshDriverHealth fingerprints every driver and reports whether the
// detection, health or attributes of any changed.
func (c *Client) refreshDriverHealth() bool {
	now := time.Now()
	c.healthMu.Lock()
	cur := c.health
	c.healthMu.Unlock()
	next := driverHealth{drivers: maps.Clone(cur.drivers), attrs: maps.Clone(cur.attrs)}
	changed := false
	for name, d := range c.drivers {
		fp := d.Fingerprint()
		old := next.drivers[name]
		if old != nil && old.Detected == fp.Detected && old.Healthy == fp.Healthy &&
			old.HealthDescription == fp.HealthDescription && maps.Equal(old.Attributes, fp.Attributes) {
			continue
		}
		changed = true
		c.logger.Info("driver health changed", "driver", name, "detected", fp.Detected, "healthy", fp.Healthy, "description", fp.HealthDescription)
		if old != nil {
			for k := range old.Attributes {
				delete(next.attrs, k)
			}
		}
		delete(next.attrs, "driver."+name)
		if fp.Detected {
			next.attrs["driver."+name] = "1"
			maps.Copy(next.attrs, fp.Attributes)
		}
		next.drivers[name] = &structs.DriverInfo{
			Attributes:        fp.Attributes,
			Detected:          fp.Detected,
			Healthy:           fp.Healthy,
			HealthDescription: fp.HealthDescription,
			UpdateTime:        now,
		}
	}
	if !changed {
		return false
	}
	n := c.node.Copy()
	n.Drivers, n.Attributes = next.drivers, next.attrs
	next.class = computedClass(n)
	c.healthMu.Lock()
	c.health = next
	c.healthMu.Unlock()
	return true
}

// nodeToRegister is the node as the servers should see it now.
func (c *Client) nodeToRegister() *structs.Node {
	n := c.node.Copy()
	c.healthMu.Lock()
	h := c.health
	c.healthMu.Unlock()
	n.Drivers = maps.Clone(h.drivers)
	n.Attributes = maps.Clone(h.attrs)
	n.ComputedClass = h.class
	return c.withDynamicMeta(n, true)
}

// driverInfo is a driver's latest fingerprint.
func (c *Client) driverInfo(name string) *structs.DriverInfo {
	c.healthMu.Lock()
	defer c.healthMu.Unlock()
	return c.health.drivers[name]
}
