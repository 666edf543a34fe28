package command

import (
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// formatAllocAddresses is the "Allocation Addresses" section of alloc
// status: each port of the group network with the address it was given,
// laid out as Nomad lays it out (labels of assigned ports are starred).
// "" when the alloc has no ports.
func formatAllocAddresses(a *api.Allocation) string {
	ar := a.AllocatedResources
	if ar == nil || len(ar.Shared.Networks) == 0 || ar.Shared.Networks[0] == nil {
		return ""
	}
	nw := ar.Shared.Networks[0]
	dynamic := make(map[string]bool)
	for _, p := range nw.DynamicPorts {
		dynamic[p.Label] = true
	}
	rows := []string{"Label|Dynamic|Address"}
	row := func(label string, value, to int, ip string) {
		dyn := "no"
		if dynamic[strings.TrimPrefix(label, "*")] {
			dyn = "yes"
		}
		r := fmt.Sprintf("%s|%s|%s:%d", label, dyn, ip, value)
		if to > 0 {
			r += fmt.Sprintf(" -> %d", to)
		}
		rows = append(rows, r)
	}
	if len(ar.Shared.Ports) > 0 {
		for _, p := range ar.Shared.Ports {
			row("*"+p.Label, p.Value, p.To, p.HostIP)
		}
	} else {
		for _, p := range nw.DynamicPorts {
			row(p.Label, p.Value, p.To, nw.IP)
		}
		for _, p := range nw.ReservedPorts {
			row(p.Label, p.Value, p.To, nw.IP)
		}
	}
	if len(rows) == 1 {
		return ""
	}
	mode := ""
	if nw.Mode != "" {
		mode = fmt.Sprintf(" (mode = %q)", nw.Mode)
	}
	return fmt.Sprintf("Allocation Addresses%s:\n%s", mode, formatList(rows))
}
