package state

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"github.com/hashicorp/go-msgpack/v2/codec"

	"github.com/nomadq/nomadq/structs"
)

// StateSnapshot is a consistent, read-only view of the store at one point
// in time. It has the read methods of StateStore; watch sets filled from a
// snapshot fire when the live store changes what was read.
type StateSnapshot struct {
	reader
	// nodeSets is the store's cache of node lists (see NodeSet).
	nodeSets *nodeSetCache
}

// Snapshot returns a consistent read-only view of the store. It is cheap:
// the view shares the store's immutable trees.
func (s *StateStore) Snapshot() (*StateSnapshot, error) {
	return &StateSnapshot{reader: reader{db: s.db.Snapshot()}, nodeSets: &s.nodeSets}, nil
}

// snapshotFormat is the version of the stream WriteTo produces.
const snapshotFormat uint8 = 1

// recordType tags each record of a snapshot stream with the table it
// belongs to.
type recordType uint8

const (
	endRecord recordType = iota
	indexRecord
	jobRecord
	jobVersionRecord
	jobSummaryRecord
	evalRecord
	allocRecord
	nodeRecord
	schedulerConfigRecord

	// allocJobRecord carries a job that allocs refer to by number, so that
	// the job of thousands of allocs is written once and shared again
	// after a restore.
	allocJobRecord

	// rootKeyRecord carries a root key with its material: a restored
	// server signs and verifies with the keys of the snapshot.
	rootKeyRecord
	// namespaceRecord and nodePoolRecord carry the namespaces and node
	// pools; the built-in ones are written too, and replace the store's
	// own on restore.
	namespaceRecord
	nodePoolRecord
)

// jobRowRecord and jobVersionRowRecord put a job defined by an
// allocJobRecord into the jobs or the job version table. A job is written
// once however many rows hold it: the live store shares one Job between a
// job's row, its version row and its allocs, and so does a restore.
const (
	jobRowRecord        recordType = 80
	jobVersionRowRecord recordType = 81
)

// jobRowRecords maps the tables whose rows are written by reference to
// their record types.
var jobRowRecords = map[string]recordType{TableJobs: jobRowRecord, TableJobVersion: jobVersionRowRecord}

// The ACL system's records: policies, tokens, roles and one-time tokens
// (the bootstrap index travels in the index table). Fixed numbers, like
// periodicLaunchRecord, so that tables added later elsewhere cannot
// shift them.
const (
	aclPolicyRecord    recordType = 70
	aclTokenRecord     recordType = 71
	aclRoleRecord      recordType = 72
	oneTimeTokenRecord recordType = 73
)

// allocRow is an alloc record: the alloc without its Job, and the number
// of the allocJobRecord that holds the Job (0: none).
type allocRow struct {
	JobRef uint64
	Alloc  *structs.Allocation
}

// allocJobRow is an allocJobRecord: a Job defined once for every row that
// holds it (allocs, and the job and job version tables).
type allocJobRow struct {
	Ref uint64
	Job *structs.Job
}

// snapshotTables lists, in stream order, each table with its record type
// and a constructor of an empty row for decoding. Allocs are the exception:
// they are written as allocRow, with their jobs in allocJobRecords.
var snapshotTables = []struct {
	table  string
	record recordType
	newRow func() any
}{
	{TableIndex, indexRecord, func() any { return new(IndexEntry) }},
	{TableJobs, jobRecord, func() any { return new(structs.Job) }},
	{TableJobVersion, jobVersionRecord, func() any { return new(structs.Job) }},
	{TableJobSummary, jobSummaryRecord, func() any { return new(structs.JobSummary) }},
	{TableEvals, evalRecord, func() any { return new(structs.Evaluation) }},
	{TableAllocs, allocRecord, func() any { return new(structs.Allocation) }},
	{TableNodes, nodeRecord, func() any { return new(structs.Node) }},
	{TableSchedulerConfig, schedulerConfigRecord, func() any { return new(structs.SchedulerConfiguration) }},
	{TablePeriodicLaunch, periodicLaunchRecord, func() any { return new(structs.PeriodicLaunch) }},
	{TableRootKeys, rootKeyRecord, func() any { return new(structs.RootKey) }},
	{TableNamespaces, namespaceRecord, func() any { return new(structs.Namespace) }},
	{TableNodePools, nodePoolRecord, func() any { return new(structs.NodePool) }},
	{TableACLPolicies, aclPolicyRecord, func() any { return new(structs.ACLPolicy) }},
	{TableACLTokens, aclTokenRecord, func() any { return new(structs.ACLToken) }},
	{TableACLRoles, aclRoleRecord, func() any { return new(structs.ACLRole) }},
	{TableOneTimeTokens, oneTimeTokenRecord, func() any { return new(structs.OneTimeToken) }},
}

// snapshotHandle is the msgpack configuration of snapshot streams: the
// project's codec, so that a snapshot decodes like the Raft log entries the
// FSM applies (schema-less integers in Task.Config come back as int64).
var snapshotHandle = structs.MsgpackHandle

