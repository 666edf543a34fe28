// Package serviceregistration builds and keeps the registrations of an
// alloc's nomad-provider services (Nomad's built-in service discovery):
// their IDs, addresses and ports as Nomad computes them, and a registrar
// that brings the servers' catalog in line with the services that should
// be up, retrying until the servers have it.
package serviceregistration

import (
	"fmt"

	"github.com/nomadq/nomadq/structs"
)

// taskPrefix scopes the IDs of services registered for tasks, as Nomad
// scopes them.
const taskPrefix = "_nomad-task-"

// GroupOwner is the owner part of a group service's ID: Nomad names group
// services after "group-<group name>" where a task service has its task.
func GroupOwner(group string) string { return "group-" + group }

// MakeAllocServiceID returns the ID of an alloc's service, owned by a task
// (its name) or the group (GroupOwner), in Nomad's format:
// "_nomad-task-<alloc ID>-<owner>-<service name>-<port label>".
func MakeAllocServiceID(allocID, owner string, s *structs.Service) string {
	return fmt.Sprintf("%s%s-%s-%s-%s", taskPrefix, allocID, owner, s.Name, s.PortLabel)
}
