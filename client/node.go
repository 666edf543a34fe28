package client

import (
	"context"
	"net/http"
	"time"

	"github.com/nomadq/nomadq/structs"
)

// registerAndHeartbeat registers the node, then heartbeats at the TTL the
// servers ask for. A server that no longer knows the node (it lost its
// state) gets a fresh registration.
func (c *Client) registerAndHeartbeat() {
	for !c.register() {
		if !c.sleep(c.cfg.RetryInterval) {
			return
		}
	}
	ttl := c.heartbeatTTL
	for {
		changed, ok := c.sleepOrNodeChange(ttl)
		if !ok {
			return
		}
		if changed {
			// A driver's health changed: the servers get the node again.
			if !c.register() {
				ttl = c.cfg.RetryInterval
				select {
				case c.nodeChanged <- struct{}{}:
				default:
				}
			} else {
				ttl = c.heartbeatTTL
			}
			continue
		}
		next, err := c.heartbeat()
		switch {
		case err == nil:
			ttl = next
		case IsUnknownNode(err):
			c.logger.Warn("servers do not know this node; registering again", "error", err)
			for !c.register() {
				if !c.sleep(c.cfg.RetryInterval) {
					return
				}
			}
			ttl = c.heartbeatTTL
		default:
			c.logger.Warn("heartbeat failed", "error", err)
			ttl = c.cfg.RetryInterval
		}
	}
}

// sleep waits d; false means the client is shutting down.
func (c *Client) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

// sleepOrNodeChange waits d or until the node changed (changed true);
// ok is false when the client is shutting down.
func (c *Client) sleepOrNodeChange(d time.Duration) (changed, ok bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return false, true
	case <-c.nodeChanged:
		return true, true
	case <-c.ctx.Done():
		return false, false
	}
}

// IsUnknownNode reports the servers' answer to a heartbeat from a node
// they do not know: a coded 404, which crosses RPC as text.
func IsUnknownNode(err error) bool {
	code, _, _ := structs.CodeFromRPCCodedErr(err)
	return code == http.StatusNotFound
}

// register sends the node to the servers.
func (c *Client) register() bool {
	// A node introduces itself with its introduction token when it has
	// one; servers that know the node check its secret instead.
	auth := c.node.SecretID
	if c.cfg.IntroToken != "" {
		auth = c.cfg.IntroToken
	}
	req := &structs.NodeRegisterRequest{Node: c.nodeToRegister(), WriteRequest: structs.WriteRequest{Region: c.cfg.Region, AuthToken: auth}}
	var resp structs.NodeUpdateResponse
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if err := c.rpc.Call(ctx, "Node.Register", req, &resp); err != nil {
		if c.ctx.Err() == nil {
			c.logger.Warn("node registration failed", "error", err)
		}
		return false
	}
	c.learnServers(&resp)
	c.heartbeatTTL = ttlOrDefault(resp.HeartbeatTTL)
	c.logger.Info("node registered", "node_id", c.node.ID, "heartbeat_ttl", c.heartbeatTTL)
	c.registeredOnce.Do(func() { close(c.registered) })
	return true
}

func (c *Client) heartbeat() (time.Duration, error) {
	req := &structs.NodeUpdateStatusRequest{NodeID: c.node.ID, Status: structs.NodeStatusReady, WriteRequest: structs.WriteRequest{Region: c.cfg.Region, AuthToken: c.node.SecretID}}
	var resp structs.NodeUpdateResponse
	ctx, cancel := context.WithTimeout(c.ctx, 30*time.Second)
	defer cancel()
	if err := c.rpc.Call(ctx, "Node.UpdateStatus", req, &resp); err != nil {
		return 0, err
	}
	c.learnServers(&resp)
	return ttlOrDefault(resp.HeartbeatTTL), nil
}

// ttlOrDefault guards against a zero TTL, which would spin.
func ttlOrDefault(ttl time.Duration) time.Duration {
	if ttl <= 0 {
		return 10 * time.Second
	}
	return ttl
}

func (c *Client) learnServers(resp *structs.NodeUpdateResponse) {
	if c.servers == nil {
		return
	}
	addrs := make([]string, 0, len(resp.Servers))
	for _, s := range resp.Servers {
		addrs = append(addrs, s.RPCAdvertiseAddr)
	}
	c.servers.learn(addrs)
}
