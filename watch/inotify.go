package watch

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// notifier is the watcher's inotify instance. It keeps fsnotify's Event
// and Op types (and its ErrEventOverflow) but not its backend: fsnotify
// adds a watch by path, so a directory swapped for a symlink between a
// check and the add is watched through the link, and its table keyed by
// path can be left pointing at a dropped watch descriptor (a nil
// dereference in removePath, fsnotify issues #616, #652, #662). Here a
// watch is added to a directory already opened beneath the root (through
// /proc/self/fd, so the kernel watches exactly the inode that was
// opened, whatever the path names by then), with IN_ONLYDIR, and the
// table is ours: one descriptor per path and one path per descriptor,
// each update keeping both maps in step.
//
// Goroutines: newNotifier starts read, which Close ends (closing the
// descriptor unblocks its read, closing closing unblocks its sends, so it
// ends whether or not anyone still receives) and waits for; read closes
// Events and Errors when it returns.
//
// read holds readMu from each read(2) that returns events until it has
// sent them all, and counts what it sends (sent): while readMu is free,
// every event the kernel no longer queues has been sent. quiet builds on
// that.
type notifier struct {
	f  *os.File        // the inotify descriptor, non-blocking, in Go's poller
	rc syscall.RawConn // f's, for reads and FIONREAD

	readMu sync.Mutex // held by read from a read(2) until its events are sent
	sent   uint64     // events and errors sent on Events and Errors; guarded by readMu
	// onRead, if set (tests), is called by read under readMu after a
	// read(2) returned events, before they are sent.
	onRead func()

	mu     sync.Mutex       // guards the two maps
	byWd   map[int32]string // watch descriptor -> absolute directory path
	byPath map[string]int32 // absolute directory path -> watch descriptor

	Events  chan fsnotify.Event
	Errors  chan error
	closing chan struct{} // closed by Close: read stops sending
	once    sync.Once
	done    chan struct{} // closed when read returns
}

// watchMask is what every watch asks for: fsnotify's default set plus
// IN_ONLYDIR (fail rather than watch a non-directory).
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR

// errNotifierClosed: Add or Remove after Close.
var errNotifierClosed = errors.New("watch: inotify instance closed")

func newNotifier(buffer int, onRead func()) (*notifier, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("watch: inotify_init1: %w", err)
	}
	f := os.NewFile(uintptr(fd), "inotify")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("watch: inotify: %w", err)
	}
	n := &notifier{
		f:       f,
		rc:      rc,
		onRead:  onRead,
		byWd:    make(map[int32]string),
		byPath:  make(map[string]int32),
		Events:  make(chan fsnotify.Event, buffer),
		Errors:  make(chan error, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	go n.read()
	return n, nil
}

// Add watches the directory dir (open, reached beneath the root), whose
// events are named under abs. A directory already watched under another
// path (it was renamed) is renamed in the table; a path that watched
// another directory (it was replaced) has that watch removed.
func (n *notifier) Add(dir *os.File, abs string) error {
	fd, err := n.fd()
	if err != nil {
		return err
	}
	wd, err := unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(int(dir.Fd())), watchMask)
	if err != nil {
		return &os.PathError{Op: "inotify_add_watch", Path: abs, Err: err}
	}
	w := int32(wd)
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.byWd[w]; ok && old != abs {
		delete(n.byPath, old)
	}
	if old, ok := n.byPath[abs]; ok && old != w {
		delete(n.byWd, old)
		_, _ = unix.InotifyRmWatch(fd, uint32(old)) // EINVAL: the kernel dropped it first
	}
	n.byWd[w], n.byPath[abs] = abs, w
	return nil
}

// compact copies the table's paths into new strings, allocated together:
// paths added from a walk's readers sit each in its own span among the
// walk's garbage, which it would keep from being returned (some 10 MB
// of RssAnon at 200k files).
func (n *notifier) compact() {
	n.mu.Lock()
	defer n.mu.Unlock()
	byWd := make(map[int32]string, len(n.byWd))
	byPath := make(map[string]int32, len(n.byPath))
	for w, p := range n.byWd {
		p = strings.Clone(p)
		byWd[w], byPath[p] = p, w
	}
	n.byWd, n.byPath = byWd, byPath
}

// Remove drops the watch at abs, if any.
func (n *notifier) Remove(abs string) {
	fd, err := n.fd()
	if err != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w, ok := n.byPath[abs]
	if !ok {
		return
	}
	delete(n.byPath, abs)
	delete(n.byWd, w)
	_, _ = unix.InotifyRmWatch(fd, uint32(w)) // EINVAL: the kernel dropped it first
}

// Close closes the descriptor and waits for the reader to end, which
// stops sending at once even if nobody receives any more.
func (n *notifier) Close() error {
	n.once.Do(func() { close(n.closing) })
	err := n.f.Close()
	<-n.done
	if errors.Is(err, os.ErrClosed) {
		return nil
	}
	return err
}

