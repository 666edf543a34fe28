package structs

import (
	"errors"
	"strconv"
	"strings"
)

// MultiError collects several validation errors and prints them as a
// numbered list, the way Nomad users see validation failures.
type MultiError struct {
	Errors []error
}

// Add appends err, flattening nested MultiErrors; a nil err is ignored.
func (m *MultiError) Add(err error) {
	if err == nil {
		return
	}
	var inner *MultiError
	if errors.As(err, &inner) {
		m.Errors = append(m.Errors, inner.Errors...)
		return
	}
	m.Errors = append(m.Errors, err)
}

// ErrorOrNil returns m when it holds errors, and nil otherwise.
func (m *MultiError) ErrorOrNil() error {
	if m == nil || len(m.Errors) == 0 {
		return nil
	}
	return m
}

// Error renders one error as itself and several as a bulleted list.
func (m *MultiError) Error() string {
	if len(m.Errors) == 1 {
		return m.Errors[0].Error()
	}
	var b strings.Builder
	b.WriteString(strconv.Itoa(len(m.Errors)))
	b.WriteString(" errors occurred:")
	for _, e := range m.Errors {
		b.WriteString("\n\t* ")
		b.WriteString(strings.ReplaceAll(e.Error(), "\n", "\n\t"))
	}
	return b.String()
}

// Unwrap exposes the collected errors to errors.Is and errors.As.
func (m *MultiError) Unwrap() []error { return m.Errors }
