//go:build !linux

package watch

import (
	"context"
	"errors"
	"testing"

	"github.com/indexd/indexd/index"
)

// Without a backend, Start refuses with ErrUnsupported, which the daemon
// takes for "serve this root without a watcher".
func TestStartUnsupported(t *testing.T) {
	root := tempRoot(t)
	ix, err := index.Build(context.Background(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	w, err := Start(context.Background(), root, ix, Options{})
	if w != nil || !errors.Is(err, ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Start = %v, %v; want ErrUnsupported", w, err)
	}
}
