// Package command implements the nomad CLI. Each command is a function
// from its arguments to an exit code; output goes to the given streams so
// tests can run commands in-process. hashicorp/cli dispatches them, prints
// help and serves shell completion (dispatch.go).
package command

import (
	"io"
	"os"
)

// Streams are the standard streams a command reads and writes.
type Streams struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// Env returns the process environment; tests replace it.
var Env = os.Environ

type commandFunc func(args []string, s Streams) int

type commandInfo struct {
	run      commandFunc
	synopsis string
}

// commands maps a command path ("job run") to its implementation.
var commands = map[string]commandInfo{
	"version":                       {runVersion, "Print the nomadq version"},
	"job run":                       {runJobRun, "Run a new job or update an existing job"},
	"job validate":                  {runJobValidate, "Check a job specification for errors"},
	"job status":                    {runJobStatus, "Display status information about a job"},
	"job stop":                      {runJobStop, "Stop a running job"},
	"job inspect":                   {runJobInspect, "Inspect a submitted job"},
	"job plan":                      {runJobPlan, "Dry-run a job update to determine its effects"},
	"job dispatch":                  {runJobDispatch, "Dispatch an instance of a parameterized job"},
	"job periodic force":            {runJobPeriodicForce, "Force the launch of a periodic job"},
	"alloc status":                  {runAllocStatus, "Display allocation status information and metadata"},
	"alloc logs":                    {runAllocLogs, "Stream the logs of a task"},
	"alloc stop":                    {runAllocStop, "Stop and reschedule a running allocation"},
	"alloc restart":                 {runAllocRestart, "Restart a running allocation"},
	"alloc signal":                  {runAllocSignal, "Signal a running allocation"},
	"alloc exec":                    {runAllocExec, "Execute commands in task"},
	"alloc fs":                      {runAllocFS, "Inspect the contents of an allocation directory"},
	"alloc checks":                  {runAllocChecks, "Outputs service health check status information"},
	"exec":                          {runAllocExec, "Execute commands in task"},
	"eval status":                   {runEvalStatus, "Display evaluation status and placement failure reasons"},
	"eval list":                     {runEvalList, "List the set of evaluations"},
	"node status":                   {runNodeStatus, "Display status information about nodes"},
	"node drain":                    {runNodeDrain, "Toggle drain mode on a given node"},
	"node eligibility":              {runNodeEligibility, "Toggle scheduling eligibility for a given node"},
	"server members":                {runServerMembers, "Display a list of the known servers and their status"},
	"status":                        {runStatus, "Display the status output for a resource"},
	"ui":                            {runUI, "Open the web UI"},
	"agent":                         {runAgent, "Run a nomadq agent"},
	"agent-info":                    {runAgentInfo, "Display status information about the local agent"},
	"operator scheduler get-config": {runSchedulerGetConfig, "Display the current scheduler configuration"},
	"operator scheduler set-config": {runSchedulerSetConfig, "Modify the current scheduler configuration"},
	"operator root keyring list":    {runRootKeyringList, "List the root keys of the keyring"},
	"operator root keyring rotate":  {runRootKeyringRotate, "Make a new active root key"},
	"operator root keyring remove":  {runRootKeyringRemove, "Remove an inactive root key"},
	"queue status":                  {runQueueStatus, "Display the batch job queue's settings and depth"},
	"queue jobs":                    {runQueueJobs, "List the jobs in the batch job queue"},
	"queue hold":                    {queueControl("hold", "Keep a queued job's place in the batch queue but skip it until released."), "Hold a queued job in the batch queue"},
	"queue release":                 {queueControl("release", "Let a held job in the batch queue go again, from the place it kept."), "Release a held job in the batch queue"},
	"queue top":                     {queueControl("top", "Move a queued job to the head of its namespace in the batch queue."), "Move a queued job to the head of its namespace"},
	"queue priority":                {runQueuePriority, "Display the effective priority of waiting jobs and its factors"},
	"queue usage":                   {runQueueUsage, "Display or reset the namespaces' decayed batch usage"},
	"namespace apply":               {runNamespaceApply, "Create or update a namespace"},
	"namespace list":                {runNamespaceList, "List namespaces"},
	"namespace status":              {runNamespaceStatus, "Display a namespace's status"},
	"namespace delete":              {runNamespaceDelete, "Delete a namespace"},
	"node pool apply":               {runNodePoolApply, "Create or update a node pool"},
	"node pool list":                {runNodePoolList, "List node pools"},
	"node pool info":                {runNodePoolInfo, "Fetch information on an existing node pool"},
	"node pool nodes":               {runNodePoolNodes, "Fetch a list of nodes in a node pool"},
	"node pool jobs":                {runNodePoolJobs, "Fetch a list of jobs in a node pool"},
	"node pool delete":              {runNodePoolDelete, "Delete a node pool"},
	// Job history, day-2 job commands, backups and their top-level aliases.
	"job history":                {runJobHistory, "Display all tracked versions of a job"},
	"job revert":                 {runJobRevert, "Revert to a prior version of the job"},
	"job allocs":                 {runJobAllocs, "List allocations for a job"},
	"job eval":                   {runJobEval, "Force an evaluation for the job"},
	"job scale":                  {runJobScale, "Change the count of a Nomad job group"},
	"job init":                   {runJobInit, "Create an example job file"},
	"system gc":                  {runSystemGC, "Run the system garbage collection process"},
	"system reconcile summaries": {runSystemReconcileSummaries, "Reconciles the summaries of all registered jobs"},
	"operator snapshot save":     {runOperatorSnapshotSave, "Saves snapshot of Nomad server state"},
	"operator snapshot restore":  {runOperatorSnapshotRestore, "Restore snapshot of Nomad server state"},
	"operator snapshot inspect":  {runOperatorSnapshotInspect, "Displays information about a Nomad snapshot file"},
	"operator raft list-peers":   {runOperatorRaftListPeers, "Display the current Raft peer configuration"},
	"operator raft remove-peer":  {runOperatorRaftRemovePeer, "Remove a Nomad server from the Raft configuration"},
	"monitor":                    {runAgentMonitor, "Stream logs from a Nomad agent"},
	"run":                        {runJobRun, "Run a new job or update an existing job"},
	"plan":                       {runJobPlan, "Dry-run a job update to determine its effects"},
	"stop":                       {runJobStop, "Stop a running job"},
	"logs":                       {runAllocLogs, "Stream the logs of a task"},
	"inspect":                    {runJobInspect, "Inspect a submitted job"},
	"validate":                   {runJobValidate, "Check a job specification for errors"},
	"init":                       {runJobInit, "Create an example job file"},
	"acl bootstrap":              {runACLBootstrap, "Bootstrap the ACL system for initial token"},
	"acl policy apply":           {runACLPolicyApply, "Create or update an ACL policy"},
	"acl policy list":            {runACLPolicyList, "List ACL policies"},
	"acl policy info":            {runACLPolicyInfo, "Fetch info on an existing ACL policy"},
	"acl policy delete":          {runACLPolicyDelete, "Delete an existing ACL policy"},
	"acl token create":           {runACLTokenCreate, "Create a new ACL token"},
	"acl token update":           {runACLTokenUpdate, "Update an existing ACL token"},
	"acl token list":             {runACLTokenList, "List ACL tokens"},
	"acl token info":             {runACLTokenInfo, "Fetch information on an existing ACL token"},
	"acl token self":             {runACLTokenSelf, "Lookup self ACL token"},
	"acl token delete":           {runACLTokenDelete, "Delete an existing ACL token"},
	// The servers' gossip encryption keyring (not the root keyring).
	"operator gossip keyring list":     {runGossipKeyringList, "List gossip encryption keys"},
	"operator gossip keyring install":  {runGossipKeyringInstall, "Install a gossip encryption key"},
	"operator gossip keyring use":      {runGossipKeyringUse, "Change the primary gossip encryption key"},
	"operator gossip keyring remove":   {runGossipKeyringRemove, "Remove a gossip encryption key"},
	"operator gossip keyring generate": {runGossipKeyringGenerate, "Generate a new gossip encryption key"},
	"acl auth-method create":           {runACLAuthMethodCreate, "Create a new ACL auth method"},
	"acl auth-method update":           {runACLAuthMethodUpdate, "Update an existing ACL auth method"},
	"acl auth-method list":             {runACLAuthMethodList, "List ACL auth methods"},
	"acl auth-method info":             {runACLAuthMethodInfo, "Fetch information on an existing ACL auth method"},
	"acl auth-method delete":           {runACLAuthMethodDelete, "Delete an existing ACL auth method"},
	"acl binding-rule create":          {runACLBindingRuleCreate, "Create a new ACL binding rule"},
	"acl binding-rule update":          {runACLBindingRuleUpdate, "Update an existing ACL binding rule"},
	"acl binding-rule list":            {runACLBindingRuleList, "List ACL binding rules"},
	"acl binding-rule info":            {runACLBindingRuleInfo, "Fetch information on an existing ACL binding rule"},
	"acl binding-rule delete":          {runACLBindingRuleDelete, "Delete an existing ACL binding rule"},
	"login":                            {runLogin, "Login to Nomad using an auth method"},
	"tls ca create":                    {runTLSCACreate, "Create a certificate authority for Nomad"},
	"tls cert create":                  {runTLSCertCreate, "Create a new TLS certificate"},
	"tls ca info":                      {runTLSCAInfo, "Show certificate authority information"},
	"tls cert info":                    {runTLSCertInfo, "Show certificate information"},

	// Everyday Nomad commands of issue 42 item 6.
	"fmt":                           {runFmt, "Rewrites Nomad config and job files to canonical format"},
	"config validate":               {runConfigValidate, "Validate config files/directories"},
	"operator autopilot get-config": {runAutopilotGetConfig, "Display the current Autopilot configuration"},
	"operator autopilot set-config": {runAutopilotSetConfig, "Modify the current Autopilot configuration"},
	"operator autopilot health":     {runAutopilotHealth, "Display the current Autopilot health"},
	"operator metrics":              {runOperatorMetrics, "Retrieve Nomad metrics"},
	"job restart":                   {runJobRestart, "Restart or reschedule allocations for a job"},
	"var lock":                      {runVarLock, "Put a lock on a variable and run a child command if operation is successful"},
	"node meta apply":               {runNodeMetaApply, "Modify node metadata"},
	"node meta read":                {runNodeMetaRead, "Read node metadata"},
	"operator debug":                {runOperatorDebug, "Build a debug archive"},

	"service list":   {runServiceList, "Display all registered Nomad services"},
	"service info":   {runServiceInfo, "Display an individual Nomad service registration"},
	"service delete": {runServiceDelete, "Deregister a registered service"},
}
