package client

// The development engine: how a client that is a development build of
// this module (go run ./cmd/indexctl, or go build ./cmd/indexctl, in a
// checkout) gets an engine of its own build, or says why it cannot.
//
// The checkout. It is the one the client was compiled from, whatever the
// current directory: the compiler records every source file's path in
// the executable (for stack traces), and this file's, less
// "/internal/client/devengine.go", is the module's directory. A -trimpath
// build records "github.com/indexd/indexd/internal/client/devengine.go"
// instead; then the checkout holding the current directory is tried.
// Either way the build is checked (below), so another checkout (another
// clone or worktree, other sources) never gives the engine.
//
// The build. The engine is built in the checkout by the go command on
// $PATH, with the settings the client's build recorded
// (debug.BuildInfo.Settings: -tags, -race, -gcflags, -ldflags,
// CGO_ENABLED, GOOS, GOARCH, GOAMD64, whether VCS information was
// stamped...), each given explicitly so that GOFLAGS and an environment
// other than the client's make no other build; into DIR/build (DIR is
// engine/KEY in the state directory, KEY a hash of the checkout's path).
// The same settings build the client again, and its Go build ID must be
// the running client's: then the checkout as it is, with this go command
// and these settings, makes this very client, and the engine built with
// it is of the client's build. A client that go run made (it has no
// DWARF, which go run leaves out: buildid.HasDWARF) is made again by
// "go run -exec 'go tool buildid'", which prints the ID of what go run
// would run; any other by go build, beside the engine. The engine so
// checked is linked to DIR/indexd, the engine clients run (a daemon
// running the one it replaces keeps its file).
//
// The check on every call. Which files the build reads is what
// "go list -deps" lists for the two programs: every Go, cgo, assembly,
// C, header, syso and embedded file of each package that is not the
// standard library's or in the module cache (which is read-only, and
// named by go.mod and go.sum), the files the package's build constraints
// leave out (an edit may take them in), the package's directory and the
// directory of each embedded file (a file added or removed changes
// them), each module's go.mod and go.sum, vendor/modules.txt, and go.work
// and go.work.sum in the checkout and each directory above it. Their
// state (inode, size, modification and change times, or absence) is
// recorded with the engine (the file DIR/stamp, below), and each call
// compares them and the client's build ID with the record: a few hundred
// stats, no go command and no directory read, when nothing changed.
// When something did, the client says what (or, on first use, that the
// engine is built for the first time and takes a while), and the go
// command, under a lock (DIR/lock), lists the inputs again and rebuilds;
// go build itself decides what to recompile, by content. A change made
// while the inputs are read may land in the same tick of the file
// system's clock as the state recorded: an input whose time is not
// before the check started is recorded as racy, and counts as changed
// at the next call, as git treats its index (Documentation/technical/
// racy-git.txt).
//
// A client the checkout does not make (one built before its sources
// changed, or by another go command, or with settings that cannot be
// given again, such as -trimpath's dropped -ldflags) keeps the engine
// that was built with it while it is there, and otherwise has none: the
// client then walks with an engine on $PATH, never started as the
// daemon, saying why (ErrNoOwnEngine). That verdict is recorded too
// (DIR/refused), with the go command and its environment, so the next
// call of the same client gives it without a build.
//
// Caveats: a header a cgo file includes from outside its package's
// directory is not an input the go command tracks, nor one this check
// does; and the environment is compared only when a client was refused
// (a change of CC, say, does not rebuild an engine, as it does not
// change a client either).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/privdir"
)

// ErrNoOwnEngine is matched (errors.Is) by the error of a client that
// can have no engine of its own build; the error says why. Such a client
// may walk with another engine but never starts it as the daemon.
var ErrNoOwnEngine = errors.New("client: no engine of this client's build")

// noOwnEngine is an error that says why a client has no engine of its
// own build; it matches ErrNoOwnEngine.
type noOwnEngine struct{ why string }

func (e *noOwnEngine) Error() string        { return e.why }
func (e *noOwnEngine) Is(target error) bool { return target == ErrNoOwnEngine }

