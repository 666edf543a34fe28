package structs

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"
)

// VarApplyStateRequestType is the Raft message that writes one variable;
// Nomad's number.
const VarApplyStateRequestType MessageType = 50

func init() {
	messageTypeNames[VarApplyStateRequestType] = "VarApplyStateRequestType"
}

// MaxVariableSize is the largest a variable's items may be (the sum of
// the lengths of its keys and values), as in Nomad.
const MaxVariableSize = 64 << 10

// Lock TTL bounds and defaults, as in Nomad.
const (
	MinVariableLockTTL       = 10 * time.Second
	MaxVariableLockTTL       = 24 * time.Hour
	DefaultVariableLockTTL   = 15 * time.Second
	DefaultVariableLockDelay = 15 * time.Second
)

// VarOp is the operation of a variable write, with Nomad's names.
type VarOp string

// Variable write operations.
const (
	VarOpSet         VarOp = "set"
	VarOpCAS         VarOp = "cas"
	VarOpDelete      VarOp = "delete"
	VarOpDeleteCAS   VarOp = "delete-cas"
	VarOpLockAcquire VarOp = "lock-acquire"
	VarOpLockRelease VarOp = "lock-release"
)

// VarOpResult is how a variable write ended.
type VarOpResult string

// Variable write results: done, or refused because the stored variable
// does not match the request (its modify index, or its lock).
const (
	VarOpResultOk       VarOpResult = "ok"
	VarOpResultConflict VarOpResult = "conflict"
)

// VariableLock is the lock held on a variable: the holder's ID, how long
// it holds the lock without a renewal, and how long after a lapsed lock no
// one may take it again.
type VariableLock struct {
	ID        string
	TTL       time.Duration
	LockDelay time.Duration
}

