package structs

import (
	"github.com/hashicorp/go-bexpr"
)

// FilterErrorPrefix starts the message of every error about a `filter`
// query parameter. The errors are coded 400, so the HTTP layer answers
// them as the caller's fault whether the expression failed to parse on
// the agent or failed to evaluate on a server behind an RPC.
const FilterErrorPrefix = "Invalid filter expression"

// Filter is a compiled `filter` query parameter. The language is go-bexpr,
// as on Nomad, and selectors name the Go fields of the object the list is
// made of (Status, Meta.owner, TaskGroups.0.Name), which are also its JSON
// keys on the wire. A nil *Filter keeps everything.
type Filter struct {
	eval *bexpr.Evaluator
}

// NewFilter compiles expr; an empty expr gives a nil *Filter. The error
// is coded 400; its message starts with FilterErrorPrefix and carries the
// parser's position.
func NewFilter(expr string) (*Filter, error) {
	if expr == "" {
		return nil, nil
	}
	// Nomad builds its evaluators without options: no tag name, so
	// selectors are field names, and no unknown-value fallback, so a
	// selector that names no field is an error rather than a silent miss.
	eval, err := bexpr.CreateEvaluator(expr)
	if err != nil {
		return nil, NewBadRequestf("%s: %v", FilterErrorPrefix, err)
	}
	return &Filter{eval: eval}, nil
}

// KeepMatching returns the items whose subject matches f, in their order.
// subject gives the object the expression is evaluated on (the item
// itself, or the item as the API shows it). An item the expression cannot
// be evaluated on (a selector that names no field, a value of the wrong
// type) is an error naming the selector, as on Nomad.
func KeepMatching[T any](f *Filter, items []T, subject func(T) any) ([]T, error) {
	if f == nil {
		return items, nil
	}
	kept := items[:0:0]
	for _, it := range items {
		ok, err := f.eval.Evaluate(subject(it))
		if err != nil {
			return nil, NewBadRequestf("%s %q: %v", FilterErrorPrefix, f.eval.Expression(), err)
		}
		if ok {
			kept = append(kept, it)
		}
	}
	return kept, nil
}
