package jobspec

import (
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/ext/typeexpr"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	hcljson "github.com/hashicorp/hcl/v2/json"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/convert"
	"github.com/zclconf/go-cty/cty/function"
)

// envVarPrefix marks environment variables that give variable values.
const envVarPrefix = "NOMAD_VAR_"

// variable is one declared input variable and the value it ends up with.
type variable struct {
	name        string
	typ         cty.Type
	defaults    *typeexpr.Defaults
	declRange   hcl.Range
	validations []validation

	// value is the winning value so far (cty.NilVal when none) and
	// valueRange where it came from.
	value      cty.Value
	valueRange hcl.Range
}

// validation is one validation block of a variable.
type validation struct {
	condition hcl.Expression
	message   string
}

var variableSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "description"},
		{Name: "default"},
		{Name: "type"},
	},
	Blocks: []hcl.BlockHeaderSchema{{Type: "validation"}},
}

var validationSchema = &hcl.BodySchema{
	Attributes: []hcl.AttributeSchema{
		{Name: "condition", Required: true},
		{Name: "error_message", Required: true},
	},
}

// declareVariables reads variable and variables blocks, with their defaults.
func (p *parser) declareVariables(varBlocks, varsBlocks []*hcl.Block, funcs map[string]function.Function) ([]*variable, hcl.Diagnostics) {
	var (
		vars  []*variable
		diags hcl.Diagnostics
		seen  = map[string]*variable{}
	)
	// Defaults may call functions but not refer to other variables.
	defCtx := &hcl.EvalContext{Functions: funcs}

	add := func(v *variable) {
		if prev := seen[v.name]; prev != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate variable",
				Detail:   fmt.Sprintf("variable %q was already declared at %s", v.name, prev.declRange),
				Subject:  v.declRange.Ptr(),
			})
			return
		}
		if !hclsyntax.ValidIdentifier(v.name) {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid variable name",
				Detail:   fmt.Sprintf("%q is not a valid identifier", v.name),
				Subject:  v.declRange.Ptr(),
			})
			return
		}
		seen[v.name] = v
		vars = append(vars, v)
	}

	for _, b := range varBlocks {
		v := &variable{name: b.Labels[0], typ: cty.DynamicPseudoType, declRange: b.DefRange}
		content, ds := b.Body.Content(variableSchema)
		diags = append(diags, ds...)
		if content == nil {
			continue
		}
		if a := content.Attributes["type"]; a != nil {
			ty, defaults, ds := typeexpr.TypeConstraintWithDefaults(a.Expr)
			diags = append(diags, ds...)
			v.typ, v.defaults = ty, defaults
		}
		if a := content.Attributes["description"]; a != nil {
			_, ds := a.Expr.Value(defCtx)
			diags = append(diags, ds...)
		}
		if a := content.Attributes["default"]; a != nil {
			val, ds := a.Expr.Value(defCtx)
			diags = append(diags, ds...)
			if !ds.HasErrors() && !val.IsNull() {
				v.value, v.valueRange = val, a.Expr.Range()
			}
		}
		for _, vb := range content.Blocks {
			vc, ds := vb.Body.Content(validationSchema)
			diags = append(diags, ds...)
			if ds.HasErrors() {
				continue
			}
			msg, ds := vc.Attributes["error_message"].Expr.Value(defCtx)
			diags = append(diags, ds...)
			if ds.HasErrors() {
				continue
			}
			if msg.Type() != cty.String || msg.IsNull() {
				diags = append(diags, valueDiag("error_message", vc.Attributes["error_message"].Expr, fmt.Errorf("a string is required")))
				continue
			}
			v.validations = append(v.validations, validation{
				condition: vc.Attributes["condition"].Expr,
				message:   msg.AsString(),
			})
		}
		add(v)
	}

	for _, b := range varsBlocks {
		attrs, ds := b.Body.JustAttributes()
		diags = append(diags, ds...)
		for _, a := range sortedAttrs(attrs) {
			v := &variable{name: a.Name, typ: cty.DynamicPseudoType, declRange: a.NameRange}
			val, ds := a.Expr.Value(defCtx)
			diags = append(diags, ds...)
			if !ds.HasErrors() && !val.IsNull() {
				v.value, v.valueRange = val, a.Expr.Range()
			}
			add(v)
		}
	}
	return vars, sortDiags(diags)
}

