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
