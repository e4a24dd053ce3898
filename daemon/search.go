package daemon

import (
	"context"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/query"
)

// FallbackWalk is the Searcher that answers from the live tree, like
// query.Walker, and marks each answer as a fallback for Reason: Glob and
// Grep carry data.fallback_used and data.fallback_reason, and Grep's status
// becomes partial (the envelope's status rule). LS never goes through a
// Searcher and is not marked.
type FallbackWalk struct {
	Reason envelope.FallbackReason
}

// Glob walks for q and marks the result.
func (f FallbackWalk) Glob(ctx context.Context, q *query.GlobQuery) (*query.GlobResult, error) {
	res, err := query.Walker{}.Glob(ctx, q)
	if res != nil {
		res.Run.Data.Fallback = envelope.Fallback{Used: true, Reason: f.Reason}
	}
	return res, err
}

// Grep walks for q and marks the result.
func (f FallbackWalk) Grep(ctx context.Context, q *query.GrepQuery) (*query.GrepResult, error) {
	res, err := query.Walker{}.Grep(ctx, q)
	if res != nil {
		res.Run.Data.Fallback = envelope.Fallback{Used: true, Reason: f.Reason}
	}
	return res, err
}

// searcher answers Glob and Grep for one workspace from whatever it can
// trust at the moment of the query: the index once it is ready and the
// Freshener vouches for it, else the walk with the reason. It is also the
// call's query.ChangeLog (clock.go). One searcher serves one call, which
// passes the read-your-writes barrier at most once: when taking the clock,
// before the search.
type searcher struct {
	// attach serves the call's root and returns its workspace (nil
	// while the daemon stops), or the error to answer with (an
	// *envelope.Error); ws calls it once, when the call first needs it.
	attach    func() (*workspace, error)
	attached  bool
	attachErr error
	w         *workspace // set by ws
	// synced: the barrier was passed for this call; failed: it was tried
	// and did not pass.
	synced, failed bool
	// waited: the call waited for the root's build (first contact).
	waited bool
}

// ws serves the call's root, once, and returns its workspace: nil while
// the daemon stops, or with the error the call is to fail with.
func (s *searcher) ws() (*workspace, error) {
	if !s.attached {
		s.attached = true
		if s.attach != nil {
			s.w, s.attachErr = s.attach()
		}
	}
	return s.w, s.attachErr
}

// pick returns the index to query for dir, or nil and the fallback
// reason. A building root is waited for first, as first contact allows
// (workspace.awaitBuild); waited then says so, and the search's time
// budget starts afresh.
func (s *searcher) pick(ctx context.Context, dir string, sync bool) (*index.Index, []string, envelope.FallbackReason) {
	if w, _ := s.ws(); w == nil {
		return nil, nil, envelope.ReasonDaemonStopping
	}
	if s.w.awaitBuild(ctx) {
		s.waited = true
	}
	if s.failed {
		if _, _, r := s.w.trusted(ctx, dir, false); r != "" {
			return nil, nil, r
		}
		return nil, nil, envelope.ReasonIndexStale
	}
	return s.w.trusted(ctx, dir, sync && !s.synced)
}

func (s *searcher) Glob(ctx context.Context, q *query.GlobQuery) (*query.GlobResult, error) {
	if _, err := s.ws(); err != nil {
		return nil, err
	}
	ix, live, reason := s.pick(ctx, q.Dir, q.Params.Sync)
	if reason == envelope.ReasonIndexStale || s.waited {
		q.Start = time.Now() // the search gets its full time budget after a failed barrier or a wait
	}
	if ix == nil {
		return FallbackWalk{Reason: reason}.Glob(ctx, q)
	}
	return query.Indexed{Index: ix, Live: live}.Glob(ctx, q)
}

func (s *searcher) Grep(ctx context.Context, q *query.GrepQuery) (*query.GrepResult, error) {
	if _, err := s.ws(); err != nil {
		return nil, err
	}
	ix, live, reason := s.pick(ctx, q.Dir, q.Params.Sync)
	if reason == envelope.ReasonIndexStale || s.waited {
		q.Start = time.Now() // the search gets its full time budget after a failed barrier or a wait
	}
	if ix == nil {
		return FallbackWalk{Reason: reason}.Grep(ctx, q)
	}
	return query.Indexed{Index: ix, Live: live, Blocks: s.w.d.blocks}.Grep(ctx, q)
}