// resolveVariables applies the value sources in order (default,
// NOMAD_VAR_ environment, -var-file files, -var arguments), converts each
// value to its type, runs validations and returns the `var` object.
func (p *parser) resolveVariables(vars []*variable, funcs map[string]function.Function) (cty.Value, hcl.Diagnostics) {
	byName := make(map[string]*variable, len(vars))
	for _, v := range vars {
		byName[v.name] = v
	}
	var diags hcl.Diagnostics

	for _, kv := range p.cfg.Envs {
		k, raw, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, envVarPrefix) {
			continue
		}
		v := byName[strings.TrimPrefix(k, envVarPrefix)]
		if v == nil {
			continue // the environment may hold values for other jobs
		}
		rng := hcl.Range{Filename: k, Start: hcl.InitialPos, End: endPos(raw)}
		val, ds := rawValue(raw, v.typ, rng)
		diags = append(diags, ds...)
		v.value, v.valueRange = val, rng
	}

	for _, path := range p.cfg.VarFiles {
		diags = append(diags, p.loadVarFile(path, byName)...)
	}

	for _, arg := range p.cfg.ArgVars {
		rng := hcl.Range{Filename: "-var", Start: hcl.InitialPos, End: endPos(arg)}
		name, raw, ok := strings.Cut(arg, "=")
		if !ok || name == "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid -var option",
				Detail:   fmt.Sprintf("%q must be a variable name and a value separated by an equals sign, like -var \"key=value\"", arg),
				Subject:  rng.Ptr(),
			})
			continue
		}
		v := byName[name]
		if v == nil {
			if p.cfg.Strict {
				diags = append(diags, undeclaredDiag(name, "-var", rng))
			}
			continue
		}
		val, ds := rawValue(raw, v.typ, rng)
		diags = append(diags, ds...)
		v.value, v.valueRange = val, rng
	}
	if diags.HasErrors() {
		return cty.NilVal, diags
	}

	values := make(map[string]cty.Value, len(vars))
	for _, v := range vars {
		if v.value == cty.NilVal {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Unset variable %q", v.name),
				Detail:   fmt.Sprintf("variable %q has no default; give it a value with -var, -var-file or %s%s", v.name, envVarPrefix, v.name),
				Subject:  v.declRange.Ptr(),
			})
			continue
		}
		val := v.value
		if v.defaults != nil {
			val = v.defaults.Apply(val)
		}
		conv, err := convert.Convert(val, v.typ)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid value for variable",
				Detail:   fmt.Sprintf("variable %q: %s", v.name, err),
				Subject:  v.valueRange.Ptr(),
			})
			continue
		}
		values[v.name] = conv
	}
	if diags.HasErrors() {
		return cty.NilVal, diags
	}

	varVal := cty.ObjectVal(values)
	ctx := &hcl.EvalContext{
		Variables: map[string]cty.Value{"var": varVal},
		Functions: funcs,
	}
	for _, v := range vars {
		for _, rule := range v.validations {
			diags = append(diags, checkValidation(v, rule, ctx)...)
		}
	}
	return varVal, diags
}

// checkValidation evaluates one validation rule of v.
func checkValidation(v *variable, rule validation, ctx *hcl.EvalContext) hcl.Diagnostics {
	ok, diags := rule.condition.Value(ctx)
	if diags.HasErrors() {
		return diags
	}
	ok, err := convert.Convert(ok, cty.Bool)
	if err != nil || ok.IsNull() || !ok.IsKnown() {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid validation condition",
			Detail:   fmt.Sprintf("variable %q: the condition must be true or false", v.name),
			Subject:  rule.condition.Range().Ptr(),
		})
	}
	if ok.False() {
		return append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid value for variable",
			Detail:   fmt.Sprintf("variable %q: %s", v.name, rule.message),
			Subject:  rule.condition.Range().Ptr(),
		})
	}
	return diags
}

// loadVarFile reads one -var-file, HCL or JSON.
func (p *parser) loadVarFile(path string, byName map[string]*variable) hcl.Diagnostics {
	src, err := os.ReadFile(path)
	if err != nil {
		return hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  "Failed to read variable file",
			Detail:   err.Error(),
			Subject:  &hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos},
		}}
	}
	var (
		file  *hcl.File
		diags hcl.Diagnostics
	)
	json := strings.HasSuffix(path, ".json") || isJSON(src)
	if diags := checkNesting(path, src, json); diags.HasErrors() {
		return diags
	}
	if json {
		file, diags = hcljson.Parse(src, path)
	} else {
		file, diags = hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	}
	if diags.HasErrors() {
		return diags
	}
	attrs, diags := file.Body.JustAttributes()
	for _, a := range sortedAttrs(attrs) {
		v := byName[a.Name]
		if v == nil {
			if p.cfg.Strict {
				diags = append(diags, undeclaredDiag(a.Name, "a variable file", a.NameRange))
			}
			continue
		}
		val, ds := a.Expr.Value(nil)
		diags = append(diags, ds...)
		if !ds.HasErrors() {
			v.value, v.valueRange = val, a.Expr.Range()
		}
	}
	return diags
}

func undeclaredDiag(name, source string, rng hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Undeclared variable",
		Detail:   fmt.Sprintf("a value for %q was given with %s, but the job declares no variable %q", name, source, name),
		Subject:  rng.Ptr(),
	}
}

// rawValue turns a string from the command line or environment into a
// value: primitive types take it verbatim, collections parse it as an HCL
// expression (-var 'ports=[80, 443]').
func rawValue(raw string, ty cty.Type, rng hcl.Range) (cty.Value, hcl.Diagnostics) {
	if ty == cty.DynamicPseudoType || ty.IsPrimitiveType() {
		return cty.StringVal(raw), nil
	}
	if diags := checkNesting(rng.Filename, []byte(raw), false); diags.HasErrors() {
		return cty.NilVal, diags
	}
	expr, diags := hclsyntax.ParseExpression([]byte(raw), rng.Filename, rng.Start)
	if diags.HasErrors() {
		return cty.NilVal, diags
	}
	return expr.Value(nil)
}

func endPos(s string) hcl.Pos {
	return hcl.Pos{Line: 1, Column: len(s) + 1, Byte: len(s)}
}
