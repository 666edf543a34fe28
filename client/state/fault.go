package state

// writeFault is a test's hook into the DB's alloc writes.
type writeFault struct{ fn func() error }

// SetAllocWriteFault makes every later PutAllocs call fn first and fail
// with its error when it returns one, without writing; nil removes the
// hook. It exists for fault tests: a disk that is full or gone looks
// the same to the client as an error from here.
func (d *DB) SetAllocWriteFault(fn func() error) {
	if fn == nil {
		d.fault.Store(nil)
		return
	}
	d.fault.Store(&writeFault{fn: fn})
}

// injectedFault is the error a test's hook asks this write to fail with.
func (d *DB) injectedFault() error {
	if f := d.fault.Load(); f != nil {
		return f.fn()
	}
	return nil
}
