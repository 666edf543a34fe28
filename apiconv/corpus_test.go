package apiconv

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/shoenig/test/must"

	"github.com/nomadq/nomadq/jobspec"
)

// corpusDirs hold the job files of the parse round trip
// (command.TestJobParse_RoundTrip).
var corpusDirs = []string{
	"../examples",
	"../jobspec/testdata/good",
	"../command/testdata",
	"../command/testdata/nomad_accepts",
	"../command/testdata/roundtrip",
}

// apiOnly are the fields nomadq honours that no job file can set: the
// job language has no attribute for them.
var apiOnly = map[string]bool{
	"Job.Stop":                     true,
	"Job.ParentID":                 true,
	"Job.Dispatched":               true,
	"Job.DispatchIdempotencyToken": true,
	"Job.Payload":                  true,
}

// TestCorpus_CoversEveryHonouredField keeps the round trip's corpus
// covering every block nomadq supports: each field the table maps, warns
// about or fixes is set by at least one job file that Check accepts. A
// field flipped to mapped needs a file that sets it.
func TestCorpus_CoversEveryHonouredField(t *testing.T) {
	seen := map[string]bool{}
	accepted := 0
	for _, dir := range corpusDirs {
		entries, err := os.ReadDir(dir)
		must.NoError(t, err)
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !(strings.HasSuffix(name, ".nomad.hcl") || strings.HasSuffix(name, ".nomad.json")) {
				continue
			}
			job, err := jobspec.ParseWithConfig(&jobspec.ParseConfig{
				Path: filepath.Join(dir, name), AllowFS: true,
				// Only variables_validation.nomad.hcl needs one.
				ArgVars: []string{"env=prod"},
			})
			if err != nil {
				continue
			}
			if _, err := Check(job); err != nil {
				continue
			}
			accepted++
			markAPISet(reflect.ValueOf(job), seen)
		}
	}
	must.GreaterEq(t, 50, accepted)
	var missing []string
	for key, r := range fields {
		if r.kind == kindRefused || r.kind == kindIgnored || apiOnly[key] || seen[key] {
			continue
		}
		missing = append(missing, key)
	}
	sort.Strings(missing)
	must.SliceEmpty(t, missing, must.Sprintf("fields nomadq honours that no accepted job file of the round trip sets (add a file under command/testdata/roundtrip): %v", missing))
}

// markAPISet records "Type.Field" for every non-zero field of the api
// structs in v.
func markAPISet(v reflect.Value, seen map[string]bool) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			markAPISet(v.Elem(), seen)
		}
	case reflect.Slice:
		for i := range v.Len() {
			markAPISet(v.Index(i), seen)
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			markAPISet(it.Value(), seen)
		}
	case reflect.Struct:
		ty := v.Type()
		if ty.PkgPath() != apiPkg {
			return
		}
		for i := range ty.NumField() {
			if !v.Field(i).IsZero() {
				seen[ty.Name()+"."+ty.Field(i).Name] = true
			}
			markAPISet(v.Field(i), seen)
		}
	}
}
