package tree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
)

// A directory the walk may not list is named (a Denied skip, to OnSkip
// and in Stats, whatever MaxSkips) and the walk goes on past it; a file
// it may not read is listed like any other (reading it is not the
// walk's business). Only the start at the root, unlistable, ends the
// walk with ErrUnreadable: nothing could be named instead.
func TestWalkDeniedDirectory(t *testing.T) {
	if testtree.Unprivileged(t) {
		return
	}
	root := testtree.Write(t, map[string]string{
		"a/locked/x.go":   "x",
		"a/open/y.go":     "y",
		"a/secret.go":     "s",
		"b/locked/z/w.go": "w",
		"c.go":            "c",
	})
	for _, p := range []string{"a/locked", "a/secret.go", "b/locked"} {
		if err := os.Chmod(filepath.Join(root, p), 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		os.Chmod(filepath.Join(root, "a/locked"), 0o755)
		os.Chmod(filepath.Join(root, "b/locked"), 0o755)
	})

	var onSkip []Skip
	files, _, st, err := walkAll(t, root, Options{OnSkip: func(s Skip) { onSkip = append(onSkip, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a/open/y.go", "a/secret.go", "c.go"}; !slices.Equal(files, want) {
		t.Errorf("files %q, want %q", files, want)
	}
	want := []Skip{{Rel: "a/locked", IsDir: true, Denied: true}, {Rel: "b/locked", IsDir: true, Denied: true}}
	if !slices.Equal(st.Skipped, want) || !slices.Equal(onSkip, want) {
		t.Errorf("Skipped %+v, OnSkip %+v, want %+v", st.Skipped, onSkip, want)
	}
	if st.Denied != 2 || st.Errors != 0 || st.Ignored != 0 {
		t.Errorf("Denied %d Errors %d Ignored %d, want 2 0 0", st.Denied, st.Errors, st.Ignored)
	}

	// A walk that starts at the directory names it.
	st, err = Walk(context.Background(), root, "a/locked", ignore.Open(root), Options{}, func(e Entry) error {
		t.Errorf("listed %s", e.Rel)
		return nil
	})
	if err != nil || !slices.Equal(st.Skipped, want[:1]) {
		t.Errorf("walk of a/locked: %v, Skipped %+v", err, st.Skipped)
	}

	// The root itself unlistable: no answer.
	if err := os.Chmod(root, 0o311); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(root, 0o755) })
	if _, _, _, err := walkAll(t, root, Options{}); !errors.Is(err, ErrUnreadable) {
		t.Errorf("walk of an unlistable root: %v, want ErrUnreadable", err)
	}
}
