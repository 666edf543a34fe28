package structs

import "fmt"

func validateServices(errs *MultiError, ctx string, ss []*Service) {
	if tooMany(errs, ctx, "services", len(ss), MaxListEntries) {
		return
	}
	for i, s := range ss {
		if s == nil {
			continue
		}
		switch s.Provider {
		case "", ServiceProviderConsul, ServiceProviderNomad:
		default:
			errs.Add(fmt.Errorf("%s: service %d (%q) provider %q is not allowed: must be consul or nomad", ctx, i+1, s.Name, s.Provider))
		}
	}
}
