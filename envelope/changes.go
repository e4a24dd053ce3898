package envelope

import (
	"fmt"
	"strings"
)

// ---- Changes ----

// Change kinds (ChangeEntry.Kind).
const (
	KindCreated  = "created"
	KindModified = "modified"
	KindDeleted  = "deleted"
)

// ChangeEntry is one changed path. Mtime is the file's modification time
// after the change (RFC 3339, UTC, nanoseconds), for a deleted file the
// last one known before it, null when unknown.
type ChangeEntry struct {
	Path  string  `json:"path"`
	Kind  string  `json:"kind"`
	Mtime *string `json:"mtime"`
}

// ChangesData is Changes' payload: the paths changed since the token
// given, most recently changed first, and the token to give next time.
// FreshInstance says the list is not relative to since (another daemon
// instance or root, a token before the journal's start or across lost
// events, or no journal): it is then every current file, each "created".
type ChangesData struct {
	Changes       []ChangeEntry `json:"changes"`
	Clock         string        `json:"clock"`
	FreshInstance bool          `json:"fresh_instance"`
	Truncated     bool          `json:"truncated"`
	AbortedReason string        `json:"aborted_reason,omitempty"`
	Fallback
}

func (*ChangesData) isData() {}

// ChangesStats are Changes' statistics.
type ChangesStats struct {
	BaseStats
	Created  int `json:"created"`
	Modified int `json:"modified"`
	Deleted  int `json:"deleted"`
	// Journal is the number of paths the journal named since the token,
	// before the path, pattern and visibility filters.
	Journal int `json:"journal"`
}

// ChangesRun is everything Changes found, handed to Changes to build the
// envelope.
type ChangesRun struct {
	Data  ChangesData
	Stats ChangesStats
	// Since is the token given ("" when none).
	Since string
	// FreshReason says why the list is not relative to Since.
	FreshReason string
	// Untracked: the query asked for paths inside ignored directories,
	// whose changes are not tracked (a Hint names them); the answer is
	// partial.
	Untracked bool
	// Limit is the limit that truncated the result, for the note.
	Limit int
	// Hints are extra info lines.
	Hints []string
	// Voice and LimitGiven are as GlobRun's.
	Voice      Voice
	LimitGiven bool
}

// Changes builds Changes' envelope: partial when fresh_instance (the list
// is not what was asked), when changes asked for are not tracked, when
// there is no clock to give, truncated or aborted.
func Changes(ctx Context, r ChangesRun) *Envelope {
	d := r.Data
	if d.Changes == nil {
		d.Changes = []ChangeEntry{}
	}
	d.Changes = quoteEach(d.Changes, func(e *ChangeEntry) *string { return &e.Path })
	ctx = ctx.quoted()
	st := r.Stats
	st.Created, st.Modified, st.Deleted = 0, 0, 0
	for _, c := range d.Changes {
		switch c.Kind {
		case KindCreated:
			st.Created++
		case KindModified:
			st.Modified++
		case KindDeleted:
			st.Deleted++
		}
	}
	status, err := decide(outcome{results: len(d.Changes), truncated: d.Truncated, aborted: d.AbortedReason, discount: d.FreshInstance && r.Since != "" || r.Untracked || d.Clock == "", voice: r.Voice})
	var b strings.Builder
	switch {
	case r.Since == "" && d.Clock == "" && r.FreshReason != "":
		fmt.Fprintf(&b, "No clock for '%s': %s.", displayPath(ctx), r.FreshReason)
	case r.Since == "" && d.Clock == "":
		fmt.Fprintf(&b, "No clock for '%s': no change journal is kept for this root yet (its index is not ready, or the answer was made without the daemon); call again once it is indexed.", displayPath(ctx))
	case r.Since == "":
		how := "pass it as since"
		if r.Voice.CLI() {
			how = "give it with --since"
		}
		fmt.Fprintf(&b, "Clock for '%s': %s (no since given: %s to list what changes after now)", displayPath(ctx), d.Clock, how)
	case d.FreshInstance:
		fmt.Fprintf(&b, "Fresh instance: %s. Every file in '%s' is listed (%d); treat them all as changed.", r.FreshReason, displayPath(ctx), len(d.Changes))
	case len(d.Changes) == 0:
		fmt.Fprintf(&b, "No changes in '%s' since the given clock.", displayPath(ctx))
	default:
		fmt.Fprintf(&b, "Found %d changed paths in '%s' since the given clock (%d created, %d modified, %d deleted; most recent first)", len(d.Changes), displayPath(ctx), st.Created, st.Modified, st.Deleted)
	}
	if r.Since != "" {
		fmt.Fprintf(&b, "\nClock: %s", d.Clock)
		if d.Clock == "" {
			b.WriteString("(none: no change journal is kept for this root now)")
		}
	}
	if d.Truncated {
		if r.Voice.CLI() {
			b.WriteString("\n" + cliTruncated(r.Limit, "paths", r.LimitGiven))
		} else {
			fmt.Fprintf(&b, "\n[Truncated: Showing first %d paths. Narrow the path or pattern, or raise limit.]", r.Limit)
		}
	}
	if err != nil {
		b.WriteString("\n[Error: " + err.Message + "]")
	} else if d.AbortedReason != "" {
		b.WriteString("\n[Partial: the file list timed out. Results are incomplete.]")
	}
	writeLines(&b, d.Fallback.infoLine(r.Voice))
	writeLines(&b, r.Hints...)
	if len(d.Changes) > 0 {
		b.WriteString("\n")
		for _, c := range d.Changes {
			if d.FreshInstance {
				b.WriteString("\n" + c.Path)
			} else {
				b.WriteString("\n" + c.Kind + " " + c.Path)
			}
		}
	}
	e := &Envelope{Status: status, Data: &d, Text: b.String(), Stats: &st, Context: ctx, Error: err}
	if err != nil {
		e.Data = &ChangesData{Changes: []ChangeEntry{}, Clock: d.Clock, FreshInstance: d.FreshInstance, AbortedReason: d.AbortedReason, Fallback: d.Fallback}
	}
	return e
}
