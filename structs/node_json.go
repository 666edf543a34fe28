package structs

import "encoding/json"

// nodeJSON shows a Node on the /v1 API as Nomad does, wherever it is
// encoded (a node read, a node event on the event stream): the SecretID
// emptied and the legacy Drain flag computed from DrainStrategy.
type nodeJSON struct{}

// ConvertExt returns the node as the API shows it.
func (nodeJSON) ConvertExt(v any) any {
	n, ok := v.(*Node)
	if !ok || n == nil {
		return nil
	}
	// EmbeddedNode is Node without the extension, so encoding it does
	// not come back here; its name is exported so the codec inlines it.
	type EmbeddedNode Node
	c := *n
	c.SecretID = ""
	return &struct {
		*EmbeddedNode
		Drain bool
	}{(*EmbeddedNode)(&c), n.DrainStrategy != nil}
}

// UpdateExt decodes a node from its API form (src is the decoded JSON
// object); the computed Drain flag is dropped.
func (nodeJSON) UpdateExt(dst, src any) {
	b, err := json.Marshal(src)
	if err != nil {
		return
	}
	type EmbeddedNode Node
	_ = json.Unmarshal(b, (*EmbeddedNode)(dst.(*Node)))
}
