package query

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/glob"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/internal/rooted"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/tool"
	"github.com/indexd/indexd/tree"
)

// ChangeLog is a root's change journal as the tools see it: the daemon's
// (package journal, fed by the watcher). Tools without one (the direct
// walk) put no clock in their envelopes, and Changes answers every file
// with fresh_instance.
type ChangeLog interface {
	// Clock returns the root's current clock token, having passed the
	// read-your-writes barrier first when sync; "" when no journal is kept
	// for the root now (its index is not ready, or no watcher keeps it),
	// and then why.
	Clock(ctx context.Context, sync bool) (token, why string)
	// Since returns the net changes since token and the current token,
	// having passed the barrier first when sync. A token that is not one
	// is journal.ErrBadToken.
	Since(ctx context.Context, token string, sync bool) (ChangeSet, error)
}

// ChangeSet is a ChangeLog's answer.
type ChangeSet struct {
	// Clock is the current token ("" when no journal is kept).
	Clock string
	// Changes are the net changes since the token, most recently changed
	// first (journal.Journal.Net), unfiltered; nil when Fresh.
	Changes []journal.Change
	// Fresh: the changes since the token cannot be known; Reason says
	// why. The answer is then every current file.
	Fresh  bool
	Reason string
	// Index is the root's index (nil if none): the ignored directories it
	// records are those whose contents are not journaled.
	Index *index.Index
	// Unwatched are the subtrees the watcher could not watch (the watch
	// limit; "." for the root): changes there are not journaled until
	// they are watched again.
	Unwatched []string
}

// untrackedIn names the parts of the tree a query of dir reaches whose
// changes are not journaled: ignored directories (all of those under dir
// with includeIgnored, or the one dir lies in) and unwatched subtrees.
// Nothing inside them is watched.
func (set ChangeSet) untrackedIn(dir string, includeIgnored bool) []string {
	u := untracked(set.Index, dir, includeIgnored)
	for _, w := range set.Unwatched {
		if w == "." || dir == "." || w == dir || inDir(dir, w) || inDir(w, dir) {
			u = append(u, w+" (not watched: the inotify watch limit)")
		}
	}
	if len(u) > 3 {
		u = append(u[:3], fmt.Sprintf("and %d more", len(u)-3))
	}
	return u
}

// ChangesParams are Changes' checked parameters.
type ChangesParams struct {
	Since          string
	Path           string
	Pattern        string // a glob relative to Path; "**" (every file) by default
	Limit          int
	IncludeHidden  bool
	IncludeIgnored bool
	CaseSensitive  bool
	Sync           bool // as GlobParams.Sync
}

func decodeChanges(a args, r rules) (ChangesParams, *envelope.Error) {
	var p ChangesParams
	d := newDecoder(a, tool.Changes, r)
	p.Since = d.str("since")
	p.Path = d.str("path")
	p.Pattern = d.str("pattern")
	p.Limit = d.limit()
	p.IncludeHidden = d.boolean("include_hidden")
	p.IncludeIgnored = d.boolean("include_ignored")
	p.CaseSensitive = d.boolean("case_sensitive")
	p.Sync = d.boolean("sync")
	return p, d.err
}

// clock returns the root's clock token for an envelope's context, "" when
// none is kept.
func (t *Tools) clock(ctx context.Context, sync bool) string {
	if t.Changes == nil {
		return ""
	}
	token, _ := t.Changes.Clock(ctx, sync)
	return token
}

