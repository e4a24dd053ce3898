package daemon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/clock"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/privdir"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/rpc/server"
	"github.com/indexd/indexd/watch"
)

// DefaultMaxRoots is Config.MaxRoots's default.
const DefaultMaxRoots = 64

// DBName returns the name of root's index DB in the state directory: the
// first 16 hex digits of the SHA-256 of the real root path, then ".db".
func DBName(root string) string {
	sum := sha256.Sum256([]byte(root))
	return hex.EncodeToString(sum[:])[:16] + ".db"
}

// Config configures Run. The zero value of each field selects its
// default.
type Config struct {
	// SocketPath is where the daemon listens. Default:
	// rpc.DefaultSocketPath().
	SocketPath string
	// StateDir holds one index DB per root (DBName) and the log. Default:
	// daemonapi.DefaultStateDir().
	StateDir string
	// IdleExit stops the daemon once it has had no request for this long
	// and no root is building. 0: never.
	IdleExit time.Duration
	// MaxRoots bounds the roots served at once; a query for one more is
	// an error until a root is forgotten. Default DefaultMaxRoots.
	MaxRoots int
	// MaxMemory bounds the daemon's heap, in bytes: no new root is added
	// while more than this is in use (the query or index call says so,
	// and what to do). Foreground also makes it the garbage collector's
	// soft limit. Default daemonapi.DefaultMaxMemory.
	MaxMemory int64
	// Logger receives the daemon's log. Default: text lines appended to
	// daemonapi.LogName in StateDir.
	Logger *slog.Logger
	// Version is reported by status.
	Version string
	// Build identifies the daemon's build (buildid.Self by default):
	// ping refuses a client of another build, which then replaces this
	// daemon with one of its own (see rpc.PingParams).
	Build string
	// NewFreshener keeps each ready index current. Default WatchFreshener.
	NewFreshener FreshenerFunc
	// NoWatcher serves every root without a watcher, and so without an
	// index, which nothing could keep current: each root is unwatched
	// (rpc.StateUnwatched) from the start, Glob and Grep walk for every
	// query and say so (fallback_reason no_watcher), answers carry no
	// clock, and Changes and changed_since answer fresh_instance. It is
	// set wherever package watch has no backend (watch.Supported is
	// false: every system but Linux); on Linux it is a choice (tests).
	NoWatcher bool
	// MaxAnswerBytes bounds the memory of the answers the daemon builds
	// and queues, over all connections, and MaxConnAnswerBytes one
	// connection's (the reply budget: rpc/server's MaxReplyBytes and
	// MaxConnReplyBytes). Defaults rpc.DefaultMaxReplyBytes (128 MiB)
	// and rpc.DefaultMaxConnReplyBytes (16 MiB).
	MaxAnswerBytes     int
	MaxConnAnswerBytes int
	// TuneCollector lets the daemon set the process's GOGC from its live
	// heap as each root becomes ready (collectorPercent), unless GOGC is
	// in the environment. Foreground sets it: the setting is the whole
	// process's.
	TuneCollector bool

	hooks *testHooks // set by this package's tests only
	// clock times the idle exit and first contact's wait (clock.Real; a
	// clock.Fake in this package's tests).
	clock clock.Clock
	// catchUpByFreshener: the Freshener's initial reconcile (the default
	// WatchFreshener's, whose walk also sets its watches) catches a
	// reopened index up with the tree, so index.OpenOrBuild need not walk
	// it too.
	catchUpByFreshener bool
}

// testHooks are seams for this package's tests.
type testHooks struct {
	// beforeOpen is called by the workspace goroutine at the start of
	// each build attempt; an error fails the attempt.
	beforeOpen func(ctx context.Context, root string) error
	// progress is called after each build progress report.
	progress func(ctx context.Context, p index.Progress)
	// server is called with the daemon's server before it serves.
	server func(*server.Server)
	// unlimited is called with 1 when an unlimited answer starts (its
	// connection's turn taken) and -1 when it ends.
	unlimited func(delta int)
	// answered is called with each tool call's envelope as its handler
	// returns it.
	answered func(tool string, env *envelope.Envelope)
	// blocks change the daemon's block cache (NewBlockCacheWith).
	blocks index.BlockCacheOptions
}

