package apiconv

import (
	"slices"

	"github.com/hashicorp/nomad/api"

	"github.com/nomadq/nomadq/structs"
)

func template(t *api.Template) *structs.Template {
	if t == nil {
		return nil
	}
	out := &structs.Template{
		SourcePath:    deref(t.SourcePath),
		DestPath:      deref(t.DestPath),
		EmbeddedTmpl:  deref(t.EmbeddedTmpl),
		ChangeMode:    deref(t.ChangeMode),
		ChangeSignal:  deref(t.ChangeSignal),
		Splay:         deref(t.Splay),
		Perms:         deref(t.Perms),
		LeftDelim:     deref(t.LeftDelim),
		RightDelim:    deref(t.RightDelim),
		Envvars:       deref(t.Envvars),
		Once:          deref(t.Once),
		Uid:           clonePtr(t.Uid),
		Gid:           clonePtr(t.Gid),
		ErrMissingKey: deref(t.ErrMissingKey),
	}
	if cs := t.ChangeScript; cs != nil {
		out.ChangeScript = &structs.ChangeScript{
			Command:          deref(cs.Command),
			Args:             slices.Clone(cs.Args),
			Timeout:          deref(cs.Timeout),
			FailOnError:      deref(cs.FailOnError),
			RunOnFirstRender: deref(cs.RunOnFirstRender),
		}
	}
	if w := t.Wait; w != nil {
		out.Wait = &structs.WaitConfig{Min: clonePtr(w.Min), Max: clonePtr(w.Max)}
	}
	return out
}