// WriteTo streams every row of every table to w: a format byte, then per
// row a record-type byte followed by the msgpack-encoded row, then an end
// record. An alloc's Job is written once per distinct job and referred to
// by number, which keeps snapshots of large clusters small and lets a
// restore share one Job between the allocs of a job version, as the live
// store does. It implements io.WriterTo.
func (s *StateSnapshot) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	enc := codec.NewEncoder(bw, snapshotHandle)
	if err := enc.Encode(snapshotFormat); err != nil {
		return cw.n, fmt.Errorf("write snapshot header: %w", err)
	}
	txn := s.db.Txn(false)
	jobRefs := make(map[*structs.Job]uint64)
	write := func(rec recordType, row any) error {
		if err := enc.Encode(uint8(rec)); err != nil {
			return err
		}
		return enc.Encode(row)
	}
	for _, t := range snapshotTables {
		iter, err := txn.Get(t.table, "id")
		if err != nil {
			return cw.n, fmt.Errorf("write snapshot of %s: %w", t.table, err)
		}
		refRecord, byRef := jobRowRecords[t.table]
		for raw := iter.Next(); raw != nil; raw = iter.Next() {
			switch {
			case t.record == allocRecord:
				err = writeAlloc(write, raw.(*structs.Allocation), jobRefs)
			case byRef:
				err = writeJobRow(write, refRecord, raw.(*structs.Job), jobRefs)
			default:
				err = write(t.record, raw)
			}
			if err != nil {
				return cw.n, fmt.Errorf("write snapshot of %s: %w", t.table, err)
			}
		}
	}
	if err := enc.Encode(uint8(endRecord)); err != nil {
		return cw.n, fmt.Errorf("write snapshot end: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("write snapshot: %w", err)
	}
	return cw.n, nil
}

// jobRef returns the number of job's allocJobRecord, writing the record
// the first time the job is seen.
func jobRef(write func(recordType, any) error, job *structs.Job, jobRefs map[*structs.Job]uint64) (uint64, error) {
	if ref, seen := jobRefs[job]; seen {
		return ref, nil
	}
	ref := uint64(len(jobRefs) + 1)
	jobRefs[job] = ref
	return ref, write(allocJobRecord, &allocJobRow{Ref: ref, Job: job})
}

// writeJobRow writes a row of the jobs or job version table as a reference
// to its job's allocJobRecord.
func writeJobRow(write func(recordType, any) error, rec recordType, job *structs.Job, jobRefs map[*structs.Job]uint64) error {
	ref, err := jobRef(write, job, jobRefs)
	if err != nil {
		return err
	}
	return write(rec, ref)
}

// writeAlloc writes an alloc record, preceded by its job's record the first
// time the job is seen.
func writeAlloc(write func(recordType, any) error, a *structs.Allocation, jobRefs map[*structs.Job]uint64) error {
	var ref uint64
	if a.Job != nil {
		var err error
		if ref, err = jobRef(write, a.Job, jobRefs); err != nil {
			return err
		}
	}
	c := *a
	c.Job = nil
	return write(allocRecord, &allocRow{JobRef: ref, Alloc: &c})
}

// RestoreFrom builds a new store from a stream written by WriteTo. A
// stream that is truncated, of another format or holds an unknown record
// is an error. The caller swaps the new store in and abandons the old one.
//
// Decoding and inserting each take about half of a restore, so a goroutine
// decodes while the caller inserts the rows, in stream order, into one
// write transaction.
func RestoreFrom(r io.Reader) (*StateStore, error) {
	store, err := NewStateStore()
	if err != nil {
		return nil, err
	}
	dec := codec.NewDecoder(bufio.NewReaderSize(r, 64<<10), snapshotHandle)
	var format uint8
	if err := dec.Decode(&format); err != nil {
		return nil, fmt.Errorf("restore snapshot header: %w", err)
	}
	if format != snapshotFormat {
		return nil, fmt.Errorf("restore snapshot: format %d is not supported (want %d)", format, snapshotFormat)
	}

	batches := make(chan []restoreRow, 4)
	stop := make(chan struct{})
	decodeErr := make(chan error, 1)
	go func() {
		defer close(batches)
		decodeErr <- decodeRows(dec, batches, stop)
	}()
	// Whatever ends the restore, the decoder stops and is waited for, so
	// that it never reads from r after RestoreFrom returns.
	defer func() {
		close(stop)
		for range batches {
		}
	}()

	txn := store.db.Txn(true)
	defer txn.Abort()
	for batch := range batches {
		for _, row := range batch {
			if err := txn.Insert(row.table, row.obj); err != nil {
				return nil, fmt.Errorf("restore snapshot record %d (%s): %w", row.n, row.table, err)
			}
		}
	}
	if err := <-decodeErr; err != nil {
		return nil, err
	}
	txn.Commit()
	// Node alloc changes before the snapshot count as made at its index.
	latest, err := store.LatestIndex()
	if err != nil {
		return nil, err
	}
	store.nodeAllocs.floor = latest
	return store, nil
}

