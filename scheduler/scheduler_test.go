package scheduler

import (
	"testing"

	"github.com/shoenig/test/must"
)

// An eval's shuffle is the same wherever it runs and differs from eval to
// eval.
func TestEvalRand_SeededFromTheEval(t *testing.T) {
	order := func(evalID string) []int {
		p := make([]int, 50)
		for i := range p {
			p[i] = i
		}
		r := EvalRand(evalID)
		r.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		return p
	}
	a, b := "5d9a4d6a-4c1e-4f0e-9a57-2a0d1f1f1b10", "0c7fd5e2-8f39-4b1c-a3c4-6b1e7d9c2a11"
	must.Eq(t, order(a), order(a))
	must.NotEq(t, order(a), order(b))
}
