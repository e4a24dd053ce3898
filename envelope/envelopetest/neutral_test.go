package envelopetest

import (
	"reflect"
	"testing"
)

func TestEngineNeutral(t *testing.T) {
	e := map[string]any{
		"status": "success",
		"text":   "Found 2 files matching '*' in '.'\n(Scanned 14 items in 3ms)",
		"stats":  map[string]any{"time_ms": 3, "visited": 14, "matched": 2, "candidates": 9},
	}
	want := map[string]any{
		"status": "success",
		"text":   "Found 2 files matching '*' in '.'\n(<timing>)",
		"stats":  map[string]any{"matched": float64(2)},
	}
	if got := EngineNeutral(t, e); !reflect.DeepEqual(got, want) {
		t.Errorf("EngineNeutral = %v, want %v", got, want)
	}
}
