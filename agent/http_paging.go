package agent

import (
	"github.com/nomadq/nomadq/structs"
)

// page applies the pagination parameters to a list sorted by the token
// key; the token of the next page is the key of its first item. Lists are
// filtered (the `filter` parameter) before they are paged, so a page is
// per_page matching items.
func page[T any](q *structs.QueryOptions, items []T, key func(T) string, m *structs.QueryMeta) []T {
	if q.NextToken != "" {
		start := len(items)
		for i, it := range items {
			if key(it) >= q.NextToken {
				start = i
				break
			}
		}
		items = items[start:]
	}
	if q.PerPage > 0 && len(items) > int(q.PerPage) {
		m.NextToken = key(items[q.PerPage])
		items = items[:q.PerPage]
	}
	return items
}

// filterAndPage applies the `filter` parameter, evaluated on each item as
// the API shows it, and then the pagination parameters. It serves the
// lists whose server endpoint does not filter (namespaces, node pools and
// their nodes and jobs).
func filterAndPage[T any](q *structs.QueryOptions, items []T, key func(T) string, m *structs.QueryMeta) ([]T, error) {
	f, err := structs.NewFilter(q.Filter)
	if err != nil {
		return nil, rpcError(err)
	}
	items, err = structs.KeepMatching(f, items, func(it T) any { return it })
	if err != nil {
		return nil, rpcError(err)
	}
	return page(q, items, key, m), nil
}
