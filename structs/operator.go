package structs

import (
	"fmt"
	"time"
)

// AutopilotRequestType stores the autopilot configuration; 24 is Nomad's
// number for it.
const AutopilotRequestType MessageType = 24

func init() {
	messageTypeNames[AutopilotRequestType] = "AutopilotRequestType"
}

// AutopilotConfig is the cluster's autopilot configuration, kept in Raft.
// The leader reads it when it judges server health and when it decides
// whether a failed server leaves the Raft configuration.
type AutopilotConfig struct {
	// CleanupDeadServers removes failed servers from the Raft
	// configuration (never below MinQuorum voters).
	CleanupDeadServers bool
	// ServerStabilizationTime is how long a server must stay healthy
	// before it counts as stable.
	ServerStabilizationTime time.Duration
	// LastContactThreshold is the longest a follower may go without
	// hearing from the leader and still be healthy.
	LastContactThreshold time.Duration
	// MaxTrailingLogs is how many log entries a follower may lag behind
	// the leader and still be healthy.
	MaxTrailingLogs uint64
	// MinQuorum is the number of voters dead-server cleanup never goes
	// below.
	MinQuorum uint
	// The next three are Nomad Enterprise features; nomadq refuses them.
	EnableRedundancyZones   bool
	DisableUpgradeMigration bool
	EnableCustomUpgrades    bool

	CreateIndex uint64
	ModifyIndex uint64
}

// DefaultAutopilotConfig is the configuration a new cluster starts with,
// Nomad's defaults.
func DefaultAutopilotConfig() *AutopilotConfig {
	return &AutopilotConfig{
		CleanupDeadServers:      true,
		ServerStabilizationTime: 10 * time.Second,
		LastContactThreshold:    200 * time.Millisecond,
		MaxTrailingLogs:         250,
	}
}

// Validate refuses the enterprise-only switches by name and negative
// durations.
func (c *AutopilotConfig) Validate() error {
	var errs MultiError
	if c.EnableRedundancyZones {
		errs.Add(fmt.Errorf("EnableRedundancyZones: redundancy zones are a Nomad Enterprise feature that nomadq does not implement; leave it false"))
	}
	if c.DisableUpgradeMigration {
		errs.Add(fmt.Errorf("DisableUpgradeMigration: upgrade migrations are a Nomad Enterprise feature that nomadq does not implement; leave it false"))
	}
	if c.EnableCustomUpgrades {
		errs.Add(fmt.Errorf("EnableCustomUpgrades: custom upgrades are a Nomad Enterprise feature that nomadq does not implement; leave it false"))
	}
	if c.LastContactThreshold < 0 {
		errs.Add(fmt.Errorf("LastContactThreshold %s must not be negative", c.LastContactThreshold))
	}
	if c.ServerStabilizationTime < 0 {
		errs.Add(fmt.Errorf("ServerStabilizationTime %s must not be negative", c.ServerStabilizationTime))
	}
	return errs.ErrorOrNil()
}

// AutopilotSetConfigRequest replaces the autopilot configuration, with a
// check-and-set on Config.ModifyIndex when CAS is set.
type AutopilotSetConfigRequest struct {
	Config AutopilotConfig
	CAS    bool
	WriteRequest
}

// AutopilotConfigResponse answers Operator.AutopilotGetConfiguration.
type AutopilotConfigResponse struct {
	Config *AutopilotConfig
	QueryMeta
}

// AutopilotSetConfigResponse answers Operator.AutopilotSetConfiguration:
// Updated is false when a check-and-set lost.
type AutopilotSetConfigResponse struct {
	Updated bool
	WriteMeta
}

// RaftServer is one server of the Raft configuration, as
// /v1/operator/raft/configuration shows it.
type RaftServer struct {
	ID           string
	Node         string
	Address      string
	Leader       bool
	Voter        bool
	RaftProtocol string
}

// RaftConfigurationResponse answers Operator.RaftGetConfiguration.
type RaftConfigurationResponse struct {
	Servers []*RaftServer
	Index   uint64
}

// RaftPeerByIDRequest removes the Raft peer with the given ID.
type RaftPeerByIDRequest struct {
	ID string
	WriteRequest
}

// RaftStats is one server's view of its own Raft log, which the leader
// collects to judge the server's health.
type RaftStats struct {
	// LastContact is how long ago the server last heard from the leader
	// (0 on the leader itself).
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
}

// ServerHealth is one server's health as autopilot judges it.
type ServerHealth struct {
	ID          string
	Name        string
	Address     string
	SerfStatus  string
	Version     string
	Leader      bool
	LastContact time.Duration
	LastTerm    uint64
	LastIndex   uint64
	Healthy     bool
	Voter       bool
	StableSince time.Time
}

// OperatorHealthReply answers Operator.ServerHealth.
type OperatorHealthReply struct {
	Healthy          bool
	FailureTolerance int
	Servers          []ServerHealth
	Leader           string
	Voters           []string
}
