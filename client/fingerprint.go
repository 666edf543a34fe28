package client

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"maps"

	"github.com/nomadq/nomadq/client/drivers"
	"github.com/nomadq/nomadq/structs"
)

// hostFacts is what the fingerprint measured.
type hostFacts struct {
	cores     int
	coreIDs   []uint16
	mhz       int
	memBytes  uint64
	diskFree  uint64
	diskTotal uint64
	attrs     map[string]string
}

// fingerprintHost reads CPU, memory, disk and OS facts. diskPath is where
// alloc dirs live; its filesystem is the node's disk.
func fingerprintHost(diskPath, version string) hostFacts {
	f := hostFacts{cores: runtime.NumCPU(), coreIDs: cpuSet(), attrs: make(map[string]string)}
	f.mhz = cpuMHz()
	f.memBytes = memTotal()
	var st syscall.Statfs_t
	if err := syscall.Statfs(diskPath, &st); err == nil {
		f.diskFree = st.Bavail * uint64(st.Bsize)
		f.diskTotal = st.Blocks * uint64(st.Bsize)
	}
	a := f.attrs
	a["kernel.name"] = runtime.GOOS
	a["cpu.arch"] = runtime.GOARCH
	a["cpu.numcores"] = strconv.Itoa(f.cores)
	a["cpu.frequency"] = strconv.Itoa(f.mhz)
	a["cpu.totalcompute"] = strconv.Itoa(f.cores * f.mhz)
	if model := cpuModel(); model != "" {
		a["cpu.modelname"] = model
	}
	a["memory.totalbytes"] = strconv.FormatUint(f.memBytes, 10)
	a["unique.storage.bytesfree"] = strconv.FormatUint(f.diskFree, 10)
	a["unique.storage.bytestotal"] = strconv.FormatUint(f.diskTotal, 10)
	a["unique.storage.volume"] = diskPath
	a["nomad.version"] = version
	a["os.signals"] = strings.Join(drivers.SignalNames(), ",")
	if h, err := os.Hostname(); err == nil {
		a["unique.hostname"] = h
	}
	var u syscall.Utsname
	if err := syscall.Uname(&u); err == nil {
		a["kernel.version"] = utsString(u.Release[:])
		a["kernel.arch"] = utsString(u.Machine[:])
	}
	osName, osVersion := osRelease()
	if osName != "" {
		a["os.name"] = osName
	}
	if osVersion != "" {
		a["os.version"] = osVersion
	}
	return f
}

func utsString(b []int8) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c == 0 {
			break
		}
		out = append(out, byte(c))
	}
	return string(out)
}

// cpuMHz is the CPU's nominal frequency: the cpufreq maximum when there
// is one, else the first "cpu MHz" of /proc/cpuinfo, else 1000.
func cpuMHz() int {
	if b, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); err == nil {
		if khz, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && khz > 0 {
			return khz / 1000
		}
	}
	if v := cpuinfo("cpu MHz"); v != "" {
		if f, err := strconv.ParseFloat(v, 64); err == nil && f > 0 {
			return int(f)
		}
	}
	return 1000
}

func cpuModel() string { return cpuinfo("model name") }

func cpuinfo(key string) string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// meminfo returns the fields of /proc/meminfo in bytes.
func meminfo() map[string]uint64 {
	out := make(map[string]uint64)
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n *= 1024
		}
		out[k] = n
	}
	return out
}

func memTotal() uint64 {
	if n := meminfo()["MemTotal"]; n > 0 {
		return n
	}
	return 1 << 30
}

// osRelease returns ID and VERSION_ID of /etc/os-release.
func osRelease() (string, string) {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return "", ""
	}
	var id, ver string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.Trim(v, `"'`)
		switch k {
		case "ID":
			id = v
		case "VERSION_ID":
			ver = v
		}
	}
	return id, ver
}

