package daemon

import "testing"

// GOGC leaves about 64 MB above the live heap, within 50 and 100.
func TestCollectorPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 100}, {20 * mb, 100}, {64 * mb, 100}, {100 * mb, 64}, {128 * mb, 50}, {150 * mb, 50}, {1 << 30, 50},
	} {
		if got := collectorPercent(c.live); got != c.want {
			t.Errorf("collectorPercent(%d MB) = %d, want %d", c.live/mb, got, c.want)
		}
	}
}
