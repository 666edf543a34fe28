package command

import (
	"fmt"
	"strings"

	"github.com/hashicorp/nomad/api"
)

// fetchAlloc resolves an alloc ID prefix to the full allocation, with
// Nomad's messages for what goes wrong.
func fetchAlloc(c *api.Client, prefix string) (*api.Allocation, error) {
	if len(prefix) == 1 {
		return nil, fmt.Errorf("Alloc ID must contain at least two characters.")
	}
	stub, err := resolveAlloc(c, prefix, false)
	if err != nil {
		if amb, ok := err.(*errAmbiguous); ok {
			return nil, fmt.Errorf("%s", amb.msg)
		}
		return nil, err
	}
	alloc, _, err := c.Allocations().Info(stub.ID, &api.QueryOptions{Namespace: stub.Namespace})
	if err != nil {
		return nil, fmt.Errorf("Error querying allocation: %s", err)
	}
	return alloc, nil
}

// connectAlloc makes the api client from the connection flags and
// resolves the alloc ID prefix with it.
func connectAlloc(af *apiFlags, prefix string) (*api.Client, *api.Allocation, error) {
	client, err := af.client()
	if err != nil {
		return nil, nil, err
	}
	alloc, err := fetchAlloc(client, prefix)
	if err != nil {
		return nil, nil, err
	}
	return client, alloc, nil
}

// checkAllocTask returns an error naming the alloc's tasks when task is
// not one of them.
func checkAllocTask(alloc *api.Allocation, task string) error {
	if alloc.Job == nil {
		return nil
	}
	tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup)
	if tg == nil {
		return nil
	}
	var names []string
	for _, t := range tg.Tasks {
		if t.Name == task {
			return nil
		}
		names = append(names, t.Name)
	}
	return fmt.Errorf("Could not find task named: %s, found:\n  * %s", task, strings.Join(names, "\n  * "))
}

// onlyAllocTask is the alloc's task when its group has exactly one.
func onlyAllocTask(alloc *api.Allocation) (string, error) {
	if alloc.Job != nil {
		if tg := alloc.Job.LookupTaskGroup(alloc.TaskGroup); tg != nil && len(tg.Tasks) == 1 {
			return tg.Tasks[0].Name, nil
		}
	}
	return "", fmt.Errorf("Allocation %q has multiple tasks. Please specify the task name with -task", shortID(alloc.ID, false))
}