func (n *notifier) fd() (int, error) {
	rc, err := n.f.SyscallConn()
	if err != nil {
		return -1, errNotifierClosed
	}
	fd := -1
	if err := rc.Control(func(p uintptr) { fd = int(p) }); err != nil {
		return -1, errNotifierClosed
	}
	return fd, nil
}

// read turns the kernel's events into fsnotify events until Close.
func (n *notifier) read() {
	defer close(n.done)
	defer close(n.Errors)
	defer close(n.Events)
	var buf [64 << 10]byte
	for {
		var rerr error
		more := true
		err := n.rc.Read(func(fd uintptr) bool {
			n.readMu.Lock()
			defer n.readMu.Unlock()
			k, err := unix.Read(int(fd), buf[:])
			for err == unix.EINTR {
				k, err = unix.Read(int(fd), buf[:])
			}
			switch {
			case err == unix.EAGAIN:
				return false // wait until the descriptor is readable
			case err != nil:
				rerr = err
				return true
			}
			if n.onRead != nil {
				n.onRead()
			}
			more = n.send(buf[:k])
			return true
		})
		if err == nil {
			err = rerr
		}
		select {
		case <-n.closing:
			return
		default:
		}
		if err != nil {
			select {
			case n.Errors <- fmt.Errorf("watch: reading inotify: %w", err):
			case <-n.closing:
			}
			return
		}
		if !more {
			return
		}
	}
}

// send sends the events in buf (what one read(2) returned), counting them
// in sent; false once Close has begun. Caller holds readMu.
func (n *notifier) send(buf []byte) bool {
	for off := 0; off+unix.SizeofInotifyEvent <= len(buf); {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		nameLen := int(raw.Len)
		name := ""
		if nameLen > 0 && off+unix.SizeofInotifyEvent+nameLen <= len(buf) {
			b := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+nameLen]
			for len(b) > 0 && b[len(b)-1] == 0 {
				b = b[:len(b)-1]
			}
			name = string(b)
		}
		off += unix.SizeofInotifyEvent + nameLen
		if raw.Mask&unix.IN_Q_OVERFLOW != 0 {
			select {
			case n.Errors <- fsnotify.ErrEventOverflow:
				n.sent++
			default: // one pending overflow says it all
			}
			continue
		}
		ev, ok := n.event(raw.Wd, raw.Mask, name)
		if !ok {
			continue
		}
		select {
		case n.Events <- ev:
			n.sent++
		case <-n.closing:
			return false
		}
	}
	return true
}

// quiet reports whether the kernel queues no event for this instance and
// no read's events are still being sent (ok), and how many events and
// errors have been sent so far: when ok, every event the kernel queued
// before the call is among those sent. ok is false, saying nothing, while
// a read's events are being sent.
func (n *notifier) quiet() (sent uint64, ok bool) {
	if !n.readMu.TryLock() {
		return 0, false
	}
	defer n.readMu.Unlock()
	queued, qerr := -1, error(nil) // FIONREAD (TIOCINQ): bytes of queued events
	if err := n.rc.Control(func(fd uintptr) { queued, qerr = unix.IoctlGetInt(int(fd), unix.TIOCINQ) }); err != nil {
		return 0, false
	}
	return n.sent, qerr == nil && queued == 0
}

// event names one kernel event; ok is false for events of a watch no
// longer in the table, and for IN_IGNORED, which drops the watch.
func (n *notifier) event(wd int32, mask uint32, name string) (fsnotify.Event, bool) {
	n.mu.Lock()
	dir, ok := n.byWd[wd]
	if ok && mask&unix.IN_IGNORED != 0 {
		delete(n.byWd, wd)
		if n.byPath[dir] == wd {
			delete(n.byPath, dir)
		}
	}
	n.mu.Unlock()
	if !ok || mask&unix.IN_IGNORED != 0 {
		return fsnotify.Event{}, false
	}
	path := dir
	if name != "" {
		path = dir + "/" + name
	}
	var op fsnotify.Op
	if mask&(unix.IN_CREATE|unix.IN_MOVED_TO) != 0 {
		op |= fsnotify.Create
	}
	if mask&unix.IN_MODIFY != 0 {
		op |= fsnotify.Write
	}
	if mask&(unix.IN_DELETE|unix.IN_DELETE_SELF) != 0 {
		op |= fsnotify.Remove
	}
	if mask&(unix.IN_MOVED_FROM|unix.IN_MOVE_SELF) != 0 {
		op |= fsnotify.Rename
	}
	if mask&unix.IN_ATTRIB != 0 {
		op |= fsnotify.Chmod
	}
	if op == 0 {
		return fsnotify.Event{}, false
	}
	return fsnotify.Event{Name: path, Op: op}, true
}
