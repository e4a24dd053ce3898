package daemon

import (
	"context"
	"log/slog"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/index"
	"github.com/indexd/indexd/journal"
	"github.com/indexd/indexd/watch"
)

// Freshener keeps one root's index current with its tree after the build and
// tells queries when the index may be trusted (docs/product.md, "Freshness").
// It is the index's only writer once started, and compacts it when
// Index.NeedsCompact says so. The watcher (package watch) implements it
// (WatchFreshener): watch.Watcher has Sync, Ready, Done and Close, and Stale
// is its State().Stale; tests use their own.
type Freshener interface {
	// Sync returns once every change made to the tree before the call is
	// in the index: the read-your-writes barrier each query passes before
	// it uses the index. An error sends the query to the walk.
	Sync(ctx context.Context) error
	// Stale says why the index cannot be trusted for a query of dir
	// (root-relative, "." for the root), as a fallback reason such as
	// envelope.ReasonIndexStale; "" when it can. envelope.ReasonWatchLimit
	// is not a reason to walk
	// everything: the subtrees Live lists are walked and merged instead.
	Stale(dir string) envelope.FallbackReason
	// Live lists the subtrees (root-relative) it cannot keep current,
	// such as directories past the inotify watch limit.
	Live() []string
	// Ready is closed once the Freshener trusts the index (its initial
	// catch-up is done). The root is reported ready only then.
	Ready() <-chan struct{}
	// Done is closed if the Freshener stops on its own (the root vanished);
	// nil if it never does.
	Done() <-chan struct{}
	// Close stops it and waits for its goroutines.
	Close() error
}

// FreshenerFunc starts a Freshener for the index ix of root, right after
// the index is built or reopened. It must return promptly (the catch-up
// runs in the background until Ready); ctx ends when the root is
// forgotten or the daemon stops, and Close is called then too.
type FreshenerFunc func(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error)

// WatchFreshener is the default Freshener: a watch.Watcher on the root
// (recursive inotify watches, the cookie sync barrier, overflow
// reconcile, per-subtree watch-limit degradation), whose State decides
// Stale.
func WatchFreshener(ctx context.Context, root string, ix *index.Index, log *slog.Logger) (Freshener, error) {
	j := journal.New(0)
	w, err := watch.Start(ctx, root, ix, watch.Options{Logger: log, Journal: j})
	if err != nil {
		return nil, err
	}
	return watched{w, j}, nil
}

// Journaled is a Freshener that also keeps the root's change journal
// (WatchFreshener's does): the daemon then puts clock tokens in the
// root's envelopes and answers Changes from it.
type Journaled interface {
	Journal() *journal.Journal
}

type watched struct {
	*watch.Watcher
	j *journal.Journal
}

func (w watched) Journal() *journal.Journal { return w.j }

func (w watched) Stale(dir string) envelope.FallbackReason { return w.State().Stale(dir) }
func (w watched) Live() []string                           { return w.State().Unwatched }
