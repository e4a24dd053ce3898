package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/tree"
)

// request is one tool call. Root, Cwd and Args are the params of the
// daemon protocol's glob/grep/ls methods (SPEC §10); Tool picks the method.
type request struct {
	Tool string          `json:"-"`    // query.ToolGlob, ToolGrep or ToolLS
	Root string          `json:"root"` // absolute workspace root
	Cwd  string          `json:"cwd"`  // working directory relative to Root, "." at the root
	Args json.RawMessage `json:"args"` // the tool's arguments
}

// runner answers tool calls. It returns the response envelope as JSON, so
// every runner's answer is printed the same way. An error means there is no
// envelope at all (the workspace could not be opened, a daemon could not be
// reached); a failed tool call is an error envelope, not an error.
type runner interface {
	query(ctx context.Context, req request) (json.RawMessage, error)
}

// newRunner picks how queries are answered. Answering in this process is
// the only mode for now; when the daemon exists, its client is returned
// here unless --direct was given.
func newRunner(*globals) runner { return inProcess{} }

// inProcess answers a query in this process from the live tree, with no
// daemon and no index (--direct).
type inProcess struct{}

func (inProcess) query(ctx context.Context, req request) (json.RawMessage, error) {
	ws, err := query.NewWorkspace(req.Root)
	if err != nil {
		return nil, err
	}
	return json.Marshal(query.NewDirect(ws).Run(ctx, req.Tool, req.Cwd, req.Args))
}

// place is where a query runs.
type place struct {
	root string // absolute and clean, as given (symlinks not resolved)
	cwd  string // the current directory relative to the root, "." when outside it
}

// locate finds the workspace root and the current directory within it.
// The root is rootFlag (relative to the current directory) if set, else the
// nearest ancestor of the current directory holding .git, else the current
// directory.
func locate(rootFlag string) (place, error) {
	wd, err := os.Getwd()
	if err != nil {
		return place{}, fmt.Errorf("current directory: %w", err)
	}
	root := rootFlag
	switch {
	case root == "":
		root = findRoot(wd)
	case !filepath.IsAbs(root):
		root = filepath.Join(wd, root)
	}
	root = filepath.Clean(root)
	name := rootFlag
	if name == "" {
		name = root
	}
	real, err := filepath.EvalSymlinks(root)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(real); err == nil && !fi.IsDir() {
			return place{}, fmt.Errorf("root '%s' is not a directory", name)
		}
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return place{}, fmt.Errorf("root '%s' does not exist", name)
	case err != nil:
		return place{}, fmt.Errorf("root '%s': %w", name, err)
	}
	p := place{root: root, cwd: "."}
	if realWd, err := filepath.EvalSymlinks(wd); err == nil && tree.Within(real, realWd) {
		if rel, err := filepath.Rel(real, realWd); err == nil {
			p.cwd = filepath.ToSlash(rel)
		}
	}
	return p, nil
}

// findRoot returns the nearest ancestor of dir (dir included) holding .git
// (a directory, or a file as in worktrees and submodules), else dir.
func findRoot(dir string) string {
	for d := dir; ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		parent := filepath.Dir(d)
		if parent == d {
			return dir
		}
		d = parent
	}
}