func noOwn(format string, args ...any) error {
	return &noOwnEngine{fmt.Sprintf(format, args...)}
}

// devBuild is a development client's build: where and how its engine is
// built, and how to check that the two are of one build.
type devBuild struct {
	dir   string   // the checkout: the module's directory
	id    string   // the client's Go build ID
	flags []string // the go command's flags that build as the client was built
	env   []string // KEY=VALUE added to this process's environment for the go command
	// goRun reports whether go run made the client (go run makes it
	// again to check it); asked only when the engine is built.
	goRun func() bool
}

// thisDevBuild describes the running client when it is a development
// build of this module (built in a directory, not from the module
// cache); ok is false otherwise. err, matching ErrNoOwnEngine, says why
// the engine of its build cannot be had.
func thisDevBuild() (b devBuild, ok bool, err error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != modulePath || bi.Main.Sum != "" {
		return b, false, nil
	}
	if b.id = buildid.Self(); b.id == "" {
		return b, true, noOwn("this indexctl is a development build whose Go build ID cannot be read on %s, so no engine can be checked to be of its build", runtime.GOOS)
	}
	b.flags, b.env = buildSettings(bi.Settings)
	b.goRun = func() bool { return !buildid.HasDWARF(buildid.Executable()) && !ldflagsStrip(bi.Settings) }
	switch b.dir = compiledCheckout(); {
	case b.dir != "" && !modFileDeclares(filepath.Join(b.dir, "go.mod"), modulePath):
		return b, true, noOwn("the checkout this indexctl was built from, %s, is no longer there", b.dir)
	case b.dir == "":
		if b.dir = cwdCheckout(); b.dir == "" {
			return b, true, noOwn("this indexctl was built with -trimpath, which records no checkout, and the current directory is in no checkout of %s to build its engine from", modulePath)
		}
	}
	return b, true, nil
}

// compiledCheckout returns the directory of the module this file was
// compiled from, as the compiler recorded its path: "" when the path is
// not absolute (a -trimpath build).
func compiledCheckout() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	dir, found := strings.CutSuffix(filepath.ToSlash(file), "/internal/client/devengine.go")
	if !found || !filepath.IsAbs(dir) {
		return ""
	}
	return filepath.FromSlash(dir)
}

// cwdCheckout returns the root of the checkout of this module that holds
// the current directory ("" if none does).
func cwdCheckout() string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for d := wd; ; {
		if modFileDeclares(filepath.Join(d, "go.mod"), modulePath) {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return ""
		}
		d = parent
	}
}

// buildSettings returns the go command's flags, and the environment to
// add to this process's, that build as settings (debug.BuildInfo's) say
// a program was built: each flag setting ("-tags", "-race", "-ldflags"...)
// as that flag, each environment setting (CGO_ENABLED, GOOS, GOARCH,
// GOAMD64...) in the environment, -buildvcs as VCS information was
// stamped or not, and what a setting's absence means given explicitly
// (-race=false, -tags=, -pgo=off, GOEXPERIMENT=...), so that neither
// GOFLAGS nor this process's environment changes the build.
func buildSettings(settings []debug.BuildSetting) (flags, env []string) {
	recorded := map[string]bool{}
	vcs := false
	for _, s := range settings {
		recorded[s.Key] = true
		switch {
		case s.Key == "vcs":
			vcs = true
		case strings.HasPrefix(s.Key, "vcs."), s.Key == "DefaultGODEBUG", s.Key == "-buildmode" && s.Value == "exe":
			// vcs.*: what -buildvcs stamps; DefaultGODEBUG: go.mod's;
			// exe: what main packages build to by default (given, it
			// takes only one package).
		case strings.HasPrefix(s.Key, "-"):
			flags = append(flags, s.Key+"="+s.Value)
		default:
			env = append(env, s.Key+"="+s.Value)
		}
	}
	flags = append(flags, "-buildvcs="+strconv.FormatBool(vcs))
	for _, f := range []string{"-race", "-msan", "-asan", "-cover", "-trimpath"} {
		if !recorded[f] {
			flags = append(flags, f+"=false")
		}
	}
	for _, f := range []string{"-tags", "-gcflags", "-ldflags"} {
		if !recorded[f] {
			flags = append(flags, f+"=")
		}
	}
	if !recorded["-pgo"] {
		flags = append(flags, "-pgo=off")
	}
	if !recorded["GOEXPERIMENT"] {
		env = append(env, "GOEXPERIMENT=")
	}
	return flags, env
}

