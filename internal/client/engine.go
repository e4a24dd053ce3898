package client

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	"github.com/indexd/indexd/internal/buildid"
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
//     (go run ./cmd/indexctl, go build ./cmd/indexctl): built from the
//     checkout the client was built from, with the client's build
//     settings, into the state directory (engine/KEY/indexd, KEY a hash
//     of the checkout's path), and checked to be of the client's build:
//     the same go command and settings make the client again, and its
//     build ID must be this one's. It is built again whenever one of its
//     inputs changes (any file the go command reads to build either
//     program) or another client runs it. See devengine.go. When no
//     engine of the client's build can be had (a client built before its
//     sources changed, or with -trimpath away from its checkout, or with
//     no go command), an engine on $PATH, of another build, may walk for
//     it but is never started as the daemon, and the error says why
//     (ErrNoOwnEngine);
//  3. else on $PATH.
//
// A checkout comes before $PATH because an installed indexd is usually
// another build than the checkout's sources; beside the executable comes
// first because that pair was built together.
type Engine struct {
	find  func() (found, error)
	once  sync.Once
	found found
	err   error
}

// found is an engine that was found.
type found struct {
	path  string
	build string // its Go build ID ("" if it cannot be read)
	// other, when set, says why the engine at path is not of this
	// client's build: it may walk, never serve as the daemon.
	other error
}

// SelfEngine is the running executable as the engine (the engine's own
// MCP server starts itself as the daemon).
func SelfEngine() *Engine {
	return &Engine{find: func() (found, error) {
		p, err := os.Executable()
		return found{path: p, build: buildid.Self()}, err // read even once the file was replaced
	}}
}

// FindEngine is the engine of this client, found as Engine says; notes
// (that it is being built, and why) go to note.
func FindEngine(note func(string)) *Engine {
	return &Engine{find: func() (found, error) { return findEngine(note) }}
}

// EngineFunc is the engine find returns, called once on first use (for
// tests, and for callers that find it themselves).
func EngineFunc(find func() (string, error)) *Engine {
	return &Engine{find: func() (found, error) {
		p, err := find()
		if err != nil {
			return found{}, err
		}
		return found{path: p, build: buildid.Of(p)}, nil
	}}
}

func (e *Engine) resolve() {
	e.once.Do(func() { e.found, e.err = e.find() })
}

// Path returns the path of the engine of this client's build, or why
// there is none (an error matching ErrNoOwnEngine when only an engine of
// another build can walk for it: see WalkPath).
func (e *Engine) Path() (string, error) {
	e.resolve()
	switch {
	case e.err != nil:
		return "", e.err
	case e.found.other != nil:
		return "", e.found.other
	}
	return e.found.path, nil
}

// WalkPath returns the path of an engine to walk with, once, in a child
// process: the engine of this client's build, else one of another build
// (other says why it is not this client's), else why there is none.
func (e *Engine) WalkPath() (path string, other, err error) {
	e.resolve()
	return e.found.path, e.found.other, e.err
}

// Build returns the Go build ID of the engine of this client's build: ""
// if there is none (then no daemon may answer: see Daemon.Connect) or its
// ID cannot be read (then any daemon answers).
func (e *Engine) Build() string {
	e.resolve()
	if e.err != nil || e.found.other != nil {
		return ""
	}
	return e.found.build
}

// findEngine finds or builds the engine (see Engine).
func findEngine(note func(string)) (found, error) {
	self, err := os.Executable()
	if err == nil {
		if p := filepath.Join(filepath.Dir(self), EngineName); isExecutable(p) {
			return found{path: p, build: buildid.Of(p)}, nil
		}
	}
	if b, ok, why := thisDevBuild(); ok {
		if why == nil {
			p, build, err := devEngine(b, note)
			if !errors.Is(err, ErrNoOwnEngine) {
				return found{path: p, build: build}, err
			}
			why = err
		}
		if p, err := exec.LookPath(EngineName); err == nil {
			if p, err := filepath.Abs(p); err == nil {
				return found{path: p, build: buildid.Of(p), other: fmt.Errorf("%w; %s, on $PATH, is of another build: it walks, and is not started as the daemon", why, p)}, nil
			}
		}
		return found{}, fmt.Errorf("%w; there is no other engine on $PATH to walk with", why)
	}
	if p, err := exec.LookPath(EngineName); err == nil {
		p, err := filepath.Abs(p)
		return found{path: p, build: buildid.Of(p)}, err
	}
	where := "beside " + self
	if self == "" {
		where = "beside this program"
	}
	return found{}, fmt.Errorf("the engine %s was not found (%s or on $PATH): install both with 'go install %s/cmd/...'", EngineName, where, modulePath)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
