//go:build !linux

package watch

import (
	"os"

	"github.com/fsnotify/fsnotify"

	"github.com/indexd/indexd/internal/rooted"
)

// Supported reports whether this system has a notification backend the
// watcher is proven on: not this one (see backend).
const Supported = false

// notifier is the backend's place on a system without one: newNotifier
// refuses, so none is ever made, and its methods are never called.
type notifier struct {
	Events chan fsnotify.Event
	Errors chan error
}

func newNotifier(buffer int, onRead func()) (*notifier, error) { return nil, ErrUnsupported }

func readMaxWatches() int { return 0 }

func openWatchable(r *rooted.Root, rel string) (int, error) { return -1, ErrUnsupported }

func (n *notifier) Add(dir *os.File, abs string) error { return ErrUnsupported }
func (n *notifier) Remove(abs string)                  {}
func (n *notifier) AddFile(fd int, abs string, ino uint64) (bool, error) {
	return false, ErrUnsupported
}
func (n *notifier) AddLink(known, abs string) bool    { return false }
func (n *notifier) RemoveFile(abs string) bool        { return false }
func (n *notifier) FileIno(abs string) (uint64, bool) { return 0, false }
func (n *notifier) FilePaths() []string               { return nil }
func (n *notifier) FileWatches() int                  { return 0 }
func (n *notifier) compact()                          {}
func (n *notifier) quiet() (uint64, bool)             { return 0, false }
func (n *notifier) Close() error                      { return nil }