// changes answers Changes: the paths changed since a clock token under
// path, matching pattern, with the visibility rules of Glob; or, when
// the changes since the token cannot be known, every current file
// (fresh_instance, partial).
//
// Changes and Glob agree on what a file is: a path reported created or
// modified is one Glob lists now, and one reported deleted is one it
// does not. A symbolic link is a file when it points, through any
// links, to a regular file inside the root (tree.LinkToFileInside,
// looked at now, as Glob looks): a link created that is not one is left
// out, and one modified that no longer is one (retargeted, or a file
// replaced by such a link) is reported deleted. What a deleted link
// pointed to can no longer be told: it is reported deleted whatever it
// was. A link whose target is created or deleted has no change of its
// own: Changes reports the target, not the link.
func (t *Tools) changes(ctx context.Context, ectx envelope.Context, a args, start time.Time) *envelope.Envelope {
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(ectx, err, elapsedMS(start))
	}
	p, err := decodeChanges(a, t.rules())
	if err != nil {
		return fail(err)
	}
	dir, pat, g, err := t.resolveGlob(&ectx, p.Path, "Path", p.Pattern, p.CaseSensitive)
	if err != nil {
		return fail(err)
	}
	if _, given := a["pattern"]; given {
		ectx.PatternNormalized = pat
	}
	run := envelope.ChangesRun{Since: p.Since, Limit: p.Limit, LimitGiven: a.given("limit"), Voice: t.Voice}
	var set ChangeSet
	switch {
	case t.Changes == nil:
		set = ChangeSet{Fresh: true, Reason: "no change journal is kept when answering without the daemon"}
	case p.Since == "":
		set.Clock, set.Reason = t.Changes.Clock(ctx, p.Sync)
	default:
		var serr error
		set, serr = t.Changes.Since(ctx, p.Since, p.Sync)
		switch {
		case errors.Is(serr, journal.ErrBadToken):
			return fail(invalid("%s is not a clock token: give the clock of an earlier answer (context.clock, or data.clock of Changes).", t.Voice.Param("since")))
		case serr != nil:
			return fail(internal(serr))
		}
	}
	ectx.Clock = set.Clock
	run.Data.Clock = set.Clock
	if p.Since == "" {
		if set.Clock == "" {
			run.FreshReason = set.Reason
		}
		run.Stats.TimeMS = elapsedMS(start)
		return envelope.Changes(ectx, run)
	}
	if set.Fresh {
		run.Data.FreshInstance, run.FreshReason = true, set.Reason
		if e := t.currentFiles(ctx, &run, dir, pat, g, p, start); e != nil {
			return fail(e)
		}
		run.Stats.TimeMS = elapsedMS(start)
		return envelope.Changes(ectx, run)
	}
	run.Stats.Journal = len(set.Changes)
	depth := dirDepth(dir)
	for _, c := range set.Changes {
		if c.Ignored && !p.IncludeIgnored || !inDir(dir, c.Path) {
			continue
		}
		rel := relTo(dir, c.Path)
		if !visible(c.Hidden, rel, depth, p.IncludeHidden, g.AllowHidden) || !g.Match(rel) {
			continue
		}
		kind, listed := c.Kind, true
		if c.Link && kind != journal.Deleted {
			listed = tree.LinkToFileInside(t.WS.Root, t.WS.Abs(c.Path))
		}
		switch {
		case listed:
		case kind == journal.Created:
			continue // never a file as Glob counts them
		default:
			kind = journal.Deleted // no longer one
		}
		if len(run.Data.Changes) == p.Limit {
			run.Data.Truncated = true
			break
		}
		run.Data.Changes = append(run.Data.Changes, envelope.ChangeEntry{Path: c.Path, Kind: kind.String(), Mtime: mtimeOf(c.Mtime)})
	}
	if u := set.untrackedIn(dir, p.IncludeIgnored); len(u) > 0 {
		run.Untracked = true
		run.Hints = append(run.Hints, fmt.Sprintf("[Info: changes inside these directories are not tracked (%s); list them with Glob or LS.]", strings.Join(u, ", ")))
	}
	run.Stats.TimeMS = elapsedMS(start)
	return envelope.Changes(ectx, run)
}

// untracked names the ignored directories whose contents a Changes query
// of dir asked for: every one under dir with includeIgnored, or the one
// dir lies in. Nothing inside them is watched, so nothing there is
// journaled. (A directory that may not be listed is not one: nothing
// inside it is in any answer, and the change of its mode that lets it be
// read is journaled as the files it brings in.)
func untracked(ix *index.Index, dir string, includeIgnored bool) []string {
	if ix == nil {
		return nil
	}
	vis := ix.Visibility()
	var dirs []string
	if vis.Ignored(walkStart(dir)) {
		dirs = append(dirs, dir)
	}
	if includeIgnored {
		vis.Skipped(walkStart(dir), func(s index.Skipped, _ bool) {
			if !s.Hidden && !s.Denied && s.IsDir {
				dirs = append(dirs, s.Path)
			}
		})
	}
	return dirs
}

// currentFiles lists every current file under dir matching the pattern
// (Glob's rules and Searcher, so the index when it can be trusted), each
// as created, with its mtime.
func (t *Tools) currentFiles(ctx context.Context, run *envelope.ChangesRun, dir, pat string, g *glob.Pattern, p ChangesParams, start time.Time) *envelope.Error {
	q := &GlobQuery{WS: t.WS, Dir: dir, Pattern: pat, Glob: g, Start: start, Params: GlobParams{
		Pattern: pat, Path: p.Path, Limit: p.Limit, IncludeHidden: p.IncludeHidden, IncludeIgnored: p.IncludeIgnored,
		CaseSensitive: p.CaseSensitive, Sort: SortPath, Sync: false, // the barrier was passed (or failed) for the clock
	}}
	res, err := t.Searcher.Glob(ctx, q)
	if err != nil {
		return internal(err)
	}
	run.Data.Truncated, run.Data.AbortedReason, run.Data.Fallback = res.Run.Data.Truncated, res.Run.Data.AbortedReason, res.Run.Data.Fallback
	r, oerr := rooted.Open(t.WS.Root)
	if oerr != nil {
		return internal(oerr)
	}
	defer r.Close()
	for _, path := range res.Run.Data.Paths {
		e := envelope.ChangeEntry{Path: path, Kind: envelope.KindCreated}
		if st, err := r.Lstat(path); err == nil {
			e.Mtime = mtimeOf(st.Mtim.Sec*1e9 + st.Mtim.Nsec)
		}
		run.Data.Changes = append(run.Data.Changes, e)
	}
	return nil
}

// inDir reports whether the root-relative path p lies under the resolved
// directory dir.
func inDir(dir, p string) bool {
	return dir == "." || strings.HasPrefix(p, dir+"/")
}

// mtimeOf renders Unix nanoseconds as RFC 3339 (UTC, nanoseconds); nil
// for 0 (unknown).
func mtimeOf(ns int64) *string {
	if ns == 0 {
		return nil
	}
	s := time.Unix(0, ns).UTC().Format(time.RFC3339Nano)
	return &s
}
