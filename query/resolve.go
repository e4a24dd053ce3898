package query

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/internal/quote"
	"github.com/indexd/indexd/tree"
)

// Workspace is one root the tools operate in: the only security boundary
// (docs/product.md, "The root is the boundary"). Root is the real path
// (absolute, symlinks resolved); a root given through a symlink is accepted,
// and absolute paths under the name it was given by are mapped onto the real
// one.
type Workspace struct {
	Root  string // real root
	given string // absolute, cleaned, as given
}

// ErrNotDir is returned by NewWorkspace for a root that is not a directory.
var ErrNotDir = errors.New("query: workspace root is not a directory")

// NewWorkspace opens the workspace rooted at root.
func NewWorkspace(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("query: workspace root %q: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("query: workspace root %q: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("query: workspace root %q: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("query: workspace root %q: %w", root, ErrNotDir)
	}
	return &Workspace{Root: real, given: abs}, nil
}

// msgAccessDenied is the message of every escape (docs/product.md, "The root
// is the boundary").
const msgAccessDenied = "Access denied. Path must be within project root."

// Resolve resolves p (relative to cwd, itself root-relative, or absolute)
// to a slash-separated path relative to the root, "." for the root itself,
// after resolving symlinks. The path must stay inside the root, compared by
// whole components; it need not exist (exists says whether it does). An
// escape is ACCESS_DENIED even when the target does not exist, so the
// answer never reveals what lies outside.
func (w *Workspace) Resolve(cwd, p string) (rel string, exists bool, err *envelope.Error) {
	if strings.IndexByte(p, 0) >= 0 || strings.IndexByte(cwd, 0) >= 0 {
		return "", false, invalid("path must not contain NUL bytes.")
	}
	if p == "" {
		p = "."
	}
	var abs string
	if filepath.IsAbs(p) {
		abs = filepath.Clean(p)
		if w.given != w.Root && tree.Within(w.given, abs) {
			abs = w.Root + abs[len(w.given):]
		}
	} else {
		abs = filepath.Join(w.Root, filepath.FromSlash(cwd), filepath.FromSlash(p))
	}
	if abs == w.Root {
		// The root itself (no path given, the common case): NewWorkspace
		// resolved it for this workspace, and resolving it again would
		// look at each of its components once more.
		return ".", true, nil
	}
	real, exists := evalExisting(abs)
	if !tree.Within(w.Root, real) {
		return "", false, envelope.Errorf(envelope.CodeAccessDenied, msgAccessDenied)
	}
	rel, e := filepath.Rel(w.Root, real)
	if e != nil {
		return "", false, envelope.Errorf(envelope.CodeAccessDenied, msgAccessDenied)
	}
	return filepath.ToSlash(rel), exists, nil
}

// evalExisting resolves the symlinks of the longest existing prefix of abs
// (a clean absolute path) and appends the rest unchanged.
func evalExisting(abs string) (string, bool) {
	rest := ""
	for cur := abs; ; {
		real, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if rest == "" {
				return real, true
			}
			return filepath.Join(real, rest), false
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, false
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// Abs returns the absolute path of a root-relative path.
func (w *Workspace) Abs(rel string) string {
	if rel == "." || rel == "" {
		return w.Root
	}
	return filepath.Join(w.Root, filepath.FromSlash(rel))
}

// givenAbs returns the absolute path of a root-relative path under the
// root's name as it was given (which may run through a symlink).
func (w *Workspace) givenAbs(rel string) string {
	if rel == "." || rel == "" {
		return w.given
	}
	return filepath.Join(w.given, filepath.FromSlash(rel))
}

// resolveDir is Workspace.resolveDir, its refusal of a path outside the
// root in t's voice: on the command line it names the path and the root,
// and how to choose another.
func (t *Tools) resolveDir(cwd, p, what string) (string, *envelope.Error) {
	dir, err := t.WS.resolveDir(cwd, p, what)
	if err != nil && err.Code == envelope.CodeAccessDenied && t.Voice.CLI() {
		err = envelope.Errorf(envelope.CodeAccessDenied, "access denied: '%s' is outside the workspace root %s (--root DIR chooses another root)", quote.Name(quote.Unquote(p)), quote.Name(t.WS.givenAbs(".")))
	}
	return dir, err
}

// resolveDir resolves a search root: it must exist and be a directory.
// what names it in messages ("Search root" for Glob and Grep). p may be a
// name in its printed (quoted) form, which names the bytes it stands for
// (internal/quote): whatever a tool prints can be given back.
func (w *Workspace) resolveDir(cwd, p, what string) (string, *envelope.Error) {
	rel, exists, err := w.Resolve(cwd, quote.Unquote(p))
	if err != nil {
		return "", err
	}
	if !exists {
		return "", envelope.Errorf(envelope.CodeNotFound, "%s '%s' does not exist.", what, p)
	}
	if rel == "." {
		return rel, nil // NewWorkspace found the root a directory
	}
	fi, statErr := os.Stat(w.Abs(rel))
	switch {
	case errors.Is(statErr, fs.ErrPermission):
		return "", envelope.Errorf(envelope.CodePermissionDenied, "%s '%s' is not accessible.", what, p)
	case statErr != nil:
		return "", envelope.Errorf(envelope.CodeNotFound, "%s '%s' does not exist.", what, p)
	case !fi.IsDir():
		return "", envelope.Errorf(envelope.CodeInvalidParam, "%s '%s' is not a directory.", what, p)
	}
	return rel, nil
}