// ldflagsStrip reports whether the recorded -ldflags leave out the DWARF
// information (-w, -s), so that its absence does not tell a go run.
func ldflagsStrip(settings []debug.BuildSetting) bool {
	for _, s := range settings {
		if s.Key != "-ldflags" {
			continue
		}
		for _, f := range strings.Fields(s.Value) {
			f = strings.TrimLeft(f, "-")
			if f == "w" || f == "s" || strings.HasPrefix(f, "w=") || strings.HasPrefix(f, "s=") {
				return true
			}
		}
	}
	return false
}

// Files in an engine's directory (engine/KEY in the state directory).
const (
	stampFile   = "stamp"   // the engine's record: the client it was built with, its inputs
	refusedFile = "refused" // the last client found not to be what the checkout makes
	lockFile    = "lock"    // held while the engine is checked and built
	clockFile   = "clock"   // touched around a check of the inputs, for its time
	buildSubdir = "build"   // the go command's output, kept so it can tell what is current
)

// Headers of the record files.
const (
	stampHeader   = "indexd engine stamp 1"
	refusedHeader = "indexd engine refused 1"
)

// record is the content of DIR/stamp or DIR/refused:
//
//	indexd engine stamp 1        (or: indexd engine refused 1)
//	CLIENTS
//	EXTRA
//	STATE PATH
//	...
//
// CLIENTS are Go build IDs of clients, separated by spaces: in the stamp,
// the clients the engine DIR/indexd was found to be of one build with
// (the checkout made the client and an engine of this ID together; at
// most maxClients, the latest last); in refused, the last client the
// checkout was found not to make. EXTRA is, in the stamp, the engine's
// build ID; in refused, a digest of the go command and its environment
// when it was found (envDigest). Then one line for each input of the
// build (see the top of this file) as it was at that check, sorted by
// path: STATE is "-" for a path that did not exist, INO.SIZE.MTIME.CTIME
// (decimal, times in ns) for one that did, and the same prefixed with "?"
// for one that was racy (it never matches, so the next call checks again);
// PATH is absolute, quoted as strconv.Quote quotes. A file that does not
// parse is no record. For example:
//
//	indexd engine stamp 1
//	hXW1.../DrRr.../Fy9M.../Qm3b...
//	k7uY.../a8Rz.../Fy9M.../0dPn...
//	-  "/home/me/indexd/go.work"
//	21495835.1113.1764262570123456789.1764262570123456789 "/home/me/indexd/go.mod"
type record struct {
	clients []string
	extra   string
	inputs  []input
}

// maxClients bounds the clients a stamp lists: the builds of indexctl
// in use at once (a go run, a go build, the same with -race...).
const maxClients = 8

// input is one path the build reads and its state (see record).
type input struct {
	path, state string
}

// readRecord reads the record at path with the header; nil if there is
// none or it does not parse.
func readRecord(path, header string) *record {
	data, err := privdir.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(string(data), "\n")
	if len(lines) < 4 || lines[0] != header || lines[len(lines)-1] != "" {
		return nil
	}
	r := &record{clients: strings.Fields(lines[1]), extra: lines[2]}
	for _, l := range lines[3 : len(lines)-1] {
		state, quoted, ok := strings.Cut(l, " ")
		p, err := strconv.Unquote(quoted)
		if !ok || err != nil || state == "" {
			return nil
		}
		r.inputs = append(r.inputs, input{p, state})
	}
	return r
}

// write writes r to path with the header, through a temporary file
// renamed into place: a reader sees the old record or the new one.
func (r *record) write(path, header string) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%s\n%s\n", header, strings.Join(r.clients, " "), r.extra)
	for _, in := range r.inputs {
		fmt.Fprintf(&b, "%s %s\n", in.state, strconv.Quote(in.path))
	}
	tmp := path + ".tmp"
	if err := privdir.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// changed compares the inputs' states with the record's; it returns the
