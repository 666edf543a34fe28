package scheduler

import "github.com/nomadq/nomadq/structs"

// filterNetwork is Nomad's metric key for nodes without the group's
// network mode.
const filterNetwork = "missing network"

// networkChecker keeps nodes that fingerprinted the group's network mode
// ("bridge", "cni/<name>"), as Nomad's network checker does. Host and
// none need nothing of the node.
type networkChecker struct{ mode string }

// newNetworkChecker returns the checker of a group, false when its
// network needs nothing of the node.
func newNetworkChecker(tg *structs.TaskGroup) (networkChecker, bool) {
	if len(tg.Networks) == 0 || tg.Networks[0] == nil {
		return networkChecker{}, false
	}
	switch m := tg.Networks[0].Mode; m {
	case "", structs.NetworkModeHost, "none":
		return networkChecker{}, false
	default:
		return networkChecker{mode: m}, true
	}
}

// classSafe is false: the computed class does not hash the node's
// networks.
func (c networkChecker) classSafe() bool { return false }

func (c networkChecker) check(_ *evalContext, n *structs.Node) (bool, rejection) {
	if n.NodeResources != nil {
		for _, nw := range n.NodeResources.Networks {
			if nw != nil && nw.Mode == c.mode {
				return true, rejection{}
			}
		}
	}
	return false, rejection{filterNetwork, `network mode "` + c.mode + `"`}
}
