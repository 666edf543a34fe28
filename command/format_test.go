package command

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestFormatListAndKV(t *testing.T) {
	cases := []struct {
		name string
		rows []string
		kv   bool
		want string
	}{
		{
			name: "columns two spaces apart, cells trimmed",
			rows: []string{"ID|Type|Status", " web | service |running", "batch-job|batch|dead"},
			want: "ID         Type     Status\nweb        service  running\nbatch-job  batch    dead",
		},
		{
			name: "empty last cells leave no blanks at the end of the row",
			rows: []string{"Name|Description|", "default||"},
			want: "Name     Description\ndefault",
		},
		{
			name: "width counts runes",
			rows: []string{"é漢|x", "ab|y"},
			want: "é漢  x\nab  y",
		},
		{
			name: "key = value",
			rows: []string{"ID|mock", "Submit Date|N/A", "Namespace|"},
			kv:   true,
			want: "ID          = mock\nSubmit Date = N/A\nNamespace   =",
		},
		{name: "no rows", want: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kv {
				must.Eq(t, tc.want, formatKV(tc.rows))
			} else {
				must.Eq(t, tc.want, formatList(tc.rows))
			}
		})
	}
}