func (c Config) withDefaults() Config {
	if c.SocketPath == "" {
		c.SocketPath = rpc.DefaultSocketPath()
	}
	if c.StateDir == "" {
		c.StateDir = daemonapi.DefaultStateDir()
	}
	if c.Build == "" {
		c.Build = buildid.Self()
	}
	if abs, err := filepath.Abs(c.StateDir); err == nil {
		c.StateDir = abs
	}
	if c.MaxRoots <= 0 {
		c.MaxRoots = DefaultMaxRoots
	}
	if c.MaxMemory <= 0 {
		c.MaxMemory = daemonapi.DefaultMaxMemory
	}
	if c.MaxAnswerBytes <= 0 {
		c.MaxAnswerBytes = rpc.DefaultMaxReplyBytes
	}
	if c.MaxConnAnswerBytes <= 0 {
		c.MaxConnAnswerBytes = rpc.DefaultMaxConnReplyBytes
	}
	if c.NewFreshener == nil {
		c.NewFreshener = WatchFreshener
		c.catchUpByFreshener = true
	}
	if !watch.Supported {
		c.NoWatcher = true
	}
	c.clock = clock.Or(c.clock)
	return c
}

// Foreground runs the daemon until SIGINT or SIGTERM (which stop it like
// the shutdown method) or until it stops on its own: what `indexd` (and
// `indexctl daemon`, which becomes it) does.
func Foreground(cfg Config) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	debug.SetMemoryLimit(cfg.withDefaults().MaxMemory) // the whole process is the daemon
	cfg.TuneCollector = true
	return Run(ctx, cfg)
}

// Run is the daemon: it takes the socket (returning nil at once if
// another daemon holds it), serves the protocol until ctx is cancelled,
// the shutdown method is called or the idle timeout passes, then drains
// the requests in flight, stops every root's goroutine, closes the index
// DBs and removes the socket. It returns once everything it started has
// ended.
func Run(ctx context.Context, cfg Config) error {
	cfg = cfg.withDefaults()
	if err := daemonapi.EnsureStateDir(cfg.StateDir); err != nil {
		return err
	}
	log := cfg.Logger
	if log == nil {
		f, err := daemonapi.OpenLog(cfg.StateDir)
		if err != nil {
			return err
		}
		defer f.Close()
		log = slog.New(slog.NewTextHandler(f, nil))
	}
	ln, unlock, err := server.Listen(cfg.SocketPath)
	if errors.Is(err, rpc.ErrAlreadyRunning) {
		log.Info("not starting: another daemon serves the socket", "socket", cfg.SocketPath, "err", err)
		return nil
	}
	if err != nil {
		log.Error("cannot listen", "socket", cfg.SocketPath, "err", err)
		return err
	}
	defer unlock() // last: the next daemon may start once this one is gone

	// The daemon's own directories are never indexed, watched or listed, even
	// under a root it serves (docs/product.md, "The root is the boundary").
	ignore.SetPrivate(cfg.StateDir, filepath.Dir(cfg.SocketPath))
	defer ignore.SetPrivate()

	if cfg.NoWatcher {
		log.Warn("no file watcher: roots are not indexed, every query walks (fallback_reason no_watcher)", "os", runtime.GOOS, "watcher_supported", watch.Supported)
	}
	d := newDaemon(ctx, cfg, log)
	srv := &server.Server{
		Handler:           d,
		Logf:              func(format string, args ...any) { log.Warn(fmt.Sprintf(format, args...)) },
		MaxReplyBytes:     cfg.MaxAnswerBytes,
		MaxConnReplyBytes: cfg.MaxConnAnswerBytes,
	}
	d.srv = srv
	if cfg.hooks != nil && cfg.hooks.server != nil {
		cfg.hooks.server(srv)
	}
	var wg sync.WaitGroup
	if cfg.IdleExit > 0 {
		wg.Go(d.idleExit)
	}
	ticker := time.NewTicker(returnEvery)
	defer ticker.Stop()
	wg.Go(func() { d.returner.run(d.ctx, ticker.C) })
	d.reopenRoots()
	log.Info("serving", "socket", cfg.SocketPath, "pid", os.Getpid(), "version", cfg.Version, "state_dir", cfg.StateDir)
	err = srv.Serve(d.ctx, ln) // closes ln, which removes the socket
	d.stop()
	wg.Wait()
	d.closeAll()
	d.blocks.Close()
	if err != nil {
		log.Error("stopped", "err", err)
	} else {
		log.Info("stopped", "queries", d.queries.Load())
	}
	return err
}

