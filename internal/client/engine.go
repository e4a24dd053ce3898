package client

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/internal/buildid"
	"github.com/indexd/indexd/internal/daemonapi"
	"github.com/indexd/indexd/internal/privdir"
)

// EngineName is the engine binary's name (cmd/indexd): the daemon, the
// MCP server and the in-process walk, everything the query client does
// not link.
const EngineName = "indexd"

// modulePath is this module's path, which a checkout's go.mod declares.
const modulePath = "github.com/indexd/indexd"

// Engine is the engine binary a client runs: the daemon it starts, and
// the build a daemon must be of to answer it (its Go build ID, compared
// by ping). It is found once, on first use:
//
//  1. beside the running executable (go install ./cmd/..., go build -o
//     DIR ./cmd/..., a release archive): the pair is one build;
//  2. else, when this client is a development build of this module
//     (go run ./cmd/indexctl, go build ./cmd/indexctl) run inside a
//     checkout of it: built from that checkout with go build into the
//     state directory (engine/KEY/indexd, KEY a hash of the checkout's
//     path), and built again whenever a stamp of the checkout's Go
//     sources (their names, sizes and modification times, and this
//     client's build ID) changes, so a go run of changed sources is
//     answered by a daemon of those sources, whichever side they
//     changed; go build itself then decides what to recompile;
//  3. else on $PATH.
//
// A checkout comes before $PATH because an installed indexd is usually
// another build than the checkout's sources; beside the executable comes
// first because that pair was built together.
type Engine struct {
	find  func() (string, error)
	self  bool // the running executable: its ID is read from /proc/self/exe
	once  sync.Once
	path  string
	err   error
	build string
}

// SelfEngine is the running executable as the engine (the engine's own
// MCP server starts itself as the daemon).
func SelfEngine() *Engine {
	return &Engine{self: true, find: os.Executable}
}

// FindEngine is the engine of this client, found as Engine says; notes
// (that it is being built) go to stderr.
func FindEngine(note func(string)) *Engine {
	return &Engine{find: func() (string, error) { return findEngine(note) }}
}

// EngineFunc is the engine find returns, called once on first use (for
// tests, and for callers that find it themselves).
func EngineFunc(find func() (string, error)) *Engine {
	return &Engine{find: find}
}

func (e *Engine) resolve() {
	e.once.Do(func() {
		e.path, e.err = e.find()
		switch {
		case e.self:
			e.build = buildid.Self() // read even once the file was replaced
		case e.err == nil:
			e.build = buildid.Of(e.path)
		}
	})
}

// Path returns the engine's path, or why none was found.
func (e *Engine) Path() (string, error) {
	e.resolve()
	return e.path, e.err
}

// Build returns the engine's Go build ID: "" if none was found or its ID
// cannot be read (then any daemon answers).
func (e *Engine) Build() string {
	e.resolve()
	return e.build
}

// findEngine finds or builds the engine (see Engine).
func findEngine(note func(string)) (string, error) {
	self, err := os.Executable()
	if err == nil {
		if p := filepath.Join(filepath.Dir(self), EngineName); isExecutable(p) {
			return p, nil
		}
	}
	if mod := checkout(); mod != "" {
		return devEngine(mod, note)
	}
	if p, err := exec.LookPath(EngineName); err == nil {
		return filepath.Abs(p)
	}
	where := "beside " + self
	if self == "" {
		where = "beside this program"
	}
	return "", fmt.Errorf("the engine %s was not found (%s or on $PATH): install both with 'go install %s/cmd/...'", EngineName, where, modulePath)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// checkout returns the root of the checkout of this module that holds the
// current directory, when this client is a development build of the
// module ("" otherwise).
func checkout() string {
	// Built from a directory of this module, not from the module cache
	// (go install ...@version records the module's checksum).
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Path != modulePath || bi.Main.Sum != "" {
		return ""
	}
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

// devEngine returns the engine built from the checkout mod into the state
// directory, building it first when the checkout's stamp changed (see
// Engine). Concurrent clients build it once: the build holds a lock on
// its directory.
func devEngine(mod string, note func(string)) (string, error) {
	h := fnv.New64a()
	h.Write([]byte(mod))
	dir := filepath.Join(daemonapi.DefaultStateDir(), "engine", strconv.FormatUint(h.Sum64(), 16))
	if err := privdir.Ensure(dir); err != nil {
		return "", fmt.Errorf("building the engine: %w", err)
	}
	path := filepath.Join(dir, EngineName)
	stampPath := filepath.Join(dir, "stamp")
	stamp, err := sourceStamp(mod)
	if err != nil {
		return "", fmt.Errorf("building the engine: %w", err)
	}
	current := func() bool {
		old, err := privdir.ReadFile(stampPath)
		return err == nil && bytes.Equal(old, stamp) && isExecutable(path)
	}
	if current() {
		return path, nil
	}
	lock, err := privdir.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return "", fmt.Errorf("building the engine: %w", err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", fmt.Errorf("building the engine: %w", err)
	}
	if current() { // another client built it while this one waited
		return path, nil
	}
	if note != nil {
		note(fmt.Sprintf("building the engine from %s, where its sources changed (go build -o %s ./cmd/%s)", mod, path, EngineName))
	}
	cmd := exec.Command("go", "build", "-o", path, "./cmd/"+EngineName)
	cmd.Dir = mod
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the engine from %s: %v\n%s", mod, err, bytes.TrimSpace(out))
	}
	if err := privdir.WriteFile(stampPath, stamp, 0o600); err != nil {
		return "", fmt.Errorf("building the engine: %w", err)
	}
	return path, nil
}

// sourceStamp describes the checkout's build inputs as this client can
// see them cheaply: this client's build ID, then the name, size and
// modification time of every go.mod, go.sum and non-test Go file outside
// hidden and testdata directories, hashed. A change of any of them
// changes the stamp.
func sourceStamp(mod string) ([]byte, error) {
	h := fnv.New128a()
	fmt.Fprintf(h, "%s\n", buildid.Self())
	err := filepath.WalkDir(mod, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == mod {
				return err
			}
			return nil // a directory that vanished or cannot be read holds nothing the build reads either
		}
		name := d.Name()
		if d.IsDir() {
			if p != mod && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !(name == "go.mod" || name == "go.sum" || strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		fmt.Fprintf(h, "%s %d %d\n", p, fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return []byte(fmt.Sprintf("%x\n", h.Sum(nil))), nil
}
