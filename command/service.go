package command

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"

	"github.com/hashicorp/nomad/api"
	"github.com/posener/complete"
)

const serviceListUsage = `
Usage: nomad service list [options]

  List is used to list the currently registered services.

  If ACLs are enabled, this command requires a token with the 'read-job'
  capabilities for the namespace of all services. Any namespaces that the token
  does not have access to will have its services filtered from the results.
`

func runServiceList(args []string, s Streams) int {
	var (
		af     apiFlags
		asJSON bool
		tmpl   string
	)
	fs := newFlagSet("service list", s.Stderr, serviceListUsage)
	af.register(fs)
	fs.BoolVar(&asJSON, "json", false, "Output the services in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the services using a Go template")
	client, ok := parseNoArgs(fs, &af, args, s)
	if !ok {
		return 1
	}
	list, _, err := client.Services().List(nil)
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error listing service registrations: %s\n", err)
		return 1
	}
	if len(list) == 0 {
		fmt.Fprintln(s.Stdout, "No service registrations found")
		return 0
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, list); done {
		return code
	}
	fmt.Fprintln(s.Stdout, formatServiceList(af.config().Namespace, list))
	return 0
}

// formatServiceList is Nomad's service table: name and tags, with the
// namespace between them when listing every namespace.
func formatServiceList(ns string, list []*api.ServiceRegistrationListStub) string {
	sorted := append([]*api.ServiceRegistrationListStub(nil), list...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Namespace < sorted[j].Namespace })
	all := ns == api.AllNamespacesNamespace
	header := "Service Name"
	if all {
		header += "|Namespace"
	}
	rows := []string{header + "|Tags"}
	for _, stub := range sorted {
		services := append([]*api.ServiceRegistrationStub(nil), stub.Services...)
		sort.Slice(services, func(i, j int) bool { return services[i].ServiceName < services[j].ServiceName })
		for _, svc := range services {
			tags := append([]string(nil), svc.Tags...)
			sort.Strings(tags)
			row := svc.ServiceName
			if all {
				row += "|" + stub.Namespace
			}
			rows = append(rows, row+"|["+strings.Join(tags, ",")+"]")
		}
	}
	return formatList(rows)
}

const serviceInfoUsage = `
Usage: nomad service info [options] <service_name>

  Info is used to read the services registered to a single service name.

  When ACLs are enabled, this command requires a token with the 'read-job'
  capability for the service namespace.
`

func runServiceInfo(args []string, s Streams) int {
	var (
		af                      apiFlags
		asJSON, verbose         bool
		tmpl, filter, pageToken string
		perPage                 int
	)
	fs := newFlagSet("service info", s.Stderr, serviceInfoUsage)
	af.register(fs)
	fs.BoolVar(&verbose, "verbose", false, "Display full information")
	fs.IntVar(&perPage, "per-page", 0, "How many results to show per page")
	fs.StringVar(&pageToken, "page-token", "", "Where to start pagination")
	fs.StringVar(&filter, "filter", "", "Specifies an expression used to filter query results")
	fs.BoolVar(&asJSON, "json", false, "Output the service in JSON format")
	fs.StringVar(&tmpl, "t", "", "Format and display the service using a Go template")
	client, ok := parseOneArg(fs, &af, args, "<service_name>", s)
	if !ok {
		return 1
	}
	ns, name, possible, err := serviceByPrefix(client, af.config().Namespace, fs.Arg(0))
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error listing service registrations: %s\n", err)
		return 1
	}
	if len(possible) > 0 {
		fmt.Fprintf(s.Stderr, "Prefix matched multiple services\n\n%s\n", formatServiceList(af.config().Namespace, possible))
		return 1
	}
	regs, qm, err := client.Services().Get(name, &api.QueryOptions{
		Namespace: ns, Filter: filter, PerPage: int32(perPage), NextToken: pageToken,
	})
	if err != nil {
		fmt.Fprintf(s.Stderr, "Error listing service registrations: %s\n", err)
		return 1
	}
	if len(regs) == 0 {
		fmt.Fprintln(s.Stdout, "No service registrations found")
		return 0
	}
	if done, code := outputFormat(s.Stdout, s.Stderr, asJSON, tmpl, regs); done {
		return code
	}
	// Several jobs may register one name: group the instances by job.
	sort.SliceStable(regs, func(i, j int) bool { return regs[i].JobID < regs[j].JobID })
	if verbose {
		for _, r := range regs {
			fmt.Fprintln(s.Stdout, formatKV([]string{
				"ID|" + r.ID,
				"Service Name|" + r.ServiceName,
				"Namespace|" + r.Namespace,
				"Job ID|" + r.JobID,
				"Alloc ID|" + r.AllocID,
				"Node ID|" + r.NodeID,
				"Datacenter|" + r.Datacenter,
				fmt.Sprintf("Address|%s:%d", r.Address, r.Port),
				"Tags|[" + strings.Join(r.Tags, ",") + "]\n",
			}))
			fmt.Fprintln(s.Stdout)
		}
	} else {
		rows := []string{"Job ID|Address|Tags|Node ID|Alloc ID"}
		for _, r := range regs {
			rows = append(rows, fmt.Sprintf("%s|%s|[%s]|%s|%s", r.JobID, serviceAddress(r.Address, r.Port),
				strings.Join(r.Tags, ","), shortID(r.NodeID, false), shortID(r.AllocID, false)))
		}
		fmt.Fprintln(s.Stdout, formatList(rows))
	}
	if qm.NextToken != "" {
		fmt.Fprintf(s.Stdout, "\nResults have been paginated. To get the next page run: \n\n%s -page-token=%s %s\n",
			"nomad service info", qm.NextToken, name)
	}
	return 0
}

