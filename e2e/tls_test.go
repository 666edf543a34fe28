package e2e

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/tlsutil"
	"github.com/nomadq/nomadq/tlsutil/tlstest"
)

// Three server agents with mutual TLS on RPC and Raft (and
// verify_server_hostname, HTTPS with client certificates) elect a
// leader, and elect another after the leader is killed; a client agent
// with a certificate from the same CA joins and runs a job.
func TestTLS_MTLSClusterFailover(t *testing.T) {
	longTests(t)
	ca := tlstest.NewCA(t)
	serverCert, serverKey := ca.Cert(tlsutil.RoleServer, "global")
	clientCert, clientKey := ca.Cert(tlsutil.RoleClient, "global")
	cliCert, cliKey := ca.Cert(tlsutil.RoleCLI, "global")
	tlsBlock := func(cert, key string) *tlsutil.Config {
		return &tlsutil.Config{EnableHTTP: true, EnableRPC: true, CAFile: ca.CAFile, CertFile: cert, KeyFile: key,
			VerifyServerHostname: true, VerifyHTTPSClient: true}
	}
	apiTLS := &api.TLSConfig{CACert: ca.CAFile, ClientCert: cliCert, ClientKey: cliKey}

	ports := freePorts(t, 12)
	var join []string
	for i := range 3 {
		join = append(join, fmt.Sprintf("127.0.0.1:%d", ports[3*i+2]))
	}
	var servers []*agentProc
	var rpcAddrs []string
	for i := range 3 {
		servers = append(servers, startAgent(t, agentSpec{
			name: fmt.Sprintf("tls-server-%d", i), server: true, expect: 3, join: join,
			dataDir: t.TempDir(), http: ports[3*i], rpc: ports[3*i+1], serf: ports[3*i+2],
			tls: tlsBlock(serverCert, serverKey), apiTLS: apiTLS,
		}))
		rpcAddrs = append(rpcAddrs, fmt.Sprintf("127.0.0.1:%d", ports[3*i+1]))
	}
	leader := waitLeader(t, servers)
	t.Logf("leader is %s", leader.name)

	client := startAgent(t, agentSpec{
		name: "tls-client", client: true, servers: rpcAddrs, dataDir: t.TempDir(),
		http: ports[9], rpc: ports[10], serf: ports[11], tls: tlsBlock(clientCert, clientKey), apiTLS: apiTLS,
	})
	waitFor(t, 60*time.Second, func() error {
		nodes, _, err := leader.api(t).Nodes().List(nil)
		if err != nil {
			return err
		}
		if len(nodes) != 1 || nodes[0].Status != "ready" {
			return fmt.Errorf("nodes: %v", nodes)
		}
		return nil
	})

	killed := time.Now()
	leader.kill(syscall.SIGKILL)
	var survivors []*agentProc
	for _, a := range servers {
		if a != leader {
			survivors = append(survivors, a)
		}
	}
	newLeader := waitLeader(t, survivors)
	t.Logf("new leader %s after %s", newLeader.name, time.Since(killed))

	// Writes are accepted again, and the client (whose server list
	// still names the dead leader) runs the job over mutual TLS.
	waitFor(t, 60*time.Second, func() error {
		_, _, err := survivors[0].api(t).Jobs().Register(batchJob("after-failover", "true"), nil)
		return err
	})
	waitFor(t, 90*time.Second, func() error {
		allocs, _, err := client.api(t).Jobs().Allocations("after-failover", false, nil)
		if err != nil {
			return err
		}
		for _, a := range allocs {
			if a.ClientStatus == "complete" {
				return nil
			}
		}
		return fmt.Errorf("no complete alloc yet: %d allocs", len(allocs))
	})
}