// first input whose state differs and how many do (0: none).
func (r *record) changed() (first input, n int) {
	var buf []byte
	for _, in := range r.inputs {
		buf, _, _ = appendState(buf[:0], in.path)
		if string(buf) != in.state {
			if n == 0 {
				first = in
			}
			n++
		}
	}
	return first, n
}

// appendState appends the state of path (see record) to b, and returns
// its modification and change times (0 for a path that does not exist).
func appendState(b []byte, path string) (_ []byte, mtime, ctime int64) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return append(b, '-'), 0, 0
	}
	mtime, ctime = st.Mtim.Nano(), st.Ctim.Nano()
	b = strconv.AppendUint(b, st.Ino, 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, st.Size, 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, mtime, 10)
	b = append(b, '.')
	return strconv.AppendInt(b, ctime, 10), mtime, ctime
}

// engineDir is the directory in the state directory of the engine built
// from the checkout dir.
func engineDir(dir string) string {
	h := fnv.New64a()
	h.Write([]byte(dir))
	return filepath.Join(daemonapi.DefaultStateDir(), "engine", strconv.FormatUint(h.Sum64(), 16))
}

// devEngine returns the path and build ID of the engine of b's build,
// built from its checkout into the state directory (see the top of this
// file): at once when the record says it is current, else after the go
// command has listed the inputs again and built and checked it. Notes
// (what is built and why, a wait for another client's build) go to
// note. An error matching ErrNoOwnEngine says why there is no engine of
// b's build; any other, why it could not be built (the go command's
// output included). Concurrent clients build it once: the build holds a
// lock on the directory.
func devEngine(b devBuild, note func(string)) (path, build string, err error) {
	dir := engineDir(b.dir)
	if err := privdir.Ensure(dir); err != nil {
		return "", "", fmt.Errorf("building the engine: %w", err)
	}
	path = filepath.Join(dir, EngineName)
	stampPath, refusedPath := filepath.Join(dir, stampFile), filepath.Join(dir, refusedFile)
	why, build, err := checkRecords(b, path, stampPath, refusedPath)
	if why == "" {
		return path, build, err
	}

	lock, err := privdir.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("building the engine: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); errors.Is(err, unix.EWOULDBLOCK) {
		note(fmt.Sprintf("waiting for another indexctl building the engine from %s", b.dir))
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX)
	}
	if err != nil {
		return "", "", fmt.Errorf("building the engine: %w", err)
	}
	// Another client may have built it while this one waited.
	if why, build, err = checkRecords(b, path, stampPath, refusedPath); why == "" {
		return path, build, err
	}
	goPath, err := exec.LookPath("go")
	if err != nil {
		return "", "", noOwn("the go command, which builds the engine from %s, is not on $PATH", b.dir)
	}
	note(why)
	return buildDevEngine(b, goPath, dir, note)
}

// Notes of devEngine, saying why it builds: a first build takes a while
// (every package of the engine compiled, the module cache filled).
const (
	whyFirst = "building the engine from %s (first use: compiling it may take a minute or so)"
	whyAgain = "building the engine from %s again: %s"
	whyBuild = "building the engine from %s for this build of indexctl (the engine there was built with another)"
)

// checkRecords compares b and the inputs with the records. why is "" when
// the engine at path is current (build is its ID) or b is known to have
// none (err); otherwise it says what is built and why.
func checkRecords(b devBuild, path, stampPath, refusedPath string) (why, build string, err error) {
	stamp := readRecord(stampPath, stampHeader)
	engine := isExecutable(path)
	var first input
	n := 0
	if stamp != nil && engine {
		if first, n = stamp.changed(); n == 0 && slices.Contains(stamp.clients, b.id) {
			if build = buildid.Of(path); build == stamp.extra {
				return "", build, nil
			}
		}
	}
	if refused := readRecord(refusedPath, refusedHeader); refused != nil && slices.Equal(refused.clients, []string{b.id}) {
		if _, m := refused.changed(); m == 0 {
			if goPath, err := exec.LookPath("go"); err == nil && refused.extra == envDigest(goPath) {
				return "", "", notMade(b)
			}
		}
	}
	switch {
	case stamp == nil && !engine:
		return fmt.Sprintf(whyFirst, b.dir), "", nil
	case stamp == nil:
		return fmt.Sprintf(whyAgain, b.dir, "no record of its last build"), "", nil
	case !engine:
		return fmt.Sprintf(whyAgain, b.dir, "it is gone"), "", nil
	case n > 0:
		return fmt.Sprintf(whyAgain, b.dir, describeChange(b.dir, first, n)), "", nil
	case slices.Contains(stamp.clients, b.id):
		return fmt.Sprintf(whyAgain, b.dir, "it was replaced"), "", nil
	}
	return fmt.Sprintf(whyBuild, b.dir), "", nil
}

