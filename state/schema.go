package state

import (
	"fmt"

	"github.com/hashicorp/go-memdb"

	"github.com/nomadq/nomadq/structs"
)

// Table names. They are also the keys of the index table.
const (
	TableIndex           = "index"
	TableJobs            = "jobs"
	TableJobVersion      = "job_version"
	TableJobSummary      = "job_summary"
	TableEvals           = "evals"
	TableAllocs          = "allocs"
	TableNodes           = "nodes"
	TableSchedulerConfig = "scheduler_config"
)

// IndexEntry is a row of the index table: the last Raft index that wrote
// to the table named Key.
type IndexEntry struct {
	Key   string
	Value uint64
}

// stateSchema returns the go-memdb schema of every table.
func stateSchema() *memdb.DBSchema {
	tables := []*memdb.TableSchema{
		indexTableSchema(),
		jobTableSchema(),
		jobVersionTableSchema(),
		jobSummaryTableSchema(),
		evalTableSchema(),
		allocTableSchema(),
		nodeTableSchema(),
		schedulerConfigTableSchema(),
		periodicLaunchTableSchema(),
		autopilotConfigTableSchema(),
		batchQueueTableSchema(),
		batchQueueControlsTableSchema(),
		batchQueueUsageResetsTableSchema(),
		batchQueueStatsTableSchema(),
		rootKeyTableSchema(),
		namespaceTableSchema(),
		nodePoolTableSchema(),
		jobSubmissionTableSchema(),
		scalingEventTableSchema(),
		variableTableSchema(),
		serviceRegistrationTableSchema(),
	}
	tables = append(tables, aclTableSchemas()...)
	tables = append(tables, aclAuthTableSchemas()...)
	db := &memdb.DBSchema{Tables: make(map[string]*memdb.TableSchema, len(tables))}
	for _, t := range tables {
		db.Tables[t.Name] = t
	}
	return db
}

func indexTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableIndex,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &stringsIndex{name: "index table id", n: 1, lower: true, fields: func(obj any) ([3]string, error) {
					e, ok := obj.(*IndexEntry)
					if !ok {
						return [3]string{}, fmt.Errorf("index table id: unexpected type %T", obj)
					}
					return [3]string{e.Key}, nil
				}},
			},
		},
	}
}

func jobTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobs,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &stringsIndex{name: "jobs id", n: 2, fields: func(obj any) ([3]string, error) {
					j, ok := obj.(*structs.Job)
					if !ok {
						return [3]string{}, fmt.Errorf("jobs id: unexpected type %T", obj)
					}
					return [3]string{j.Namespace, j.ID}, nil
				}},
			},
			// There is no type index (nothing looked jobs up by type),
			// and the periodic index holds only periodic jobs: every
			// index row is rewritten each time a job's status changes,
			// three times in a batch job's life.
			"periodic": {
				Name:         "periodic",
				AllowMissing: true,
				Indexer:      periodicIndex{},
			},
			// node_pool finds the jobs a pool's deletion must wait for,
			// and lists a pool's jobs. It holds only the jobs of pools
			// other than "default": that pool cannot be deleted, most
			// jobs are in it, and the row cost each of a job's writes
			// (three or more in a batch job's life) another index
			// update. JobsByNodePool reads the default pool's jobs from
			// the id index.
			"node_pool": {
				Name:         "node_pool",
				AllowMissing: true,
				Indexer:      jobPoolIndex{},
			},
		},
	}
}

func jobVersionTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobVersion,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &memdb.CompoundIndex{Indexes: []memdb.Indexer{
					&memdb.StringFieldIndex{Field: "Namespace"},
					&memdb.StringFieldIndex{Field: "ID"},
					uintIndexer("Version", func(obj any) (uint64, bool) { return obj.(*structs.Job).Version, true }),
				}},
			},
		},
	}
}

func jobSummaryTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableJobSummary,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:   "id",
				Unique: true,
				Indexer: &stringsIndex{name: "job summary id", n: 2, fields: func(obj any) ([3]string, error) {
					s, ok := obj.(*structs.JobSummary)
					if !ok {
						return [3]string{}, fmt.Errorf("job summary id: unexpected type %T", obj)
					}
					return [3]string{s.Namespace, s.JobID}, nil
				}},
			},
		},
	}
}

func evalTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableEvals,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: uuidIndexer("ID", func(obj any) string { return obj.(*structs.Evaluation).ID }),
			},
			// There is no create index: Evals sorts the id index's rows
			// (see allocTableSchema).
			// job is queried by Namespace+JobID with a prefix lookup
			// ("job_prefix", ns, jobID, ""), which ends at the JobID's
			// terminator and so matches that job exactly.
			"job": {
				Name: "job",
				Indexer: &stringsIndex{name: "evals job", n: 3, allowMissing: true, room: allocIDKeyLen, fields: func(obj any) ([3]string, error) {
					e, ok := obj.(*structs.Evaluation)
					if !ok {
						return [3]string{}, fmt.Errorf("evals job: unexpected type %T", obj)
					}
					return [3]string{e.Namespace, e.JobID, e.Status}, nil
				}},
			},
			// There is no namespace index either: the job index starts
			// with the namespace and answers ("job_prefix", ns, ""), and
			// each of an eval's writes paid for the row.
		},
	}
}

func allocTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableAllocs,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: uuidIndexer("ID", func(obj any) string { return obj.(*structs.Allocation).ID }),
			},
			// There is no create index (CreateIndex, ID): Allocs sorts the
			// id index's rows instead. Listing every alloc is rare and
			// reads them all anyway, while the index cost every alloc
			// write a fifth of its index work and about 450 bytes of
			// memory. For the same reason there is no namespace index: the
			// job index starts with the namespace and answers
			// ("job_prefix", ns, ""). Nor is there an eval index: an
			// eval's allocs are among its job's, which the job index
			// finds (AllocsByEval); the index cost every alloc about 550
			// bytes, a sixth of a restored server's memory per alloc.
			// node is NodeID plus the terminal flag, so that a client can
			// read only the allocations it still has to run.
			"node": {
				Name:         "node",
				AllowMissing: true,
				Indexer:      allocNodeIndex{},
			},
			"job": {
				Name:    "job",
				Indexer: allocJobIndex{},
			},
		},
	}
}

func nodeTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name: TableNodes,
		Indexes: map[string]*memdb.IndexSchema{
			"id": {
				Name:    "id",
				Unique:  true,
				Indexer: uuidIndexer("ID", func(obj any) string { return obj.(*structs.Node).ID }),
			},
			"secret_id": {
				Name:    "secret_id",
				Unique:  true,
				Indexer: &memdb.StringFieldIndex{Field: "SecretID"},
			},
			"node_pool": {
				Name:    "node_pool",
				Indexer: &memdb.StringFieldIndex{Field: "NodePool"},
			},
		},
	}
}

func schedulerConfigTableSchema() *memdb.TableSchema {
	return &memdb.TableSchema{
		Name:    TableSchedulerConfig,
		Indexes: map[string]*memdb.IndexSchema{"id": singleRowIndex()},
	}
}

// singleRowIndex is the id index of a table that holds at most one row
// (a configuration): every row has the same key.
func singleRowIndex() *memdb.IndexSchema {
	return &memdb.IndexSchema{
		Name:   "id",
		Unique: true,
		Indexer: &memdb.ConditionalIndex{Conditional: func(any) (bool, error) {
			return true, nil
		}},
	}
}

// bigEndianUintIndex indexes a uint64 as 16 big-endian nibbles, one per
// byte, so that the byte order of the index is the numeric order (memdb's
// UintFieldIndex uses varints, which do not sort).
//
// One nibble per byte rather than 8 plain bytes: a radix tree node has an
// edge per distinct next byte, and Raft indexes (CreateIndex) vary in
// their last byte, so plain bytes made nodes of up to 256 edges, which
// every write under them copies (about 4 KiB per insert, most of the
// store's write cost in the many-small-jobs benchmark). Nibbles cap a node
// at 16 edges.
type bigEndianUintIndex struct {
	field string
	get   func(obj any) (uint64, bool)
}

func uintIndexer(field string, get func(obj any) (uint64, bool)) *bigEndianUintIndex {
	return &bigEndianUintIndex{field: field, get: get}
}

// FromObject implements memdb.SingleIndexer.
func (u *bigEndianUintIndex) FromObject(obj any) (bool, []byte, error) {
	v, ok := u.get(obj)
	if !ok {
		return false, nil, nil
	}
	return true, appendNibbles(nil, v), nil
}

// FromArgs implements memdb.Indexer.
func (u *bigEndianUintIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("%s index: want one argument, got %d", u.field, len(args))
	}
	var v uint64
	switch a := args[0].(type) {
	case uint64:
		v = a
	case int:
		if a < 0 {
			return nil, fmt.Errorf("%s index: negative argument %d", u.field, a)
		}
		v = uint64(a)
	default:
		return nil, fmt.Errorf("%s index: argument must be uint64, got %T", u.field, args[0])
	}
	return appendNibbles(nil, v), nil
}

// appendNibbles appends v as 16 bytes, each one nibble of v, most
// significant first.
func appendNibbles(b []byte, v uint64) []byte {
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, byte(v>>uint(shift))&0xf)
	}
	return b
}