// Copy returns a copy of the lock.
func (l *VariableLock) Copy() *VariableLock {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// Canonicalize sets Nomad's defaults for an unset TTL and lock delay.
func (l *VariableLock) Canonicalize() {
	if l.TTL == 0 {
		l.TTL = DefaultVariableLockTTL
	}
	if l.LockDelay == 0 {
		l.LockDelay = DefaultVariableLockDelay
	}
}

// Validate checks the TTL and lock delay.
func (l *VariableLock) Validate() error {
	if l.TTL < 0 || l.LockDelay < 0 {
		return fmt.Errorf("lock TTL %s and lock delay %s must not be negative", l.TTL, l.LockDelay)
	}
	if l.TTL < MinVariableLockTTL || l.TTL > MaxVariableLockTTL {
		return fmt.Errorf("lock TTL %s is out of range: it must be between %s and %s", l.TTL, MinVariableLockTTL, MaxVariableLockTTL)
	}
	return nil
}

// VariableMetadata is a variable without its items: what lists show.
type VariableMetadata struct {
	Namespace   string
	Path        string
	Lock        *VariableLock
	CreateIndex uint64
	CreateTime  int64
	ModifyIndex uint64
	ModifyTime  int64
}

// Copy returns a copy of the metadata.
func (m VariableMetadata) Copy() VariableMetadata {
	m.Lock = m.Lock.Copy()
	return m
}

// LockID returns the ID of the lock held on the variable, "" for none.
func (m *VariableMetadata) LockID() string {
	if m.Lock == nil {
		return ""
	}
	return m.Lock.ID
}

// VariableItems are a variable's keys and values.
type VariableItems map[string]string

// Size is what counts against MaxVariableSize.
func (it VariableItems) Size() int {
	n := 0
	for k, v := range it {
		n += len(k) + len(v)
	}
	return n
}

// VariableDecrypted is a variable with its items in clear text; it exists
// only on the server that handles the request and on the wire to the user.
type VariableDecrypted struct {
	VariableMetadata
	Items VariableItems
}

// VariableEncrypted is a variable as it is stored and replicated: Data is
// the AES-GCM sealed JSON of its items (nonce first), sealed with the root
// key KeyID.
type VariableEncrypted struct {
	VariableMetadata
	Data  []byte
	KeyID string
}

// Copy returns a deep copy.
func (v *VariableEncrypted) Copy() *VariableEncrypted {
	if v == nil {
		return nil
	}
	return &VariableEncrypted{VariableMetadata: v.VariableMetadata.Copy(), Data: slices.Clone(v.Data), KeyID: v.KeyID}
}

// Copy returns a deep copy.
func (v *VariableDecrypted) Copy() *VariableDecrypted {
	if v == nil {
		return nil
	}
	return &VariableDecrypted{VariableMetadata: v.VariableMetadata.Copy(), Items: maps.Clone(v.Items)}
}

// validVariablePath holds the characters Nomad allows in a variable path
// (URL-safe, and none that template lookups give a meaning) and its length.
var validVariablePath = regexp.MustCompile(`^[a-zA-Z0-9-_~/]{1,128}$`)

// ValidateVariablePath checks a variable path: its characters and length,
// and the rules of the reserved top-level "nomad" directory.
func ValidateVariablePath(path string) error {
	if path == "" {
		return errors.New("variable requires path")
	}
	if !validVariablePath.MatchString(path) {
		return fmt.Errorf("invalid path %q: a path is 1 to 128 of the characters a-z A-Z 0-9 - _ ~ /", path)
	}
	parts := strings.Split(path, "/")
	if parts[0] != "nomad" {
		return nil
	}
	switch {
	case len(parts) == 1:
		return errors.New(`"nomad" is a reserved top-level directory path, but you may write variables to "nomad/jobs", "nomad/job-templates", or below`)
	case parts[1] == "jobs":
		return nil
	case parts[1] == "job-templates" && len(parts) == 3:
		return nil
	case parts[1] == "job-templates":
		return errors.New(`"nomad/job-templates" is a reserved directory path, but you may write variables at the level below it, for example "nomad/job-templates/template-name"`)
	}
	return errors.New(`only paths at "nomad/jobs" or "nomad/job-templates" and below are valid paths under the top-level "nomad" directory`)
}

// Validate checks a variable to be written: namespace, path, items and
// size. Only set and cas need items.
func (v *VariableDecrypted) Validate(op VarOp) error {
	if v.Namespace == "*" {
		return errors.New(`can not target wildcard ("*") namespace`)
	}
	if err := ValidateVariablePath(v.Path); err != nil {
		return err
	}
	if (op == VarOpSet || op == VarOpCAS) && len(v.Items) == 0 {
		return errors.New("empty variables are invalid")
	}
	if n := v.Items.Size(); n > MaxVariableSize {
		return fmt.Errorf("variables are limited to 64KiB in total size: this one is %d bytes", n)
	}
	if v.Lock != nil && op == VarOpLockAcquire {
		return v.Lock.Validate()
	}
	return nil
}

// VarApplyStateRequest is the Raft entry of a variable write. CAS
// operations compare Var.ModifyIndex with the stored one; lock operations
// carry the lock in Var.Lock. An acquire without Data keeps the stored
// items.
type VarApplyStateRequest struct {
	Op  VarOp
	Var *VariableEncrypted
	WriteRequest
}

// VarApplyStateResponse is the FSM's answer to a variable write: the
// variable as written, or the stored one that conflicted (nil when the
// conflict is that there is none).
type VarApplyStateResponse struct {
	Result   VarOpResult
	Written  *VariableEncrypted
	Conflict *VariableEncrypted
}

// VariablesApplyRequest writes one variable.
type VariablesApplyRequest struct {
	Op  VarOp
	Var *VariableDecrypted
	WriteRequest
}

// VariablesApplyResponse is the variable as written (nil after a delete),
// or the stored variable the write conflicted with.
type VariablesApplyResponse struct {
	Result   VarOpResult
	Output   *VariableDecrypted
	Conflict *VariableDecrypted
	WriteMeta
}

// VariablesReadRequest reads one variable of the request's namespace.
type VariablesReadRequest struct {
	Path string
	QueryOptions
}

// VariablesReadResponse holds the variable, nil when it does not exist.
type VariablesReadResponse struct {
	Data *VariableDecrypted
	QueryMeta
}

// VariablesListRequest lists the metadata of the variables whose path
// starts with the query's prefix, in the query's namespace ("*": all).
type VariablesListRequest struct {
	QueryOptions
}

// VariablesListResponse holds the listed metadata, ordered by namespace
// and path.
type VariablesListResponse struct {
	Data []*VariableMetadata
	QueryMeta
}

// VariablesRenewLockRequest renews the lock LockID holds on a variable.
type VariablesRenewLockRequest struct {
	Path   string
	LockID string
	WriteRequest
}

// VariablesRenewLockResponse holds the variable's metadata.
type VariablesRenewLockResponse struct {
	VarMeta *VariableMetadata
	WriteMeta
}