// buildNode assembles the node from the config, the host facts and the
// drivers' fingerprints.
func buildNode(cfg *Config, id, secret string, facts hostFacts, ds map[string]drivers.Driver) *structs.Node {
	attrs := maps.Clone(facts.attrs)
	driverInfo := make(map[string]*structs.DriverInfo)
	now := time.Now()
	for name, d := range ds {
		fp := d.Fingerprint()
		driverInfo[name] = &structs.DriverInfo{
			Attributes:        fp.Attributes,
			Detected:          fp.Detected,
			Healthy:           fp.Healthy,
			HealthDescription: fp.HealthDescription,
			UpdateTime:        now,
		}
		if fp.Detected {
			attrs["driver."+name] = "1"
			for k, v := range fp.Attributes {
				attrs[k] = v
			}
		}
	}
	memMB := int64(facts.memBytes >> 20)
	n := &structs.Node{
		ID:         id,
		SecretID:   secret,
		Datacenter: cfg.Datacenter,
		Name:       cfg.NodeName,
		HTTPAddr:   cfg.HTTPAddr,
		TLSEnabled: cfg.HTTPTLS,
		Attributes: attrs,
		Meta:       maps.Clone(cfg.Meta),
		NodeClass:  cfg.NodeClass,
		NodePool:   cfg.NodePool,
		NodeResources: &structs.NodeResources{
			Cpu: structs.NodeCpuResources{
				CpuShares:          int64(facts.cores * facts.mhz),
				TotalCpuCores:      uint16(facts.cores),
				ReservableCpuCores: facts.coreIDs,
			},
			Memory: structs.NodeMemoryResources{MemoryMB: memMB},
			Disk:   structs.NodeDiskResources{DiskMB: int64(facts.diskFree >> 20)},
			// Nomad's default dynamic port range.
			MinDynamicPort: 20000,
			MaxDynamicPort: 32000,
		},
		ReservedResources: &structs.NodeReservedResources{
			Cpu:    structs.NodeReservedCpuResources{CpuShares: cfg.Reserved.CPU},
			Memory: structs.NodeReservedMemoryResources{MemoryMB: cfg.Reserved.MemoryMB},
			Disk:   structs.NodeReservedDiskResources{DiskMB: cfg.Reserved.DiskMB},
		},
		Drivers:               driverInfo,
		Status:                structs.NodeStatusReady,
		SchedulingEligibility: structs.NodeSchedulingEligible,
	}
	if n.Meta == nil {
		n.Meta = map[string]string{}
	}
	n.ComputedClass = computedClass(n)
	return n
}

// computedClass hashes what feasibility depends on: datacenter, pool,
// class, non-unique attributes, meta and driver health. Nodes with equal
// classes are interchangeable for the scheduler's feasibility checks.
func computedClass(n *structs.Node) string {
	h := sha256.New()
	w := func(parts ...string) {
		for _, p := range parts {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
	}
	w("dc", n.Datacenter, "pool", n.NodePool, "class", n.NodeClass)
	for _, k := range slices.Sorted(maps.Keys(n.Attributes)) {
		if strings.HasPrefix(k, "unique.") {
			continue
		}
		w("attr", k, n.Attributes[k])
	}
	for _, k := range slices.Sorted(maps.Keys(n.Meta)) {
		if strings.HasPrefix(k, "unique.") {
			continue
		}
		w("meta", k, n.Meta[k])
	}
	for _, k := range slices.Sorted(maps.Keys(n.Drivers)) {
		d := n.Drivers[k]
		w("driver", k, strconv.FormatBool(d.Detected), strconv.FormatBool(d.Healthy))
	}
	// Host volumes decide feasibility too (scheduler/host_volume_checker.go).
	for _, k := range slices.Sorted(maps.Keys(n.HostVolumes)) {
		w("host_volume", k, strconv.FormatBool(n.HostVolumes[k].ReadOnly))
	}
	return "v1:" + hex.EncodeToString(h.Sum(nil))[:20]
}
