package jobspec

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxNesting is how deep blocks, objects, lists, parentheses, template
// interpolations and unary operators may nest in a job file. HCL's parser
// and decoder recurse once per level and the decoding of nested objects
// grows with the square of the depth (5,000 levels took seconds, 20,000
// over half a minute), so a file nested deeper is refused before it is
// parsed. Real jobs stay well under it, HCL-JSON's extra level per block
// included.
const MaxNesting = 100

// checkNesting refuses a source nested deeper than MaxNesting, naming
// where it goes too deep. It reads HCL with HCL's own lexer, so braces in
// strings, comments and heredocs do not count, and JSON by its brackets
// outside strings.
func checkNesting(filename string, src []byte, json bool) hcl.Diagnostics {
	if json {
		return checkJSONNesting(filename, src)
	}
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	depth, unary := 0, 0
	for _, tok := range tokens {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl, hclsyntax.TokenOHeredoc:
			depth++
		case hclsyntax.TokenCBrace, hclsyntax.TokenCBrack, hclsyntax.TokenCParen,
			hclsyntax.TokenTemplateSeqEnd, hclsyntax.TokenCHeredoc:
			depth--
		}
		// A run of ! or - nests one unary operation in the next.
		if tok.Type == hclsyntax.TokenBang || tok.Type == hclsyntax.TokenMinus {
			unary++
		} else {
			unary = 0
		}
		if depth+unary > MaxNesting {
			return tooDeep(tok.Range)
		}
	}
	return nil
}

func checkJSONNesting(filename string, src []byte) hcl.Diagnostics {
	depth := 0
	inString, escaped := false, false
	pos := hcl.InitialPos
	for i, c := range src {
		switch {
		case inString && escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case inString && c == '"':
			inString = false
		case inString:
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > MaxNesting {
				at := hcl.Pos{Line: pos.Line, Column: pos.Column, Byte: i}
				end := hcl.Pos{Line: at.Line, Column: at.Column + 1, Byte: i + 1}
				return tooDeep(hcl.Range{Filename: filename, Start: at, End: end})
			}
		case c == '}' || c == ']':
			depth--
		}
		if c == '\n' {
			pos.Line++
			pos.Column = 1
		} else if c&0xC0 != 0x80 {
			// Columns count characters, not the bytes inside one.
			pos.Column++
		}
	}
	return nil
}

func tooDeep(at hcl.Range) hcl.Diagnostics {
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Nesting too deep",
		Detail:   fmt.Sprintf("Blocks, objects, lists, parentheses and expressions may nest at most %d levels; this file goes deeper here.", MaxNesting),
		Subject:  at.Ptr(),
	}}
}
