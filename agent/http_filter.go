package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/structs"
)

// filterExpr is a parsed `filter` query parameter. nomadq implements a
// subset of go-bexpr: comparisons joined by "and" / "or" ("and" binds
// tighter), no parentheses and no "not". A comparison is one of
//
//	Selector == "value"      Selector != "value"
//	Selector contains "v"    Selector not contains "v"
//	Selector is empty        Selector is not empty
//	"v" in Selector          "v" not in Selector
//
// where Selector is a dotted path of field names (Meta.owner,
// JobSummary.Namespace) and values are quoted strings, numbers or bools.
type filterExpr struct {
	or [][]comparison // OR of ANDs
}

type comparison struct {
	selector []string
	op       string
	value    string
}

func parseFilter(s string) (*filterExpr, error) {
	toks, err := tokenize(s)
	if err != nil {
		return nil, err
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("empty expression")
	}
	f := &filterExpr{}
	var and []comparison
	for len(toks) > 0 {
		c, rest, err := parseComparison(toks)
		if err != nil {
			return nil, err
		}
		and = append(and, c)
		toks = rest
		if len(toks) == 0 {
			break
		}
		switch strings.ToLower(toks[0].text) {
		case "and":
		case "or":
			f.or = append(f.or, and)
			and = nil
		default:
			return nil, fmt.Errorf("expected \"and\" or \"or\" before %q", toks[0].text)
		}
		toks = toks[1:]
		if len(toks) == 0 {
			return nil, fmt.Errorf("expression ends after a boolean operator")
		}
	}
	f.or = append(f.or, and)
	return f, nil
}

type token struct {
	text   string
	quoted bool
}

func tokenize(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '"' || c == '`':
			j := i + 1
			var b strings.Builder
			for j < len(s) && s[j] != c {
				if s[j] == '\\' && j+1 < len(s) && c == '"' {
					j++
				}
				b.WriteByte(s[j])
				j++
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string starting at offset %d", i)
			}
			toks = append(toks, token{text: b.String(), quoted: true})
			i = j + 1
		case c == '=' || c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				toks = append(toks, token{text: s[i : i+2]})
				i += 2
				continue
			}
			return nil, fmt.Errorf("unexpected %q at offset %d", c, i)
		case c == '(' || c == ')':
			return nil, fmt.Errorf("parentheses are not supported by nomadq's filter subset")
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\"`=!()", rune(s[j])) {
				j++
			}
			toks = append(toks, token{text: s[i:j]})
			i = j
		}
	}
	return toks, nil
}

func parseComparison(toks []token) (comparison, []token, error) {
	word := func(i int, w string) bool {
		return i < len(toks) && !toks[i].quoted && strings.EqualFold(toks[i].text, w)
	}
	// "v" in Selector / "v" not in Selector
	if len(toks) >= 3 && word(1, "in") {
		return comparison{selector: strings.Split(toks[2].text, "."), op: "contains", value: toks[0].text}, toks[3:], nil
	}
	if len(toks) >= 4 && word(1, "not") && word(2, "in") {
		return comparison{selector: strings.Split(toks[3].text, "."), op: "not contains", value: toks[0].text}, toks[4:], nil
	}
	if len(toks) < 2 || toks[0].quoted {
		return comparison{}, nil, fmt.Errorf("expected a selector at %q", toks[0].text)
	}
	c := comparison{selector: strings.Split(toks[0].text, ".")}
	switch {
	case word(1, "is") && word(2, "empty"):
		c.op = "is empty"
		return c, toks[3:], nil
	case word(1, "is") && word(2, "not") && word(3, "empty"):
		c.op = "is not empty"
		return c, toks[4:], nil
	case toks[1].text == "==" || toks[1].text == "!=" || word(1, "contains"):
		c.op = strings.ToLower(toks[1].text)
		if len(toks) < 3 {
			return comparison{}, nil, fmt.Errorf("missing value after %q", toks[1].text)
		}
		c.value = toks[2].text
		return c, toks[3:], nil
	case word(1, "not") && word(2, "contains"):
		if len(toks) < 4 {
			return comparison{}, nil, fmt.Errorf("missing value after \"not contains\"")
		}
		c.op, c.value = "not contains", toks[3].text
		return c, toks[4:], nil
	}
	return comparison{}, nil, fmt.Errorf("unsupported operator %q (supported: ==, !=, contains, not contains, is empty, is not empty, in, not in)", toks[1].text)
}

// match evaluates the expression against obj as the API encodes it.
func (f *filterExpr) match(obj any) (bool, error) {
	var buf bytes.Buffer
	if err := codec.NewEncoder(&buf, structs.JsonHandle).Encode(obj); err != nil {
		return false, err
	}
	var doc any
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return false, err
	}
	for _, and := range f.or {
		ok := true
		for _, c := range and {
			if !c.eval(doc) {
				ok = false
				break
			}
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func (c comparison) eval(doc any) bool {
	v := doc
	for _, part := range c.selector {
		m, ok := v.(map[string]any)
		if !ok {
			v = nil
			break
		}
		v = m[part]
	}
	switch c.op {
	case "is empty":
		return isEmpty(v)
	case "is not empty":
		return !isEmpty(v)
	case "==":
		return scalar(v) == c.value
	case "!=":
		return scalar(v) != c.value
	case "contains":
		return contains(v, c.value)
	case "not contains":
		return !contains(v, c.value)
	}
	return false
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

func scalar(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		return strconv.FormatBool(t)
	case json.Number:
		return t.String()
	}
	return fmt.Sprint(v)
}

func contains(v any, want string) bool {
	switch t := v.(type) {
	case string:
		return strings.Contains(t, want)
	case []any:
		for _, e := range t {
			if scalar(e) == want {
				return true
			}
		}
	case map[string]any:
		_, ok := t[want]
		return ok
	}
	return false
}

// filterAndPage applies the filter and pagination parameters to a list
// sorted by the token key; the token of the next page is the key of its
// first item.
func filterAndPage[T any](q *structs.QueryOptions, items []T, key func(T) string, m *structs.QueryMeta) ([]T, error) {
	if q.Filter != "" {
		f, err := parseFilter(q.Filter)
		if err != nil {
			return nil, codedErr(http.StatusBadRequest, "Invalid filter expression: %v", err)
		}
		kept := items[:0:0]
		for _, it := range items {
			ok, err := f.match(it)
			if err != nil {
				return nil, err
			}
			if ok {
				kept = append(kept, it)
			}
		}
		items = kept
	}
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
	return items, nil
}