// describeChange says which input changed, for a note.
func describeChange(dir string, first input, n int) string {
	name := first.path
	if rel, err := filepath.Rel(dir, name); err == nil && filepath.IsLocal(rel) {
		name = rel
	}
	verb := "changed"
	if strings.HasPrefix(first.state, "?") {
		verb = "changed as the engine was last built, or may have"
	}
	if n > 1 {
		return fmt.Sprintf("%s and %d more inputs %s", name, n-1, verb)
	}
	return name + " " + verb
}

// notMade is the error of a client its checkout does not make.
func notMade(b devBuild) error {
	return noOwn("this indexctl is not what %s builds now (its sources changed since it was built, or it was built by another go command or in another environment), and no engine built with it is left: build it again (go build ./cmd/indexctl) or use go run ./cmd/indexctl", b.dir)
}

// buildDevEngine lists the inputs, builds the engine and the client into
// dir/build with goPath, checks the client's build ID and installs the
// engine or refuses b (see devEngine). The caller holds the lock.
func buildDevEngine(b devBuild, goPath, dir string, note func(string)) (path, build string, err error) {
	path = filepath.Join(dir, EngineName)
	stampPath, refusedPath := filepath.Join(dir, stampFile), filepath.Join(dir, refusedFile)
	out := filepath.Join(dir, buildSubdir)
	if err := privdir.Ensure(out); err != nil {
		return "", "", fmt.Errorf("building the engine: %w", err)
	}
	run := func(args ...string) ([]byte, error) {
		cmd := exec.Command(goPath, args...)
		cmd.Dir = b.dir
		cmd.Env = append(os.Environ(), b.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		stdout, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("building the engine from %s: go %s: %v\n%s", b.dir, args[0], err, bytes.TrimSpace(stderr.Bytes()))
		}
		return stdout, nil
	}
	listed, err := run(slices.Concat([]string{"list", "-deps", "-json=" + listFields}, b.flags, []string{"./cmd/" + EngineName, "./cmd/indexctl"})...)
	if err != nil {
		return "", "", err
	}
	paths, err := inputPaths(b.dir, listed)
	if err != nil {
		return "", "", fmt.Errorf("building the engine from %s: go list: %w", b.dir, err)
	}
	now, err := snapshot(b.id, paths, fsClock(filepath.Join(dir, clockFile)))
	if err != nil {
		return "", "", fmt.Errorf("building the engine: %w", err)
	}

	goRun := b.goRun()
	pkgs := []string{"./cmd/" + EngineName}
	if !goRun {
		pkgs = append(pkgs, "./cmd/indexctl")
	}
	if _, err := run(slices.Concat([]string{"build"}, b.flags, []string{"-o", out + string(filepath.Separator)}, pkgs)...); err != nil {
		return "", "", err
	}
	built := filepath.Join(out, EngineName)
	build = buildid.Of(built)
	var made string // the ID of the client the checkout makes
	if goRun {
		ids, err := run(slices.Concat([]string{"run"}, b.flags, []string{"-exec", execQuote(goPath) + " tool buildid", "./cmd/indexctl"})...)
		if err != nil {
			return "", "", err
		}
		made = string(bytes.TrimSpace(ids))
	} else {
		made = buildid.Of(filepath.Join(out, "indexctl"))
	}

	stamp := readRecord(stampPath, stampHeader)
	switch {
	case made == b.id && build != "":
		if stamp != nil && stamp.extra == build && buildid.Of(path) == build {
			// The same engine: the clients found of its build stay.
			others := slices.DeleteFunc(stamp.clients, func(c string) bool { return c == b.id })
			now.clients = append(others[max(0, len(others)-maxClients+1):], b.id)
		} else {
			// No record while the engine is replaced: a client that
			// reads none waits for the lock, then reads the new one.
			if err := os.Remove(stampPath); err != nil && !errors.Is(err, os.ErrNotExist) {
				return "", "", fmt.Errorf("building the engine: %w", err)
			}
			if err := install(built, path); err != nil {
				return "", "", fmt.Errorf("building the engine: %w", err)
			}
		}
		now.extra = build
		if err := now.write(stampPath, stampHeader); err != nil {
			return "", "", fmt.Errorf("building the engine: %w", err)
		}
		return path, build, nil
	case stamp != nil && slices.Contains(stamp.clients, b.id) && buildid.Of(path) == stamp.extra:
		// The engine built with this client is still there: it stays,
		// for this client alone (another may be one the checkout makes,
		// whose engine is to be built again), now checked against these
		// inputs.
		note(fmt.Sprintf("the engine from %s stays the one built with this indexctl, which is not what %s builds now (its sources changed since it was built, or it was built by another go command or in another environment)", b.dir, b.dir))
		now.extra = stamp.extra
		if err := now.write(stampPath, stampHeader); err != nil {
			return "", "", fmt.Errorf("building the engine: %w", err)
		}
		return path, stamp.extra, nil
	}
	now.extra = envDigest(goPath)
	if err := now.write(refusedPath, refusedHeader); err != nil {
		return "", "", fmt.Errorf("building the engine: %w", err)
	}
	return "", "", notMade(b)
}

