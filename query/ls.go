package query

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/tree"
)

// ls lists one live directory (docs/tools.md, "LS"): directories first, then
// by name, paginated by offset and limit. Hidden and ignored entries are left
// out unless asked for, and so are entries matching an "ignore" glob (tried
// against the name, the path relative to the root and the path relative to the
// listed directory).
func (t *Tools) ls(ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope {
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(ectx, err, elapsedMS(start))
	}
	p, err := decodeLS(a, t.rules())
	if err != nil {
		return fail(err)
	}
	for _, g := range p.Ignore {
		if !doublestar.ValidatePattern(g) {
			return fail(invalid("Invalid ignore pattern '%s'.", g))
		}
	}
	dir, err := t.resolveDir(ectx.Cwd, p.Path, "Path")
	if err != nil {
		return fail(err)
	}
	ectx.PathResolved = dir
	ectx.Clock = t.clock(ctx, false) // LS reads the live directory: no barrier needed
	abs := t.WS.Abs(dir)
	des, readErr := readDirBeneath(t.WS.Root, dir)
	if readErr != nil {
		switch {
		case errors.Is(readErr, fs.ErrPermission):
			return fail(envelope.Errorf(envelope.CodePermissionDenied, "Path '%s' is not readable.", p.Path))
		case rooted.Gone(readErr):
			// Replaced by a link or removed since it was resolved.
			return fail(envelope.Errorf(envelope.CodeNotFound, "Path '%s' does not exist.", p.Path))
		}
		return fail(internal(readErr))
	}
	rules := dirRules(t.WS, dir)
	cl := ignore.Classifier{Root: t.WS.Root, NoRules: p.IncludeIgnored}
	var run envelope.LSRun
	var entries []envelope.LSEntry
	var skipped []tree.Skip
	for _, de := range des {
		name := de.Name()
		rel := name
		if dir != "." {
			rel = dir + "/" + name
		}
		isDir := de.IsDir()
		v := cl.Entry(rules, rel, isDir)
		switch {
		case v.Reserved():
			continue
		case v.Ignored:
			run.Stats.Ignored++
			skipped = append(skipped, tree.Skip{Rel: rel, IsDir: isDir, Default: v.Default})
			continue
		case v.Hidden && !p.IncludeHidden:
			skipped = append(skipped, tree.Skip{Rel: rel, IsDir: isDir, Hidden: true})
			continue
		}
		if ignoredByGlobs(p.Ignore, name, rel, isDir) {
			continue
		}
		e := envelope.LSEntry{Path: name, Type: envelope.TypeFile}
		switch {
		case isDir:
			e.Path += "/"
			e.Type = envelope.TypeDir
			run.Stats.Dirs++
		case de.Type()&os.ModeSymlink != 0:
			e.Type = envelope.TypeLink
			e.Path += "@"
			run.Stats.Links++
			target, err := filepath.EvalSymlinks(filepath.Join(abs, name))
			switch {
			case err != nil:
				e.Link = envelope.LinkBroken
			case !tree.Within(t.WS.Root, target):
				e.Link = envelope.LinkOutside
			default:
				if fi, err := os.Stat(target); err == nil && fi.IsDir() {
					e.Path += "/"
				}
			}
		default:
			run.Stats.Files++
		}
		entries = append(entries, e)
	}
	// readDirBeneath sorted by name; keep that order within each group.
	slices.SortStableFunc(entries, func(a, b envelope.LSEntry) int {
		ad, bd := a.Type == envelope.TypeDir, b.Type == envelope.TypeDir
		switch {
		case ad == bd:
			return 0
		case ad:
			return -1
		}
		return 1
	})
	run.Stats.Total = len(entries)
	lo := min(p.Offset, len(entries))
	hi := min(lo+p.Limit, len(entries))
	run.Data.Entries = entries[lo:hi]
	run.Data.Truncated = hi < len(entries)
	run.Voice = t.Voice
	run.Hints = skipHints(t.Voice, skipped, len(entries) > 0, func(tree.Skip) bool { return true },
		func(string) bool { return p.IncludeHidden })
	run.Stats.TimeMS = elapsedMS(start)
	return envelope.LS(ectx, run)
}

// readDirBeneath lists the directory rel ("." for the root) of root,
// opened beneath it through real directories only, sorted by name.
func readDirBeneath(root, rel string) ([]fs.DirEntry, error) {
	r, err := rooted.Open(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f, err := r.OpenDir(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(des, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return des, nil
}

// ignoredByGlobs reports whether an LS "ignore" glob matches the entry's
// name, its root-relative path or (for a directory) either with a trailing
// slash.
func ignoredByGlobs(globs []string, name, rel string, isDir bool) bool {
	for _, g := range globs {
		for _, c := range []string{name, rel} {
			if doublestar.MatchUnvalidated(g, c) || (isDir && doublestar.MatchUnvalidated(g, c+"/")) {
				return true
			}
		}
	}
	return false
}
