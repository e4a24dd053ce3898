package daemon

import (
	"context"
	"fmt"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
)

// Clock tokens and Changes (query.ChangeLog) for one call, from the
// root's journal (package journal; kept by the watcher, see
// WatchFreshener). A token names this daemon instance, the root, the
// journal (one per index the workspace serves: a root served afresh
// starts a new one) and a position. The journal is not persisted: after a
// restart every earlier token answers fresh_instance.

// journalState returns the root's journal, Freshener and index once
// ready, or nils.
func (s *searcher) journalState() (*journal.Journal, Freshener, *index.Index) {
	w, _ := s.ws()
	if w == nil {
		return nil, nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.state != rpc.StateReady || w.journal == nil {
		return nil, nil, nil
	}
	return w.journal, w.fresh, w.ix
}

// noJournal says why the root has no change journal now.
func (s *searcher) noJournal() string {
	if w, _ := s.ws(); w != nil {
		w.mu.Lock()
		unwatched := w.state == rpc.StateUnwatched
		w.mu.Unlock()
		if unwatched {
			return "no file watcher keeps this root (none on this system), so its changes are not tracked"
		}
	}
	return "the root's index is not ready, so no change journal is kept for it yet; call again once it is indexed"
}

// barrier passes the read-your-writes barrier once for the call.
func (s *searcher) barrier(ctx context.Context, fresh Freshener) {
	if s.synced || s.failed {
		return
	}
	if barrier(ctx, fresh) == nil {
		s.synced = true
	} else {
		s.failed = true
	}
}

// token returns the token of position pos of j.
func (s *searcher) token(j *journal.Journal, pos uint64) string {
	return journal.Clock{Instance: s.w.d.instance, Root: journal.RootID(s.w.root), Journal: j.ID(), Pos: pos}.String()
}

// Clock returns the root's current token, after the barrier when sync,
// or "" and why there is none.
func (s *searcher) Clock(ctx context.Context, sync bool) (token, why string) {
	j, fresh, _ := s.journalState()
	if j == nil {
		return "", s.noJournal()
	}
	if sync {
		s.barrier(ctx, fresh)
	}
	_, end := j.Positions()
	return s.token(j, end), ""
}

// Since returns the net changes since token, after the barrier when sync,
// or says why they cannot be known.
func (s *searcher) Since(ctx context.Context, token string, sync bool) (query.ChangeSet, error) {
	c, err := journal.ParseClock(token)
	if err != nil {
		return query.ChangeSet{}, err
	}
	j, fresh, ix := s.journalState()
	if j == nil {
		return query.ChangeSet{Fresh: true, Reason: s.noJournal()}, nil
	}
	if sync {
		s.barrier(ctx, fresh)
	}
	_, end := j.Positions()
	set := query.ChangeSet{Clock: s.token(j, end), Index: ix}
	fail := func(reason string) (query.ChangeSet, error) {
		set.Fresh, set.Reason = true, reason
		return set, nil
	}
	switch {
	case c.Instance != s.w.d.instance:
		return fail("the token is from another daemon instance (the daemon restarted since)")
	case c.Root != journal.RootID(s.w.root):
		return fail("the token is of another root")
	case c.Journal != j.ID():
		return fail("the token is from an earlier index of this root (it was served afresh)")
	case s.failed:
		return fail("the index could not be brought up to date in time (read-your-writes barrier)")
	case fresh.Stale(".") == envelope.ReasonIndexStale:
		return fail("events were lost and the index is being reconciled")
	}
	if c.Pos < end && end-c.Pos > journal.MaxNet {
		return fail(fmt.Sprintf("more than %d changes since the token", journal.MaxNet))
	}
	set.Unwatched = fresh.Live()
	chs, ok := j.Net(c.Pos)
	if !ok {
		return fail("the token is older than the journal's start (events were lost, or the journal's bound dropped the changes since)")
	}
	set.Changes = chs
	return set, nil
}
