package orderedheap

import (
	"testing"

	"github.com/shoenig/test/must"
)

func TestHeap_PopsInOrder(t *testing.T) {
	cases := []struct {
		name string
		in   []int
		want []int
	}{
		{"empty", nil, nil},
		{"one", []int{7}, []int{7}},
		{"reversed", []int{5, 4, 3, 2, 1}, []int{1, 2, 3, 4, 5}},
		{"duplicates", []int{2, 1, 2, 1}, []int{1, 1, 2, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := New(func(a, b int) bool { return a < b })
			for _, x := range tc.in {
				h.Push(x)
			}
			must.Eq(t, len(tc.in), len(h.Items()))
			var got []int
			for h.Len() > 0 {
				top := h.Peek()
				must.Eq(t, top, h.Pop())
				got = append(got, top)
			}
			must.Eq(t, tc.want, got)
		})
	}
}
