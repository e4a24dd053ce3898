package tree

import "math"

// Nanos converts a time given as seconds and nanoseconds since the Unix
// epoch (as stat(2) reports it) to Unix nanoseconds, clamped to the int64
// range: a time after 2262-04-11 becomes math.MaxInt64 and one before
// 1677-09-21 math.MinInt64, so far-future times still sort as the newest
// and far-past ones as the oldest (sec*1e9+nsec would wrap around).
// Times beyond the range compare equal among themselves.
func Nanos(sec, nsec int64) int64 {
	const (
		g      = 1_000_000_000
		maxSec = math.MaxInt64 / g // 9223372036 s, remainder 854775807 ns
		minSec = math.MinInt64 / g // -9223372036 s, remainder -854775808 ns
	)
	switch {
	case sec > maxSec || sec == maxSec && nsec > math.MaxInt64%g:
		return math.MaxInt64
	case sec < minSec || sec == minSec && nsec < math.MinInt64%g:
		return math.MinInt64
	}
	return sec*g + nsec
}
