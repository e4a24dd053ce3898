package query

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/grep"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/tree"
)

// changed_since, an optional Glob and Grep parameter: search only the
// files changed (created or modified, and still there) since a clock
// token. The files are those Changes would list since the token; each is
// looked up live and searched by Glob's and Grep's own rules (hidden,
// ignored, include, pattern, order, limit). When the changes since the
// token cannot be known (Changes' fresh_instance cases, or a path inside
// ignored directories, whose changes are not tracked), every file is
// searched as without the parameter, and the answer says so:
// data.fresh_instance true, status partial, an info line with the reason.

// changedSince returns the Searcher for a query with the changed_since
// token tok (t.Searcher when it is "") and, when the changes
// cannot be known, why.
func (t *Tools) changedSince(ctx context.Context, tok string, sync bool, dir string, includeIgnored bool) (s Searcher, fresh string, err *envelope.Error) {
	if tok == "" {
		return t.Searcher, "", nil
	}
	if t.Changes == nil {
		return t.Searcher, "no change journal is kept when answering without the daemon", nil
	}
	set, serr := t.Changes.Since(ctx, tok, sync)
	switch {
	case errors.Is(serr, journal.ErrBadToken):
		return nil, "", invalid("%s is not a clock token: give the clock of an earlier answer (context.clock, or data.clock of Changes).", t.Voice.Param("changed_since"))
	case serr != nil:
		return nil, "", internal(serr)
	case set.Fresh:
		return t.Searcher, set.Reason, nil
	}
	if u := set.untrackedIn(dir, includeIgnored); len(u) > 0 {
		return t.Searcher, "changes inside ignored or unwatched directories are not tracked", nil
	}
	return changedOnly{changes: set.Changes}, "", nil
}

// freshHint is the info line of an answer whose changed_since could not
// be honoured.
func freshHint(reason string) string {
	return fmt.Sprintf("[Info: changed_since could not be answered (%s): every file was searched.]", reason)
}

// changedOnly is the Searcher over the files a journal names.
type changedOnly struct {
	changes []journal.Change
}

// each calls fn with each changed file that still exists under dir,
// passes the ignored and hidden rules (allow lets a hidden name through)
// and match, with its lstat.
func (c changedOnly) each(root, dir string, includeHidden, includeIgnored bool, allow, match func(string) bool, fn func(path string, st *unix.Stat_t)) error {
	r, err := rooted.Open(root)
	if err != nil {
		return err
	}
	defer r.Close()
	depth := dirDepth(dir)
	for _, ch := range c.changes {
		if ch.Kind == journal.Deleted || ch.Ignored && !includeIgnored || !inDir(dir, ch.Path) {
			continue
		}
		rel := relTo(dir, ch.Path)
		if !visible(ch.Hidden, rel, depth, includeHidden, allow) || !match(rel) {
			continue
		}
		st, err := r.Lstat(ch.Path)
		if err != nil {
			continue // gone since (or under a link now)
		}
		fn(ch.Path, &st)
	}
	return nil
}

// Glob matches the changed files against the pattern, in Glob's order.
func (c changedOnly) Glob(ctx context.Context, q *GlobQuery) (*GlobResult, error) {
	p := q.Params
	var hits []globHit
	err := c.each(q.WS.Root, q.Dir, p.IncludeHidden, p.IncludeIgnored, q.Glob.AllowHidden, q.Glob.Match, func(path string, st *unix.Stat_t) {
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
		case unix.S_IFLNK: // listed when it points to a file inside the root, as Glob does
			if !tree.LinkToFileInside(q.WS.Root, q.WS.Abs(path)) {
				return
			}
		default:
			return
		}
		hits = append(hits, globHit{path, tree.Nanos(st.Mtim.Sec, st.Mtim.Nsec)})
	})
	if err != nil {
		return nil, err
	}
	var res GlobResult
	res.Run.Data.Paths, res.Run.Data.Truncated = orderGlob(hits, p)
	res.Run.Stats.Visited = len(c.changes)
	return &res, nil
}

// Grep scans the changed regular files the include filter passes, in
// Grep's order.
func (c changedOnly) Grep(ctx context.Context, q *GrepQuery) (*GrepResult, error) {
	p := q.Params
	ctx, cancel := q.deadline(ctx)
	defer cancel()
	var files []grep.File
	err := c.each(q.WS.Root, q.Dir, p.IncludeHidden, p.IncludeIgnored, q.Include.AllowHidden, q.Include.Match, func(path string, st *unix.Stat_t) {
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			files = append(files, grep.File{Rel: path, ModTime: tree.Nanos(st.Mtim.Sec, st.Mtim.Nsec), Size: st.Size})
		}
	})
	if err != nil {
		return nil, err
	}
	n := len(files)
	res := &GrepResult{Run: runOf(grep.Scan(ctx, q.search(nil), files))}
	res.Run.Stats.Candidates = &n
	return res, nil
}