// daemon is one running daemon's state.
type daemon struct {
	cfg     Config
	log     *slog.Logger
	methods rpc.Methods
	started time.Time
	// instance identifies this daemon instance in clock tokens (package
	// journal): a token of another instance answers fresh_instance.
	instance uint64

	// ctx ends when the daemon starts stopping; every workspace's context
	// is its child.
	ctx  context.Context
	stop context.CancelFunc

	queries    atomic.Int64 // tool queries answered
	inflight   atomic.Int64 // requests being handled
	lastActive atomic.Int64 // when a request last began or ended (UnixNano, cfg.clock)

	// blocks keeps the block filters of the large files Grep reads, for
	// every root (index.BlockCache; it holds memory only).
	blocks *index.BlockCache

	// srv is the protocol's server (its reply budget's figures, for
	// status); set before it serves.
	srv *server.Server
	// returner hands the heap back after a burst; its goroutine is
	// Run's.
	returner *heapReturner

	mu         sync.Mutex               // guards the fields below
	roots      map[string]*workspace    // by real root
	forgetting map[string]chan struct{} // roots being forgotten: closed when done
	closed     bool                     // stopping: no new roots
}

// blockOptions are the options of the daemon's block cache: none but in
// this package's tests.
func (c Config) blockOptions() index.BlockCacheOptions {
	if c.hooks == nil {
		return index.BlockCacheOptions{}
	}
	return c.hooks.blocks
}

func newDaemon(ctx context.Context, cfg Config, log *slog.Logger) *daemon {
	d := &daemon{
		cfg:        cfg,
		log:        log,
		started:    time.Now(),
		instance:   journal.NewInstance(),
		roots:      make(map[string]*workspace),
		forgetting: make(map[string]chan struct{}),
		blocks:     index.NewBlockCacheWith(index.DefaultBlockCacheBytes, cfg.blockOptions()),
	}
	d.ctx, d.stop = context.WithCancel(ctx)
	d.touch()
	d.returner = &heapReturner{read: readHeap, free: debug.FreeOSMemory, quiet: func() time.Duration {
		// A build keeps the pages it frees for its next allocations
		// (index's pacer) and hands them back itself once done.
		if d.inflight.Load() != 0 || d.building() {
			return 0
		}
		return d.cfg.clock.Now().Sub(time.Unix(0, d.lastActive.Load()))
	}}
	d.methods = rpc.Methods{
		rpc.MethodPing:     d.ping,
		rpc.MethodStatus:   d.status,
		rpc.MethodIndex:    d.index,
		rpc.MethodForget:   d.forget,
		rpc.MethodShutdown: d.shutdown,
	}
	for _, s := range query.ToolSpecs() {
		d.methods[s.Method] = d.tool(s)
	}
	return d
}

// Handle answers one request, recording activity for the idle exit.
func (d *daemon) Handle(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	d.inflight.Add(1)
	d.touch()
	defer func() {
		d.touch()
		d.inflight.Add(-1)
	}()
	return d.methods.Handle(ctx, method, params)
}

func (d *daemon) touch() { d.lastActive.Store(d.cfg.clock.Now().UnixNano()) }

func (d *daemon) dbPath(root string) string { return filepath.Join(d.cfg.StateDir, DBName(root)) }

// Registry errors.
var (
	errTooManyRoots = errors.New("daemon: too many roots")
	errMemoryLimit  = errors.New("daemon: memory limit reached")
	errStopping     = errors.New("daemon: stopping")
)

