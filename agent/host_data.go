package agent

import (
	"bufio"
	"net"
	"os"
	"strings"
	"syscall"
)

// hostData is /v1/agent/host's answer: what an operator debugging an agent
// wants to know about its machine, in the shape of api.HostData.
type hostData struct {
	OS          string
	Network     []map[string]string
	ResolvConf  string
	Hosts       string
	Environment map[string]string
	Disk        map[string]diskUsage
}

type diskUsage struct {
	DiskMB int64
	UsedMB int64
}

// envDenyList are environment variables whose values never leave the
// host, on top of every name containing TOKEN or SECRET (Nomad's rule).
var envDenyList = map[string]bool{
	"CONSUL_TOKEN": true, "CONSUL_HTTP_TOKEN": true, "CONSUL_HTTP_TOKEN_FILE": true, "NOMAD_TOKEN": true, "VAULT_TOKEN": true,
	"CONSUL_LICENSE": true, "NOMAD_LICENSE": true, "VAULT_LICENSE": true,
	"CONSUL_LICENSE_PATH": true, "NOMAD_LICENSE_PATH": true, "VAULT_LICENSE_PATH": true,
	"AWS_ACCESS_KEY_ID": true, "AWS_SECRET_ACCESS_KEY": true, "AWS_SESSION_TOKEN": true, "AWS_METADATA_URL": true,
	"GOOGLE_APPLICATION_CREDENTIALS": true, "GOOGLE_OAUTH_ACCESS_TOKEN": true,
}

const redacted = "<redacted>"

func makeHostData() *hostData {
	return &hostData{
		OS:          unameString(),
		Network:     networkInterfaces(),
		ResolvConf:  slurp("/etc/resolv.conf"),
		Hosts:       slurp("/etc/hosts"),
		Environment: redactedEnvironment(os.Environ()),
		Disk:        mountedDiskUsage(),
	}
}

// redactedEnvironment maps KEY=VALUE pairs, hiding secrets' values.
func redactedEnvironment(environ []string) map[string]string {
	env := make(map[string]string, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		up := strings.ToUpper(k)
		if envDenyList[k] || strings.Contains(up, "TOKEN") || strings.Contains(up, "SECRET") {
			v = redacted
		}
		env[k] = v
	}
	return env
}

// slurp is a file's content, or the error reading it (the answer is for a
// human debugging the host).
func slurp(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func unameString() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return err.Error()
	}
	field := func(f [65]int8) string {
		b := make([]byte, 0, len(f))
		for _, c := range f {
			if c == 0 {
				break
			}
			b = append(b, byte(c))
		}
		return string(b)
	}
	return strings.Join([]string{field(u.Sysname), field(u.Nodename), field(u.Release), field(u.Version), field(u.Machine)}, " ")
}

func networkInterfaces() []map[string]string {
	ifaces, err := net.Interfaces()
	if err != nil {
		return []map[string]string{{"error": err.Error()}}
	}
	out := make([]map[string]string, 0, len(ifaces))
	for _, ifc := range ifaces {
		m := map[string]string{"name": ifc.Name, "hardware_address": ifc.HardwareAddr.String(), "flags": ifc.Flags.String()}
		if addrs, err := ifc.Addrs(); err == nil {
			var s []string
			for _, a := range addrs {
				s = append(s, a.String())
			}
			m["addresses"] = strings.Join(s, ",")
		}
		out = append(out, m)
	}
	return out
}

// mountedDiskUsage is the size and use of every mounted block device's
// file system, by mount point.
func mountedDiskUsage() map[string]diskUsage {
	out := make(map[string]diskUsage)
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 || !strings.HasPrefix(fields[0], "/") {
			continue // proc, tmpfs, overlay, ...: not a disk
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(fields[1], &st); err != nil {
			continue
		}
		const mb = 1 << 20
		total := int64(st.Blocks) * int64(st.Bsize)
		free := int64(st.Bavail) * int64(st.Bsize)
		out[fields[1]] = diskUsage{DiskMB: total / mb, UsedMB: (total - free) / mb}
	}
	return out
}
