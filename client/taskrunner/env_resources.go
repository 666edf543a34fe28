package taskrunner

import (
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/nomadq/nomadq/structs"
)

// addResourceEnv sets what the scheduler reserved for the task, as Nomad
// names it: CPU and memory limits, the reserved cores, and every group
// port (the task reaches its host network, so the port it listens on is
// the host port).
func addResourceEnv(env map[string]string, a *structs.Allocation, task string) {
	ar := a.AllocatedResources
	if ar == nil {
		return
	}
	if tr := ar.Tasks[task]; tr != nil {
		env["NOMAD_CPU_LIMIT"] = strconv.FormatInt(tr.Cpu.CpuShares, 10)
		env["NOMAD_MEMORY_LIMIT"] = strconv.FormatInt(tr.Memory.MemoryMB, 10)
		if tr.Memory.MemoryMaxMB > 0 {
			env["NOMAD_MEMORY_MAX_LIMIT"] = strconv.FormatInt(tr.Memory.MemoryMaxMB, 10)
		}
		if len(tr.Cpu.ReservedCores) > 0 {
			env["NOMAD_CPU_CORES"] = formatCPUSet(tr.Cpu.ReservedCores)
		}
	}
	for _, p := range ar.Shared.Ports {
		port := strconv.Itoa(p.Value)
		addr := net.JoinHostPort(p.HostIP, port)
		env["NOMAD_IP_"+p.Label] = p.HostIP
		env["NOMAD_HOST_IP_"+p.Label] = p.HostIP
		env["NOMAD_ADDR_"+p.Label] = addr
		env["NOMAD_HOST_ADDR_"+p.Label] = addr
		env["NOMAD_HOST_PORT_"+p.Label] = port
		inside := port
		if p.To > 0 {
			inside = strconv.Itoa(p.To)
		}
		env["NOMAD_PORT_"+p.Label] = inside
		env["NOMAD_ALLOC_PORT_"+p.Label] = inside
	}
}

// formatCPUSet writes cores in the kernel's cpuset list format, as
// NOMAD_CPU_CORES carries them: "0-2,5".
func formatCPUSet(cores []uint16) string {
	cs := slices.Clone(cores)
	slices.Sort(cs)
	cs = slices.Compact(cs)
	var parts []string
	for i := 0; i < len(cs); {
		j := i
		for j+1 < len(cs) && cs[j+1] == cs[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(int(cs[i])))
		} else {
			parts = append(parts, strconv.Itoa(int(cs[i]))+"-"+strconv.Itoa(int(cs[j])))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
