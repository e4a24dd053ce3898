package watch

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/rooted"
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
// Files are watched too, on their own, when they have more than one link
// (see the Watcher's "Hard links"): a file's watch reports a write made
// through any of its links, inside the root or not. The kernel keeps one
// watch per inode and instance, so every path of one file shares its
// descriptor; the file table maps the descriptor to all of them (each
// path in one file watch at most), and each event on it is sent once per
// path.
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

	mu     sync.Mutex       // guards the four maps
	byWd   map[int32]string // watch descriptor -> absolute directory path
	byPath map[string]int32 // absolute directory path -> watch descriptor
	files  map[int32]*fileWatch
	byFile map[string]int32 // absolute path of a file watched on its own -> its watch descriptor

	Events  chan fsnotify.Event
	Errors  chan error
	closing chan struct{} // closed by Close: read stops sending
	once    sync.Once
	done    chan struct{} // closed when read returns
}

// fileWatch is one file's own watch: its inode and the paths of it the
// watcher knows under the root (absolute), which its events are sent
// under.
type fileWatch struct {
	ino   uint64
	paths []string
}

// watchMask is what every directory watch asks for: fsnotify's default
// set plus IN_ONLYDIR (fail rather than watch a non-directory).
const watchMask = unix.IN_CREATE | unix.IN_MODIFY | unix.IN_ATTRIB |
	unix.IN_DELETE | unix.IN_DELETE_SELF | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_MOVE_SELF |
	unix.IN_ONLYDIR

// fileMask is what a file's own watch asks for: writes and truncations
// through any of its links (IN_MODIFY), and changes of its attributes,
// its link count among them (IN_ATTRIB). Its deletion (the last link
// removed, and the last descriptor closed) drops the watch (IN_IGNORED).
const fileMask = unix.IN_MODIFY | unix.IN_ATTRIB

// Supported reports whether this system has a notification backend the
// watcher is proven on: here, inotify.
const Supported = true

// readMaxWatches reads the per-user inotify watch limit, 0 if unknown.
func readMaxWatches() int {
	data, err := os.ReadFile("/proc/sys/fs/inotify/max_user_watches")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return n
}

// openWatchable opens the file at rel beneath r for AddFile: an O_PATH
// descriptor, which opens no device or FIFO and reads nothing.
func openWatchable(r *rooted.Root, rel string) (int, error) { return r.OpenPath(rel) }

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
		files:   make(map[int32]*fileWatch),
		byFile:  make(map[string]int32),
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

// AddFile watches the file open as fd (an O_PATH descriptor opened
// beneath the root, whose inode is ino) under the path abs, and reports
// whether the watch is new to the inode (fresh: no other path of the
// file was watched). A path that named another file watched on its own
// leaves that file's watch, which goes when it has no path left.
func (n *notifier) AddFile(fd int, abs string, ino uint64) (fresh bool, err error) {
	nfd, err := n.fd()
	if err != nil {
		return false, err
	}
	wd, err := unix.InotifyAddWatch(nfd, "/proc/self/fd/"+strconv.Itoa(fd), fileMask)
	if err != nil {
		return false, &os.PathError{Op: "inotify_add_watch", Path: abs, Err: err}
	}
	w := int32(wd)
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.byFile[abs]; ok {
		if old == w {
			return false, nil
		}
		n.dropFileLocked(nfd, abs, old)
	}
	fw := n.files[w]
	if fw == nil {
		fw = &fileWatch{ino: ino}
		n.files[w] = fw
		fresh = true
	}
	fw.paths = append(fw.paths, abs)
	n.byFile[abs] = w
	return fresh, nil
}

// AddLink names the file watched under known also abs (another link of
// it, found by its inode), and reports whether it could (known is
// watched).
func (n *notifier) AddLink(known, abs string) bool {
	fd, err := n.fd()
	if err != nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w, ok := n.byFile[known]
	if !ok {
		return false
	}
	if old, ok := n.byFile[abs]; ok {
		if old == w {
			return true
		}
		n.dropFileLocked(fd, abs, old)
	}
	n.files[w].paths = append(n.files[w].paths, abs)
	n.byFile[abs] = w
	return true
}

// RemoveFile drops the path abs from its file's watch, and the watch
// itself once it has no path left; it reports whether the watch went.
func (n *notifier) RemoveFile(abs string) (dropped bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w, ok := n.byFile[abs]
	if !ok {
		return false // the common case: every event-named file with one link
	}
	fd, err := n.fd()
	if err != nil {
		return false
	}
	return n.dropFileLocked(fd, abs, w)
}

// dropFileLocked removes abs from the file watch w, and w once it has no
// path left (reporting so). Caller holds mu.
func (n *notifier) dropFileLocked(fd int, abs string, w int32) bool {
	delete(n.byFile, abs)
	fw := n.files[w]
	fw.paths = slices.DeleteFunc(fw.paths, func(p string) bool { return p == abs })
	if len(fw.paths) > 0 {
		return false
	}
	delete(n.files, w)
	_, _ = unix.InotifyRmWatch(fd, uint32(w)) // EINVAL: the kernel dropped it first
	return true
}

// FileIno reports the inode of the file watched on its own under abs.
func (n *notifier) FileIno(abs string) (ino uint64, ok bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w, ok := n.byFile[abs]
	if !ok {
		return 0, false
	}
	return n.files[w].ino, true
}

// FilePaths returns every path of a file watched on its own.
func (n *notifier) FilePaths() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]string, 0, len(n.byFile))
	for p := range n.byFile {
		out = append(out, p)
	}
	return out
}

// FileWatches returns the number of files watched on their own (watches,
// not paths).
func (n *notifier) FileWatches() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.files)
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
	var evs []fsnotify.Event
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
		evs = n.events(evs[:0], raw.Wd, raw.Mask, name)
		for _, ev := range evs {
			select {
			case n.Events <- ev:
				n.sent++
			case <-n.closing:
				return false
			}
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

// events appends to dst the events one kernel event stands for: one for
// a directory's watch, one per path for a file's own watch, none for a
// watch no longer in the table, nor for IN_IGNORED, which drops the
// watch.
func (n *notifier) events(dst []fsnotify.Event, wd int32, mask uint32, name string) []fsnotify.Event {
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
	ignored := mask&unix.IN_IGNORED != 0
	n.mu.Lock()
	defer n.mu.Unlock()
	if dir, ok := n.byWd[wd]; ok {
		if ignored {
			delete(n.byWd, wd)
			if n.byPath[dir] == wd {
				delete(n.byPath, dir)
			}
			return dst
		}
		if op == 0 {
			return dst
		}
		path := dir
		if name != "" {
			path = dir + "/" + name
		}
		return append(dst, fsnotify.Event{Name: path, Op: op})
	}
	fw, ok := n.files[wd]
	if !ok {
		return dst
	}
	if ignored { // the file is gone: its last link removed and closed
		delete(n.files, wd)
		for _, p := range fw.paths {
			delete(n.byFile, p)
		}
		return dst
	}
	if op == 0 {
		return dst
	}
	for _, p := range fw.paths {
		dst = append(dst, fsnotify.Event{Name: p, Op: op})
	}
	return dst
}
