package align

import "testing"

func TestUp(t *testing.T) {
	for _, c := range []struct{ n, to, want uint64 }{
		{0, 128, 0}, {1, 128, 128}, {127, 128, 128}, {128, 128, 128}, {129, 128, 256},
		{5, 1, 5}, {70000, 512, 70144}, {3, 3, 3}, {4, 3, 6},
	} {
		if got := Up(c.n, c.to); got != c.want {
			t.Errorf("Up(%d, %d) = %d, want %d", c.n, c.to, got, c.want)
		}
	}
}