func serviceAddress(addr string, port int) string {
	if port == 0 {
		return addr
	}
	return net.JoinHostPort(addr, strconv.Itoa(port))
}

// serviceByPrefix resolves the service name a user typed, as Nomad's
// CLI does: the one service that starts with it, or the one named exactly
// so; otherwise the candidates (possible) for the user to pick from.
func serviceByPrefix(client *api.Client, ns, prefix string) (string, string, []*api.ServiceRegistrationListStub, error) {
	list, _, err := client.Services().List(&api.QueryOptions{Namespace: ns, Prefix: prefix})
	if err != nil {
		return "", "", nil, err
	}
	var exact []string
	count := 0
	for _, stub := range list {
		for _, svc := range stub.Services {
			count++
			if svc.ServiceName == prefix {
				exact = append(exact, stub.Namespace)
			}
		}
	}
	switch {
	case count == 0:
		return "", "", nil, fmt.Errorf("No service registrations with prefix %q found", prefix)
	case count == 1:
		return list[0].Namespace, list[0].Services[0].ServiceName, nil, nil
	case len(exact) == 1:
		return exact[0], prefix, nil, nil
	}
	return "", "", list, nil
}

const serviceDeleteUsage = `
Usage: nomad service delete [options] <service_name> <service_id>

  Delete is used to deregister the specified service registration. It should be
  used with caution and can only remove a single registration, via the service
  name and service ID, at a time.

  When ACLs are enabled, this command requires a token with the 'submit-job'
  capability for the service registration namespace.
`

func runServiceDelete(args []string, s Streams) int {
	var af apiFlags
	fs := newFlagSet("service delete", s.Stderr, serviceDeleteUsage)
	af.register(fs)
	if err := fs.Parse(args); err != nil {
		return 1
	}
	if fs.NArg() != 2 {
		fmt.Fprintln(s.Stderr, "This command takes two arguments: <service_name> and <service_id>")
		return 1
	}
	client, err := af.client()
	if err != nil {
		fmt.Fprintln(s.Stderr, err)
		return 1
	}
	if _, err := client.Services().Delete(fs.Arg(0), fs.Arg(1), nil); err != nil {
		fmt.Fprintf(s.Stderr, "Error deleting service registration: %s\n", err)
		return 1
	}
	fmt.Fprintln(s.Stdout, "Successfully deleted service registration")
	return 0
}

// predictServices completes service names (nomad service info, and the
// first argument of nomad service delete) and, after a name, the IDs of
// its registrations (delete's second argument), from the agent the
// environment names.
func predictServices() complete.Predictor {
	return complete.PredictFunc(func(a complete.Args) []string {
		var af apiFlags
		client, err := af.client()
		if err != nil {
			return nil
		}
		var words []string
		for _, w := range a.Completed {
			if !strings.HasPrefix(w, "-") {
				words = append(words, w)
			}
		}
		if len(words) == 1 {
			regs, _, err := client.Services().Get(words[0], nil)
			if err != nil {
				return nil
			}
			var ids []string
			for _, r := range regs {
				if strings.HasPrefix(r.ID, a.Last) {
					ids = append(ids, r.ID)
				}
			}
			return ids
		}
		list, _, err := client.Services().List(&api.QueryOptions{Prefix: a.Last})
		if err != nil {
			return nil
		}
		var names []string
		for _, stub := range list {
			for _, s := range stub.Services {
				names = append(names, s.ServiceName)
			}
		}
		return names
	})
}