// uuidIndex indexes a UUID field as 32 bytes, one per hex digit (its value
// 0-15), so that the index sorts as the IDs do and a radix tree node has
// at most 16 edges. memdb's UUIDFieldIndex packs two digits a byte: random
// IDs then fill the tree's top nodes with up to 256 edges, and every
// insert copies them (4 KiB for the root alone). A digit a byte also takes
// prefixes of any length, odd ones included.
type uuidIndex struct {
	field string
	get   func(obj any) string
}

func uuidIndexer(field string, get func(obj any) string) *uuidIndex {
	return &uuidIndex{field: field, get: get}
}

// FromObject implements memdb.SingleIndexer; an empty ID is not indexed.
func (u *uuidIndex) FromObject(obj any) (bool, []byte, error) {
	v := u.get(obj)
	if v == "" {
		return false, nil, nil
	}
	b, err := u.parse(v, true)
	return true, b, err
}

// noUUID is the key a lookup of a string that is no UUID (or UUID
// prefix) reads: no stored key starts with it, as each byte of a stored
// key is a digit's value (0-15). A lookup by an ID a caller made up
// ("alloc status ../../x") so finds nothing, as for any unknown ID,
// instead of failing; storing an object whose ID is no UUID still fails
// (FromObject).
var noUUID = []byte{16}

// FromArgs implements memdb.Indexer: one whole UUID.
func (u *uuidIndex) FromArgs(args ...any) ([]byte, error) {
	s, err := u.arg(args)
	if err != nil {
		return nil, err
	}
	if b, err := u.parse(s, true); err == nil {
		return b, nil
	}
	return noUUID, nil
}

// PrefixFromArgs implements memdb.PrefixIndexer: a UUID's leading digits,
// dashes allowed where the UUID has them.
func (u *uuidIndex) PrefixFromArgs(args ...any) ([]byte, error) {
	s, err := u.arg(args)
	if err != nil {
		return nil, err
	}
	if b, err := u.parse(s, false); err == nil {
		return b, nil
	}
	return noUUID, nil
}

func (u *uuidIndex) arg(args []any) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("%s index: want one argument, got %d", u.field, len(args))
	}
	s, ok := args[0].(string)
	if !ok {
		return "", fmt.Errorf("%s index: argument must be a string, got %T", u.field, args[0])
	}
	return s, nil
}

// parse turns a UUID (whole, or a prefix when whole is false) into its
// digits' values.
func (u *uuidIndex) parse(s string, whole bool) ([]byte, error) {
	switch {
	case whole && len(s) != 36:
		return nil, fmt.Errorf("%s %q is not a UUID: want 36 characters, got %d", u.field, s, len(s))
	case len(s) > 36:
		return nil, fmt.Errorf("%s prefix %q is longer than a UUID (36 characters)", u.field, s)
	}
	out := make([]byte, 0, 32)
	for i := range len(s) {
		c := s[i]
		switch {
		case c == '-' && (i == 8 || i == 13 || i == 18 || i == 23):
			continue
		case c >= '0' && c <= '9':
			out = append(out, c-'0')
		case c >= 'a' && c <= 'f':
			out = append(out, c-'a'+10)
		case c >= 'A' && c <= 'F':
			out = append(out, c-'A'+10)
		default:
			return nil, fmt.Errorf("%s %q is not a UUID: %q at position %d is not a hex digit or a dash between its groups", u.field, s, c, i)
		}
	}
	return out, nil
}

// jobPoolIndex indexes a job by its node pool, unless the pool is the
// default one (see jobTableSchema).
type jobPoolIndex struct{}

func (jobPoolIndex) FromObject(obj any) (bool, []byte, error) {
	j, ok := obj.(*structs.Job)
	if !ok {
		return false, nil, fmt.Errorf("node pool index: unexpected type %T", obj)
	}
	if j.NodePool == "" || j.NodePool == structs.DefaultNodePool {
		return false, nil, nil
	}
	return true, append([]byte(j.NodePool), 0), nil
}

func (jobPoolIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("node pool index: takes one argument, got %d", len(args))
	}
	return joinArgs("node pool index", args, true)
}

// periodicIndex indexes periodic jobs only, under one key.
type periodicIndex struct{}

func (periodicIndex) FromObject(obj any) (bool, []byte, error) {
	j, ok := obj.(*structs.Job)
	if !ok {
		return false, nil, fmt.Errorf("periodic index: unexpected type %T", obj)
	}
	if !j.IsPeriodic() {
		return false, nil, nil
	}
	return true, []byte{1}, nil
}

func (periodicIndex) FromArgs(args ...any) ([]byte, error) {
	if len(args) != 0 {
		return nil, fmt.Errorf("periodic index: takes no arguments, got %d", len(args))
	}
	return []byte{1}, nil
}