// execQuote quotes path for go run's -exec, which splits its value into
// words as a shell would, quotes aside.
func execQuote(path string) string {
	if !strings.ContainsAny(path, " \t\n'\"") {
		return path
	}
	if !strings.Contains(path, "'") {
		return "'" + path + "'"
	}
	return "go" // found on $PATH by the go command
}

// install puts the file built at src at dst: a hard link renamed into
// place (the go command replaces src, not rewrites it, when it builds
// again), else a copy.
func install(src, dst string) error {
	tmp := dst + ".new"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := os.Link(src, tmp); err != nil {
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		if err := privdir.WriteFile(tmp, data, 0o700); err != nil {
			return err
		}
	}
	return os.Rename(tmp, dst)
}

// snapshot records the state of paths for client. An input whose
// modification or change time is not before the snapshot began (as clock
// tells: the file system's, see fsClock) may have changed again within
// the same tick after it was read: it is recorded as racy. One whose time
// is after the snapshot ended is not: a clock set ahead, not a change
// made meanwhile, it would be racy at every build.
func snapshot(client string, paths []string, clock func() (int64, error)) (*record, error) {
	start, err := clock()
	if err != nil {
		return nil, err
	}
	r := &record{clients: []string{client}}
	var times [][2]int64
	for _, p := range paths {
		state, m, c := appendState(nil, p)
		r.inputs = append(r.inputs, input{p, string(state)})
		times = append(times, [2]int64{m, c})
	}
	end, err := clock()
	if err != nil {
		return nil, err
	}
	for i, t := range times {
		if (t[0] >= start || t[1] >= start) && t[0] <= end && t[1] <= end {
			r.inputs[i].state = "?" + r.inputs[i].state
		}
	}
	return r, nil
}

// fsClock returns the file system's clock: each call sets the
// modification time of the file at path (made if missing) to the current
// time, as the kernel gives it to the files it writes, and returns it.
func fsClock(path string) func() (int64, error) {
	return func() (int64, error) {
		if err := privdir.WriteFile(path, nil, 0o600); err != nil {
			return 0, err
		}
		if err := unix.UtimesNanoAt(unix.AT_FDCWD, path, []unix.Timespec{{Nsec: utimeNow}, {Nsec: utimeNow}}, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, err
		}
		var st unix.Stat_t
		if err := unix.Lstat(path, &st); err != nil {
			return 0, err
		}
		return st.Mtim.Nano(), nil
	}
}

