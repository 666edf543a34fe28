package apiconv

// Every exported field of every api type a job reaches is classified here,
// keyed "Type.Field" by the api type's name (so Constraint.LTarget covers
// constraints at job, group and task level alike):
//
//   - mapped: the field takes effect; its type's mapping function copies it
//     into structs and the client or the scheduler acts on it;
//   - refused: a submitted job that sets it is refused, naming the field
//     (see Check); nothing in nomadq would act on it;
//   - warned: accepted, with a warning in the register, plan and validate
//     answers: update, copied and run as written except for how a new
//     version rolls out (migrate takes effect in node drains), and a
//     task's resources disk, which Nomad deprecated and ignores;
//   - fixed(values...): accepted only with a value nomadq always uses
//     anyway (the default identity's name and audience); any other
//     value is refused;
//   - ignored(reason): carries no meaning in a submission, because the
//     server sets it (indexes, status, version). Keep this list short.
//
// Check descends into the fields of a mapped, warned or fixed field's type,
// and not into a refused one's: a refused block is refused whole.
//
// To make a refused field take effect: change its line to mapped, write its
// copy in the mapping function of its type (task.go for Task, network.go for
// NetworkResource and Port, ...) if Job does not copy it yet, change its row
// in website/jobspec.md to "supported", and make the client or scheduler
// honour it. Job already copies templates, artifacts, ports, cores,
// shutdown_delay and logs.disabled; host volumes have no structs fields yet.
// The tests then check the flip: a mapped field must change the converted
// job (TestFields_Behaviour), every field of a newly reachable type must
// have a line here (TestFields_Classified), and the docs must agree
// (TestFields_Documented). A field the api module adds later fails
// TestFields_Classified until it gets a line.
var fields = map[string]rule{
	"Job.Region":                   mapped,
	"Job.Namespace":                mapped,
	"Job.ID":                       mapped,
	"Job.Name":                     mapped,
	"Job.Type":                     mapped,
	"Job.Priority":                 mapped,
	"Job.AllAtOnce":                mapped,
	"Job.Datacenters":              mapped,
	"Job.NodePool":                 mapped,
	"Job.Constraints":              mapped,
	"Job.Affinities":               mapped,
	"Job.TaskGroups":               mapped,
	"Job.Update":                   warned,
	"Job.Multiregion":              refused,
	"Job.Spreads":                  mapped,
	"Job.Periodic":                 mapped,
	"Job.ParameterizedJob":         mapped,
	"Job.Reschedule":               mapped,
	"Job.Migrate":                  mapped,
	"Job.Meta":                     mapped,
	"Job.UI":                       refused,
	"Job.Stop":                     mapped,
	"Job.ParentID":                 mapped,
	"Job.Dispatched":               mapped,
	"Job.DispatchIdempotencyToken": mapped,
	"Job.Payload":                  mapped,
	"Job.ConsulNamespace":          refused,
	"Job.VaultNamespace":           refused,
	"Job.NomadTokenID":             ignored("set by the server from the submitting token"),
	"Job.Status":                   ignored("set by the server"),
	"Job.StatusDescription":        ignored("set by the server"),
	"Job.Stable":                   ignored("set by the server; changed through /v1/job/:id/stable"),
	"Job.Version":                  ignored("set by the server"),
	"Job.SubmitTime":               ignored("set by the server"),
	"Job.CreateIndex":              ignored("set by the server"),
	"Job.ModifyIndex":              ignored("set by the server"),
	"Job.JobModifyIndex":           ignored("set by the server"),
	"Job.VersionTag":               refused,

	"TaskGroup.Name":                      mapped,
	"TaskGroup.Count":                     mapped,
	"TaskGroup.Constraints":               mapped,
	"TaskGroup.Affinities":                mapped,
	"TaskGroup.Tasks":                     mapped,
	"TaskGroup.Spreads":                   mapped,
	"TaskGroup.Volumes":                   mapped,
	"TaskGroup.RestartPolicy":             mapped,
	"TaskGroup.Disconnect":                refused,
	"TaskGroup.ReschedulePolicy":          mapped,
	"TaskGroup.EphemeralDisk":             mapped,
	"TaskGroup.Update":                    warned,
	"TaskGroup.Migrate":                   mapped,
	"TaskGroup.Networks":                  mapped,
	"TaskGroup.Meta":                      mapped,
	"TaskGroup.Services":                  mapped,
	"TaskGroup.ShutdownDelay":             mapped,
	"TaskGroup.MaxRunDuration":            mapped,
	"TaskGroup.StopAfterClientDisconnect": refused,
	"TaskGroup.MaxClientDisconnect":       refused,
	"TaskGroup.Scaling":                   mapped,
	"TaskGroup.Consul":                    refused,
	"TaskGroup.PreventRescheduleOnLost":   refused,

	"Task.Name":            mapped,
	"Task.Driver":          mapped,
	"Task.User":            mapped,
	"Task.Lifecycle":       mapped,
	"Task.Config":          mapped,
	"Task.Constraints":     mapped,
	"Task.Affinities":      mapped,
	"Task.Env":             mapped,
	"Task.Services":        mapped,
	"Task.Resources":       mapped,
	"Task.RestartPolicy":   mapped,
	"Task.Meta":            mapped,
	"Task.KillTimeout":     mapped,
	"Task.LogConfig":       mapped,
	"Task.Artifacts":       mapped,
	"Task.Vault":           refused,
	"Task.Consul":          refused,
	"Task.Templates":       mapped,
	"Task.DispatchPayload": mapped,
	"Task.VolumeMounts":    mapped,
	"Task.CSIPluginConfig": refused,
	"Task.Leader":          mapped,
	"Task.ShutdownDelay":   mapped,
	"Task.KillSignal":      mapped,
	"Task.Kind":            refused,
	"Task.ScalingPolicies": refused,

	// Service blocks with provider "nomad": registered in the servers'
	// catalog while the alloc runs, their checks run by the client. What
	// only Consul would act on is refused; provider "consul" (the default)
	// is refused when the job is validated.
	"Service.Name":              mapped,
	"Service.Tags":              mapped,
	"Service.CanaryTags":        refused, // canaries are not implemented
	"Service.EnableTagOverride": refused, // Consul anti-entropy
	"Service.PortLabel":         mapped,
	"Service.AddressMode":       mapped,
	"Service.Address":           mapped,
	"Service.Checks":            mapped,
	"Service.CheckRestart":      mapped,
	"Service.Connect":           refused, // Consul Connect
	"Service.Meta":              mapped,
	"Service.CanaryMeta":        refused, // canaries are not implemented
	"Service.TaggedAddresses":   refused, // Consul only
	"Service.TaskName":          mapped,
	"Service.OnUpdate":          mapped,
	"Service.Identity":          refused, // Consul service identities
	"Service.Weights":           refused, // Consul DNS weights
	"Service.Provider":          mapped,
	"Service.Cluster":           fixed("default"),
	"Service.Kind":              refused, // Consul service kinds

	"ServiceCheck.Name":                   mapped,
	"ServiceCheck.Type":                   mapped,
	"ServiceCheck.Command":                mapped,
	"ServiceCheck.Args":                   mapped,
	"ServiceCheck.Path":                   mapped,
	"ServiceCheck.Protocol":               mapped,
	"ServiceCheck.PortLabel":              mapped,
	"ServiceCheck.Expose":                 refused, // Connect only
	"ServiceCheck.AddressMode":            mapped,
	"ServiceCheck.Advertise":              refused,
	"ServiceCheck.Interval":               mapped,
	"ServiceCheck.Timeout":                mapped,
	"ServiceCheck.InitialStatus":          refused, // Consul only
	"ServiceCheck.Notes":                  refused, // Consul only
	"ServiceCheck.TLSServerName":          refused, // Consul only
	"ServiceCheck.TLSSkipVerify":          mapped,
	"ServiceCheck.Header":                 mapped,
	"ServiceCheck.Method":                 mapped,
	"ServiceCheck.CheckRestart":           mapped,
	"ServiceCheck.GRPCService":            refused, // grpc checks need Consul
	"ServiceCheck.GRPCUseTLS":             refused, // grpc checks need Consul
	"ServiceCheck.TaskName":               mapped,
	"ServiceCheck.SuccessBeforePassing":   refused, // Consul only
	"ServiceCheck.FailuresBeforeCritical": refused, // Consul only
	"ServiceCheck.FailuresBeforeWarning":  refused, // Consul only
	"ServiceCheck.Body":                   mapped,
	"ServiceCheck.OnUpdate":               mapped,

	"CheckRestart.Limit":          mapped,
	"CheckRestart.Grace":          mapped,
	"CheckRestart.IgnoreWarnings": refused, // nomad checks have no warning state

	// A group's scaling block: its bounds are enforced on every count
	// change; Policy is kept for an external autoscaler, as Nomad keeps it.
	"ScalingPolicy.Min":         mapped,
	"ScalingPolicy.Max":         mapped,
	"ScalingPolicy.Policy":      mapped,
	"ScalingPolicy.Enabled":     mapped,
	"ScalingPolicy.Type":        mapped,
	"ScalingPolicy.ID":          ignored("set by the server"),
	"ScalingPolicy.Namespace":   ignored("set by the server from the job"),
	"ScalingPolicy.Target":      ignored("set by the server from the job and group"),
	"ScalingPolicy.CreateIndex": ignored("set by the server"),
	"ScalingPolicy.ModifyIndex": ignored("set by the server"),
	"Task.Secrets":              refused,
	"Task.Identity":             mapped,
	"Task.Identities":           mapped,
	"Task.Actions":              refused,
	"Task.Schedule":             refused,

	"Constraint.LTarget": mapped,
	"Constraint.RTarget": mapped,
	"Constraint.Operand": mapped,

	"Affinity.LTarget": mapped,
	"Affinity.RTarget": mapped,
	"Affinity.Operand": mapped,
	"Affinity.Weight":  mapped,

	"Spread.Attribute":     mapped,
	"Spread.Weight":        mapped,
	"Spread.SpreadTarget":  mapped,
	"SpreadTarget.Value":   mapped,
	"SpreadTarget.Percent": mapped,

	"UpdateStrategy.Stagger":          mapped,
	"UpdateStrategy.MaxParallel":      mapped,
	"UpdateStrategy.HealthCheck":      mapped,
	"UpdateStrategy.MinHealthyTime":   mapped,
	"UpdateStrategy.HealthyDeadline":  mapped,
	"UpdateStrategy.ProgressDeadline": mapped,
	"UpdateStrategy.Canary":           mapped,
	"UpdateStrategy.AutoRevert":       mapped,
	"UpdateStrategy.AutoPromote":      mapped,

	"MigrateStrategy.MaxParallel":     mapped,
	"MigrateStrategy.HealthCheck":     mapped,
	"MigrateStrategy.MinHealthyTime":  mapped,
	"MigrateStrategy.HealthyDeadline": mapped,

	"PeriodicConfig.Enabled":         mapped,
	"PeriodicConfig.Spec":            mapped,
	"PeriodicConfig.Specs":           mapped,
	"PeriodicConfig.SpecType":        mapped,
	"PeriodicConfig.ProhibitOverlap": mapped,
	"PeriodicConfig.TimeZone":        mapped,

	"ParameterizedJobConfig.Payload":      mapped,
	"ParameterizedJobConfig.MetaRequired": mapped,
	"ParameterizedJobConfig.MetaOptional": mapped,

	"ReschedulePolicy.Attempts":      mapped,
	"ReschedulePolicy.Interval":      mapped,
	"ReschedulePolicy.Delay":         mapped,
	"ReschedulePolicy.DelayFunction": mapped,
	"ReschedulePolicy.MaxDelay":      mapped,
	"ReschedulePolicy.Unlimited":     mapped,

	"RestartPolicy.Interval":        mapped,
	"RestartPolicy.Attempts":        mapped,
	"RestartPolicy.Delay":           mapped,
	"RestartPolicy.Mode":            mapped,
	"RestartPolicy.RenderTemplates": mapped, // templates render before every run anyway

	"EphemeralDisk.Sticky":  refused,
	"EphemeralDisk.Migrate": refused,
	"EphemeralDisk.SizeMB":  mapped,

	"NetworkResource.Mode":          mapped, // host, bridge, none, cni/<name>: checked in structs
	"NetworkResource.Device":        refused,
	"NetworkResource.CIDR":          refused,
	"NetworkResource.IP":            refused,
	"NetworkResource.DNS":           mapped,
	"NetworkResource.ReservedPorts": mapped,
	"NetworkResource.DynamicPorts":  mapped,
	"NetworkResource.Hostname":      mapped,
	"NetworkResource.MBits":         refused,
	"NetworkResource.CNI":           mapped,

	"DNSConfig.Servers":  mapped,
	"DNSConfig.Searches": mapped,
	"DNSConfig.Options":  mapped,
	"CNIConfig.Args":     mapped,

	// No host networks (website/networking.md).
	"Port.Label":           mapped,
	"Port.Value":           mapped,
	"Port.To":              mapped,
	"Port.HostNetwork":     refused,
	"Port.IgnoreCollision": mapped,

	"Resources.CPU":         mapped,
	"Resources.Cores":       mapped,
	"Resources.MemoryMB":    mapped,
	"Resources.MemoryMaxMB": mapped,
	"Resources.DiskMB":      warnedWith(diskWarning),
	"Resources.Networks":    refused, // task-level networks: deprecated in Nomad
	"Resources.Devices":     refused,
	"Resources.NUMA":        refused,
	"Resources.SecretsMB":   refused,
	"Resources.IOPS":        refused,

	"TaskLifecycle.Hook":    mapped,
	"TaskLifecycle.Sidecar": mapped,

	"LogConfig.MaxFiles":      mapped,
	"LogConfig.MaxFileSizeMB": mapped,
	"LogConfig.Enabled":       fixed(true), // the deprecated inverse of Disabled
	"LogConfig.Disabled":      mapped,

	"DispatchPayloadConfig.File": mapped,

	"WorkloadIdentity.Name":         fixed("default"),
	"WorkloadIdentity.Audience":     fixed([]string{"nomadproject.io"}),
	"WorkloadIdentity.ChangeMode":   refused,
	"WorkloadIdentity.ChangeSignal": refused,
	"WorkloadIdentity.Env":          mapped,
	"WorkloadIdentity.File":         mapped,
	"WorkloadIdentity.Filepath":     refused,
	"WorkloadIdentity.ServiceName":  refused,
	"WorkloadIdentity.TTL":          refused,
	"WorkloadIdentity.ExtraClaims":  refused,

	"Template.SourcePath":           mapped,
	"Template.DestPath":             mapped,
	"Template.EmbeddedTmpl":         mapped,
	"Template.ChangeMode":           mapped,
	"Template.ChangeScript":         mapped,
	"Template.ChangeSignal":         mapped,
	"Template.Once":                 mapped,
	"Template.Splay":                mapped,
	"Template.Perms":                mapped,
	"Template.Uid":                  mapped,
	"Template.Gid":                  mapped,
	"Template.LeftDelim":            mapped,
	"Template.RightDelim":           mapped,
	"Template.Envvars":              mapped,
	"Template.VaultGrace":           ignored("deprecated and unused since Nomad 0.11"),
	"Template.Wait":                 refused, // quiescence timers are not implemented: a change renders again at once
	"Template.ErrMissingKey":        mapped,
	"ChangeScript.Command":          mapped,
	"ChangeScript.Args":             mapped,
	"ChangeScript.Timeout":          mapped,
	"ChangeScript.FailOnError":      mapped,
	"ChangeScript.RunOnFirstRender": refused, // change scripts never run
	"WaitConfig.Min":                refused,
	"WaitConfig.Max":                refused,

	"TaskArtifact.GetterSource":   mapped,
	"TaskArtifact.GetterOptions":  mapped,
	"TaskArtifact.GetterHeaders":  mapped,
	"TaskArtifact.GetterMode":     mapped,
	"TaskArtifact.GetterInsecure": mapped,
	"TaskArtifact.RelativeDest":   mapped,
	"TaskArtifact.Chown":          mapped,

	// Host volumes (website/volumes.md); the CSI-only fields are refused.
	"VolumeRequest.Name":           mapped,
	"VolumeRequest.Type":           fixed("host"),
	"VolumeRequest.Source":         mapped,
	"VolumeRequest.ReadOnly":       mapped,
	"VolumeRequest.Sticky":         refused,
	"VolumeRequest.AccessMode":     refused,
	"VolumeRequest.AttachmentMode": refused,
	"VolumeRequest.MountOptions":   refused,
	"VolumeRequest.PerAlloc":       refused,
	"VolumeRequest.ExtraKeysHCL":   ignored("left over by the HCL1 parser; never sent by jobspec"),
	"VolumeMount.Volume":           mapped,
	"VolumeMount.Destination":      mapped,
	"VolumeMount.ReadOnly":         mapped,
	"VolumeMount.PropagationMode":  fixed("private"),
	"VolumeMount.SELinuxLabel":     refused,
}
