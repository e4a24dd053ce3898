//go:build !linux

package watch

import (
	"context"
	"errors"
	"testing"

	"github.com/indexd/indexd/index"
)

// Without a backend, Start refuses with ErrUnsupported (and the daemon,
// seeing Supported false, never calls it: it keeps no index).
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