// get returns the workspace of the real root, adding it (and starting its
// build) if it is new. Before refusing a new root for the MaxRoots limit,
// it drops the roots whose directory is gone (dropGone).
func (d *daemon) get(ctx context.Context, root string) (*workspace, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	pruned := false
	for {
		if d.closed {
			return nil, errStopping
		}
		if w := d.roots[root]; w != nil {
			return w, nil
		}
		if done := d.forgetting[root]; done != nil {
			// Being forgotten: its DB is about to go. Add it afresh after.
			d.mu.Unlock()
			select {
			case <-done:
			case <-ctx.Done():
			}
			d.mu.Lock()
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			continue
		}
		if len(d.roots) < d.cfg.MaxRoots {
			break
		}
		if pruned {
			return nil, errTooManyRoots
		}
		// Vanished roots do not count: drop them, then look again.
		d.mu.Unlock()
		d.dropGone()
		d.mu.Lock()
		pruned = true
	}
	if heapInUse() > d.cfg.MaxMemory {
		return nil, errMemoryLimit
	}
	w := newWorkspace(d, root)
	d.roots[root] = w
	d.saveRootsLocked()
	w.mu.Lock()
	w.startLocked()
	w.mu.Unlock()
	d.log.Info("root added", "root", root, "db", w.db)
	return w, nil
}

// gone reports whether root, a real root path, is no longer a directory:
// it does not exist, or something else (a file, a symbolic link) has
// taken its place. Any other error (a permission denied) is not taken
// as gone.
func gone(root string) bool {
	fi, err := os.Lstat(root)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
	}
	return !fi.IsDir()
}

// dropGone drops every served root whose directory is gone, as forget
// does: its goroutine is stopped (closing its index and watcher), it
// leaves the registry and RootsName, and its DB is deleted (nothing
// would ever reopen it: a directory made again at the same path is
// indexed afresh). It is called on status, when a query's root does not
// exist, and before a new root is refused for the MaxRoots limit. It
// returns how many roots it dropped.
func (d *daemon) dropGone() int {
	d.mu.Lock()
	var vanished []string
	for root := range d.roots {
		if gone(root) {
			vanished = append(vanished, root)
		}
	}
	d.mu.Unlock()
	n := 0
	for _, root := range vanished {
		dropped, err := d.drop(root)
		if err != nil {
			d.log.Warn("dropping a root that is gone", "root", root, "err", err)
		}
		if dropped {
			d.log.Info("dropped a root that is gone", "root", root)
			n++
		}
	}
	return n
}

// RootsName is the file in the state directory that lists the roots
// served, so that a restarted daemon reopens (and re-validates by stat)
// each one in the background without waiting for its first query.
const RootsName = "roots.json"

// saveRootsLocked writes the list of roots, atomically (temp file and
// rename). Caller holds d.mu. A failure is logged: the list is a
// convenience, each root is re-added on its next query anyway.
func (d *daemon) saveRootsLocked() {
	roots := make([]string, 0, len(d.roots))
	for r := range d.roots {
		roots = append(roots, r)
	}
	slices.Sort(roots)
	data, _ := json.Marshal(roots)
	path := filepath.Join(d.cfg.StateDir, RootsName)
	tmp := path + ".tmp"
	os.Remove(tmp) // whatever is there, a link included: written afresh, never through
	if err := privdir.WriteFile(tmp, data, 0o600); err != nil {
		d.log.Warn("cannot save the list of roots", "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		d.log.Warn("cannot save the list of roots", "err", err)
	}
}

// reopenRoots re-adds the roots a previous daemon served that still exist;
// each reopens its index in the background.
func (d *daemon) reopenRoots() {
	data, err := privdir.ReadFile(filepath.Join(d.cfg.StateDir, RootsName))
	if err != nil {
		return
	}
	var roots []string
	if err := json.Unmarshal(data, &roots); err != nil {
		d.log.Warn("ignoring a corrupt list of roots", "err", err)
		return
	}
	for _, r := range roots {
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			d.log.Info("not reopening a root that is gone", "root", r)
			continue
		}
		if _, err := d.get(d.ctx, r); err != nil {
			d.log.Warn("cannot reopen a root", "root", r, "err", err)
		}
	}
}

// memory returns the daemon's memory for status.
func (d *daemon) memory() *rpc.MemoryStatus {
	m := &rpc.MemoryStatus{
		RSSBytes:          residentBytes(),
		HeapBytes:         heapInUse(),
		AnswerBudgetBytes: int64(d.cfg.MaxAnswerBytes),
		HeapReturns:       d.returner.returned.Load(),
	}
	if d.srv != nil {
		st := d.srv.Stats()
		m.AnswerBytes = st.ReplyBytes + st.ReservedBytes
		m.AnswerPeakBytes = st.PeakUsedBytes
		m.AnswersCut = st.ReservationsRefused
		m.ClientsDropped = st.Evicted
	}
	return m
}

