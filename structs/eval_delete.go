package structs

// MaxUUIDsPerWriteRequest is the most evaluation IDs one delete request
// may name, as Nomad's.
const MaxUUIDsPerWriteRequest = 7281

// EvalUserDeleteRequest deletes evaluations an operator names. With
// SkipUnsafe, evals that are not safe to delete are left alone instead of
// failing the request (a delete by filter).
type EvalUserDeleteRequest struct {
	EvalIDs    []string
	SkipUnsafe bool
	WriteRequest
}

// EvalDeleteResponse answers Eval.Delete with how many evals went.
type EvalDeleteResponse struct {
	Count int
	WriteMeta
}