// restoreRow is a decoded row of a snapshot stream, to insert into table.
type restoreRow struct {
	n     int // the record's number in the stream, for errors
	table string
	obj   any
}

// restoreBatch is how many rows the decoder hands over at a time.
const restoreBatch = 256

// decodeRows decodes the records of a snapshot stream after its header and
// sends the rows to insert, in order, in batches. It returns nil at the end
// record, and an error for a stream that is truncated or bad; it stops
// early, returning nil, once stop is closed.
func decodeRows(dec *codec.Decoder, out chan<- []restoreRow, stop <-chan struct{}) error {
	tables := make(map[recordType]int, len(snapshotTables))
	for i, t := range snapshotTables {
		tables[t.record] = i
	}
	allocJobs := make(map[uint64]*structs.Job)
	share := newRestoreSharer()
	// scratch is what the next alloc's AllocatedResources decode into.
	// Most allocs' resources equal one kept for their job version (see
	// restoreSharer.alloc) and are dropped; decoding those into one value
	// reused from row to row spares a restore that garbage, a fifth of all
	// it makes, and with it the free slots it leaves in the heap.
	var scratch *structs.AllocatedResources
	batch := make([]restoreRow, 0, restoreBatch)
	send := func() bool {
		if len(batch) == 0 {
			return true
		}
		select {
		case out <- batch:
			batch = make([]restoreRow, 0, restoreBatch)
			return true
		case <-stop:
			return false
		}
	}
	// The rows decoded before a bad record are inserted first, so that a
	// bad row among them is the error reported, as it comes first.
	defer send()
	for n := 0; ; n++ {
		if len(batch) == restoreBatch && !send() {
			return nil
		}
		var rec uint8
		if err := dec.Decode(&rec); err != nil {
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("restore snapshot: stream ends after %d records without an end record", n)
			}
			return fmt.Errorf("restore snapshot record %d: %w", n, err)
		}
		switch recordType(rec) {
		case endRecord:
			return nil
		case allocJobRecord:
			var row allocJobRow
			if err := dec.Decode(&row); err != nil {
				return fmt.Errorf("restore snapshot record %d (job of allocs): %w", n, err)
			}
			allocJobs[row.Ref] = row.Job
			continue
		case jobRowRecord, jobVersionRowRecord:
			table := TableJobs
			if recordType(rec) == jobVersionRowRecord {
				table = TableJobVersion
			}
			var ref uint64
			if err := dec.Decode(&ref); err != nil {
				return fmt.Errorf("restore snapshot record %d (%s): %w", n, table, err)
			}
			job, ok := allocJobs[ref]
			if !ok {
				return fmt.Errorf("restore snapshot record %d (%s): refers to unknown job record %d", n, table, ref)
			}
			if table == TableJobs {
				share.jobRow(job)
			} else {
				share.jobVersion(job)
			}
			batch = append(batch, restoreRow{n: n, table: table, obj: job})
			continue
		case allocRecord:
			if scratch == nil {
				scratch = &structs.AllocatedResources{Tasks: make(map[string]*structs.AllocatedTaskResources, 1)}
			}
			row := allocRow{Alloc: &structs.Allocation{AllocatedResources: scratch}}
			if err := dec.Decode(&row); err != nil {
				return fmt.Errorf("restore snapshot record %d (%s): %w", n, TableAllocs, err)
			}
			if row.Alloc == nil {
				return fmt.Errorf("restore snapshot record %d (%s): empty alloc record", n, TableAllocs)
			}
			if row.JobRef != 0 {
				job, ok := allocJobs[row.JobRef]
				if !ok {
					return fmt.Errorf("restore snapshot record %d (%s): alloc %q refers to unknown job record %d", n, TableAllocs, row.Alloc.ID, row.JobRef)
				}
				row.Alloc.Job = job
			}
			share.alloc(row.Alloc, row.JobRef)
			if row.Alloc.AllocatedResources == scratch {
				scratch = nil // the row keeps it
			} else {
				tasks := scratch.Tasks
				clear(tasks)
				*scratch = structs.AllocatedResources{Tasks: tasks}
			}
			batch = append(batch, restoreRow{n: n, table: TableAllocs, obj: row.Alloc})
			continue
		}
		i, ok := tables[recordType(rec)]
		if !ok {
			return fmt.Errorf("restore snapshot record %d: unknown record type %d", n, rec)
		}
		t := snapshotTables[i]
		row := t.newRow()
		if err := dec.Decode(row); err != nil {
			return fmt.Errorf("restore snapshot record %d (%s): %w", n, t.table, err)
		}
		switch t.record {
		case evalRecord:
			share.eval(row.(*structs.Evaluation))
		case jobRecord:
			share.jobRow(row.(*structs.Job))
		case jobVersionRecord:
			share.jobVersion(row.(*structs.Job))
		}
		batch = append(batch, restoreRow{n: n, table: t.table, obj: row})
	}
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Ensure the snapshot can be handed to anything that takes an io.WriterTo.
var _ io.WriterTo = (*StateSnapshot)(nil)
