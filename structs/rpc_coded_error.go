package structs

import (
	"fmt"
	"strconv"
	"strings"
)

// rpcCodedPrefix starts the text of an error that carries an HTTP status
// across RPC, where errors travel as strings; Nomad uses the same form.
const rpcCodedPrefix = "RPC Error:: "

// NewErrRPCCoded returns an error the HTTP API answers with status code
// and msg, also after it crossed an RPC hop as text.
func NewErrRPCCoded(code int, msg string) error {
	return fmt.Errorf("%s%d,%s", rpcCodedPrefix, code, msg)
}

// NewErrRPCCodedf is NewErrRPCCoded with a format.
func NewErrRPCCodedf(code int, format string, args ...any) error {
	return NewErrRPCCoded(code, fmt.Sprintf(format, args...))
}

// NewBadRequestf is a coded 400: the request itself is wrong (a missing
// or invalid value, a write the object's state refuses).
func NewBadRequestf(format string, args ...any) error {
	return NewErrRPCCodedf(400, format, args...)
}

// NewErrNotFoundf is a coded 404: the request names an object that does
// not exist.
func NewErrNotFoundf(format string, args ...any) error {
	return NewErrRPCCodedf(404, format, args...)
}

// CodeFromRPCCodedErr returns the status and message of an error made by
// NewErrRPCCoded; ok is false for any other error.
func CodeFromRPCCodedErr(err error) (code int, msg string, ok bool) {
	if err == nil {
		return 0, "", false
	}
	rest, found := strings.CutPrefix(err.Error(), rpcCodedPrefix)
	if !found {
		return 0, "", false
	}
	num, msg, found := strings.Cut(rest, ",")
	if !found {
		return 0, "", false
	}
	code, convErr := strconv.Atoi(num)
	if convErr != nil {
		return 0, "", false
	}
	return code, msg, true
}

// WrapRPCCodedf is fmt.Errorf(format+": %w", args..., err) that keeps
// err's code: CodeFromRPCCodedErr reads a code at the start of the text
// only (the text is all that crosses RPC), so the context goes after it.
// An err without a code is wrapped as fmt.Errorf would. errors.Is and
// errors.As see err through the result either way.
func WrapRPCCodedf(err error, format string, args ...any) error {
	context := fmt.Sprintf(format, args...)
	code, msg, ok := CodeFromRPCCodedErr(err)
	if !ok {
		return fmt.Errorf("%s: %w", context, err)
	}
	return &wrappedCodedError{text: NewErrRPCCoded(code, context+": "+msg).Error(), err: err}
}

// wrappedCodedError is a coded error with context, over the error it
// wraps.
type wrappedCodedError struct {
	text string
	err  error
}

func (e *wrappedCodedError) Error() string { return e.text }
func (e *wrappedCodedError) Unwrap() error { return e.err }
