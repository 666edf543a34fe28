// Package agent runs a nomadq agent: a server, a client or both in one
// process, behind Nomad's /v1 HTTP API. It takes its configuration from
// agent/config, wires the server (nomad/) and the node agent (client/)
// together, and serves the HTTP API the official Go client and the CLI
// talk to.
package agent
