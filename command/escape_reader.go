package command

import "io"

// escapeReader passes a terminal session's input through, except for an
// escape sequence: the escape character at the start of a line followed
// by a command character that onEscape handles (it returns true: it ended
// the session) is acted on, as ssh's "~." is, and the input ends there.
// The escape character twice sends it once; followed by anything else
// both go through.
type escapeReader struct {
	r        io.Reader
	esc      byte
	onEscape func(c byte) bool

	lineStart bool // the next byte starts a line
	pending   bool // an escape character at a line start waits for the next byte
	buf, out  []byte
	err       error
}

func newEscapeReader(r io.Reader, esc byte, onEscape func(c byte) bool) *escapeReader {
	return &escapeReader{r: r, esc: esc, onEscape: onEscape, lineStart: true, buf: make([]byte, 4096)}
}

func (e *escapeReader) Read(p []byte) (int, error) {
	for len(e.out) == 0 {
		if e.err != nil {
			if e.pending {
				// Input ended after a lone escape character: it was
				// meant as input.
				e.pending = false
				e.out = append(e.out, e.esc)
				continue
			}
			return 0, e.err
		}
		n, err := e.r.Read(e.buf)
		e.err = err
		for _, c := range e.buf[:n] {
			if e.feed(c) {
				e.err, e.pending = io.EOF, false
				break
			}
		}
	}
	n := copy(p, e.out)
	e.out = e.out[n:]
	return n, nil
}

// feed takes one input byte; true when it completed a handled escape.
func (e *escapeReader) feed(c byte) bool {
	newline := c == '\n' || c == '\r'
	switch {
	case e.pending:
		e.pending = false
		switch {
		case c == e.esc:
			e.out = append(e.out, c)
			e.lineStart = false
		case e.onEscape(c):
			return true
		default:
			e.out = append(e.out, e.esc, c)
			e.lineStart = newline
		}
	case e.lineStart && c == e.esc:
		e.pending = true
	default:
		e.out = append(e.out, c)
		e.lineStart = newline
	}
	return false
}