// residentBytes returns the process's resident set (VmRSS in
// /proc/self/status), 0 where it cannot be read.
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(rest, "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// heapInUse returns the bytes of heap the daemon holds.
func heapInUse() int64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// memoryLimitMessage says that the memory limit stops a new root and what
// to do about it.
func (d *daemon) memoryLimitMessage() string {
	return fmt.Sprintf("The daemon's memory limit is reached (%d MB in use, limit %d MB): no new root can be indexed. Forget one with 'indexctl forget ROOT', or restart the daemon with a larger --max-memory.",
		heapInUse()>>20, d.cfg.MaxMemory>>20)
}

// drop forgets root: its goroutine is stopped (closing its index) and its
// DB deleted. It reports whether there was anything to forget.
func (d *daemon) drop(root string) (bool, error) {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return false, errStopping
	}
	for d.forgetting[root] != nil {
		done := d.forgetting[root]
		d.mu.Unlock()
		<-done
		d.mu.Lock()
	}
	w := d.roots[root]
	delete(d.roots, root)
	d.saveRootsLocked()
	done := make(chan struct{})
	d.forgetting[root] = done
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.forgetting, root)
		close(done)
		d.mu.Unlock()
	}()

	if w != nil {
		w.close()
	}
	err := os.Remove(d.dbPath(root))
	if err == nil || errors.Is(err, os.ErrNotExist) {
		// The base postings file beside it, and anything a crash left.
		if rerr := index.RemoveDB(d.dbPath(root)); rerr != nil {
			d.log.Warn("removing the files of a forgotten index", "root", root, "err", rerr)
		}
	}
	switch {
	case err == nil:
		d.log.Info("root forgotten", "root", root)
		return true, nil
	case errors.Is(err, os.ErrNotExist):
		if w != nil {
			d.log.Info("root forgotten", "root", root)
		}
		return w != nil, nil
	}
	return w != nil, fmt.Errorf("daemon: removing the index of %s: %w", root, err)
}

// closeAll stops every workspace and waits for them, after the server has
// stopped (no query uses them any more).
func (d *daemon) closeAll() {
	d.mu.Lock()
	d.closed = true
	ws := make([]*workspace, 0, len(d.roots))
	for _, w := range d.roots {
		ws = append(ws, w)
	}
	d.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
	for _, w := range ws {
		w.wg.Wait()
	}
}

// building reports whether a root is building.
func (d *daemon) building() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, w := range d.roots {
		w.mu.Lock()
		b := w.state == rpc.StateBuilding
		w.mu.Unlock()
		if b {
			return true
		}
	}
	return false
}

// idleExit stops the daemon once it has been idle for cfg.IdleExit: no
// request in flight or begun since, and no root building.
func (d *daemon) idleExit() {
	limit := d.cfg.IdleExit
	t := d.cfg.clock.NewTimer(limit)
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C():
		}
		idle := time.Duration(d.cfg.clock.Now().UnixNano() - d.lastActive.Load())
		if idle >= limit && d.inflight.Load() == 0 && !d.building() {
			d.log.Info("idle: stopping", "idle", idle.Round(time.Second))
			d.stop()
			return
		}
		t.Reset(max(limit-idle, limit/10, time.Millisecond))
	}
}

// snapshot reports the daemon and its roots (only the root only, if it
// is not "").
func (d *daemon) snapshot(only string) rpc.Status {
	d.mu.Lock()
	ws := make([]*workspace, 0, len(d.roots))
	for root, w := range d.roots {
		if only == "" || root == only {
			ws = append(ws, w)
		}
	}
	d.mu.Unlock()
	st := rpc.Status{
		PID:      os.Getpid(),
		UptimeMS: time.Since(d.started).Milliseconds(),
		Version:  d.cfg.Version,
		Build:    d.cfg.Build,
		Socket:   d.cfg.SocketPath,
		StateDir: d.cfg.StateDir,
		Queries:  d.queries.Load(),
		Roots:    make([]rpc.RootStatus, 0, len(ws)),
		Memory:   d.memory(),
	}
	for _, w := range ws {
		st.Roots = append(st.Roots, w.status())
	}
	slices.SortFunc(st.Roots, func(a, b rpc.RootStatus) int { return strings.Compare(a.Root, b.Root) })
	return st
}
