package rooted

import (
	"errors"
	"strings"
	"testing"
)

// cleanSpec is clean as its comment states it, written plainly.
func cleanSpec(rel string) (string, error) {
	rel = strings.Trim(rel, "/")
	if rel == "" || rel == "." {
		return ".", nil
	}
	if strings.IndexByte(rel, 0) >= 0 {
		return rel, ErrInvalidName
	}
	for _, c := range strings.Split(rel, "/") {
		if c == ".." || c == "." || c == "" {
			return rel, ErrInvalidName
		}
	}
	return rel, nil
}

var cleanCases = []struct {
	in, out string
	bad     bool
}{
	{"", ".", false},
	{".", ".", false},
	{"/", ".", false},
	{"//./", ".", false},
	{"a", "a", false},
	{"/a/b/", "a/b", false},
	{"a//b", "", true},
	{"a/./b", "", true},
	{"a/..", "", true},
	{"../a", "", true},
	{"...", "...", false},
	{".a/b.", ".a/b.", false},
	{"a\x00b", "", true},
	{"../\x00", "", true},
}

func TestClean(t *testing.T) {
	for _, c := range cleanCases {
		got, err := clean(c.in)
		if c.bad {
			if !errors.Is(err, ErrInvalidName) {
				t.Errorf("clean(%q) = %q, %v; want ErrInvalidName", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.out {
			t.Errorf("clean(%q) = %q, %v; want %q", c.in, got, err, c.out)
		}
	}
}

// FuzzClean: clean agrees with cleanSpec on any name.
//
//	go test -run XXX -fuzz FuzzClean -fuzztime 30s ./internal/rooted
func FuzzClean(f *testing.F) {
	for _, c := range cleanCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		got, err := clean(rel)
		want, werr := cleanSpec(rel)
		if (err == nil) != (werr == nil) || err != nil && !errors.Is(err, ErrInvalidName) || err == nil && got != want {
			t.Fatalf("clean(%q) = %q, %v; want %q, %v", rel, got, err, want, werr)
		}
	})
}