// listFields are the fields inputPaths reads of go list -json.
const listFields = "Dir,Standard,Module,GoFiles,CgoFiles,CFiles,CXXFiles,MFiles,HFiles,FFiles,SFiles,SwigFiles,SwigCXXFiles,SysoFiles,EmbedFiles,IgnoredGoFiles,IgnoredOtherFiles"

// listedModule is a module as go list -json describes it.
type listedModule struct {
	Main    bool
	Version string
	GoMod   string
	Replace *listedModule
}

// listedPackage is a package as go list -json=listFields describes it.
type listedPackage struct {
	Dir      string
	Standard bool
	Module   *listedModule
	GoFiles, CgoFiles, CFiles, CXXFiles, MFiles, HFiles, FFiles, SFiles,
	SwigFiles, SwigCXXFiles, SysoFiles, EmbedFiles, IgnoredGoFiles, IgnoredOtherFiles []string
}

// inputPaths returns the paths whose state is recorded for the build in
// the checkout dir (see the top of this file), sorted, from the output of
// go list -deps -json=listFields.
func inputPaths(dir string, listed []byte) ([]string, error) {
	set := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(listed))
	for dec.More() {
		var p listedPackage
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		m := p.Module
		if m != nil && m.Replace != nil {
			m = m.Replace
		}
		if p.Standard || p.Dir == "" || m != nil && !m.Main && m.Version != "" {
			continue // the standard library, the module cache: read-only, named by go.mod and go.sum
		}
		if m != nil && m.GoMod != "" {
			set[m.GoMod] = true
			set[filepath.Join(filepath.Dir(m.GoMod), "go.sum")] = true
		}
		set[p.Dir] = true
		for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.MFiles, p.HFiles, p.FFiles, p.SFiles,
			p.SwigFiles, p.SwigCXXFiles, p.SysoFiles, p.EmbedFiles, p.IgnoredGoFiles, p.IgnoredOtherFiles} {
			for _, f := range files {
				set[filepath.Join(p.Dir, f)] = true
			}
		}
		for _, f := range p.EmbedFiles {
			set[filepath.Dir(filepath.Join(p.Dir, f))] = true
		}
	}
	set[filepath.Join(dir, "go.mod")] = true
	set[filepath.Join(dir, "go.sum")] = true
	set[filepath.Join(dir, "vendor", "modules.txt")] = true
	for d := dir; ; {
		set[filepath.Join(d, "go.work")] = true
		set[filepath.Join(d, "go.work.sum")] = true
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths, nil
}

// envDigest is a digest of what the go command at goPath builds with
// besides the inputs: itself (its path and state), the variables of the
// environment it reads (GO*, CGO_*, CC, CXX, PATH, HOME, XDG_CONFIG_HOME)
// and its configuration file (go env -w).
func envDigest(goPath string) string {
	h := fnv.New128a()
	state, _, _ := appendState(nil, goPath)
	fmt.Fprintf(h, "%s %s\n", goPath, state)
	env := os.Environ()
	slices.Sort(env)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GO") || strings.HasPrefix(k, "CGO_") || slices.Contains([]string{"CC", "CXX", "PATH", "HOME", "XDG_CONFIG_HOME"}, k) {
			fmt.Fprintf(h, "%s\n", kv)
		}
	}
	goenv := os.Getenv("GOENV")
	if goenv == "" {
		if d, err := os.UserConfigDir(); err == nil {
			goenv = filepath.Join(d, "go", "env")
		}
	}
	state, _, _ = appendState(nil, goenv)
	fmt.Fprintf(h, "%s %s\n", goenv, state)
	return fmt.Sprintf("%x", h.Sum(nil))
}

// modFileDeclares reports whether the go.mod file at path declares the
// module mod.
func modFileDeclares(path, mod string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && rest != line {
			name := strings.Trim(strings.TrimSpace(rest), `"`)
			return name == mod
		}
	}
	return false
}
