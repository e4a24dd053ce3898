package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/indexd/indexd/envelope"
	"github.com/indexd/indexd/query"
	"github.com/indexd/indexd/rpc"
	"github.com/indexd/indexd/rpc/server"
	"github.com/indexd/indexd/tree"
)

func (d *daemon) ping(_ context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	var p rpc.PingParams
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: %v", err)
		}
	}
	if p.Build != "" && d.cfg.Build != "" && p.Build != d.cfg.Build {
		return nil, rpc.Errorf(rpc.CodeOtherBuild, "daemon of another build: the daemon is %s, the client %s", d.cfg.Build, p.Build)
	}
	return rpc.Pong, nil
}

// tool answers a tool's method (glob, grep, ls): always with an envelope,
// whatever goes wrong with the root.
func (d *daemon) tool(spec *query.ToolSpec) rpc.MethodFunc {
	name := spec.Name
	return func(ctx context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
		p, perr := rpc.DecodeToolParams(params)
		if perr != nil {
			return nil, perr
		}
		d.queries.Add(1)
		env := d.runTool(ctx, name, p)
		if h := d.cfg.hooks; h != nil && h.answered != nil {
			h.answered(name, env)
		}
		js, err := env.MarshalJSON()
		if err != nil {
			return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: %v", err)
		}
		return js, nil
	}
}

func (d *daemon) runTool(ctx context.Context, tool string, p *rpc.ToolParams) *envelope.Envelope {
	start := time.Now()
	fail := func(err *envelope.Error) *envelope.Envelope {
		return envelope.Fail(envelope.Context{Cwd: ".", ParamsInput: p.Args}, err, time.Since(start).Milliseconds())
	}
	if p.RootFrom != "" {
		p.Root, p.Cwd = d.knownRoot(p.Root, p.Cwd, p.RootFrom)
	}
	ws, err := query.NewWorkspace(p.Root)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			d.dropGone() // it may be a root served until it vanished
		}
		return fail(rootEnvelopeError(p.Root, err))
	}
	// The root is served (added, indexed, watched) only once the call
	// needs it, after its arguments and path were checked: a refused
	// call adds no root and starts no build.
	s := &searcher{attach: func() (*workspace, error) {
		switch w, err := d.get(ctx, ws.Root); {
		case errors.Is(err, errTooManyRoots):
			return nil, envelope.Errorf(envelope.CodeInvalidParam, "Too many workspace roots (%d are indexed); forget one with 'indexctl forget ROOT'.", d.cfg.MaxRoots)
		case errors.Is(err, errMemoryLimit):
			return nil, envelope.Errorf(envelope.CodeExecution, "%s", d.memoryLimitMessage())
		case err != nil: // stopping: walk
			return nil, nil
		default:
			w.queries.Add(1)
			return w, nil
		}
	}}
	t := &query.Tools{WS: ws, Searcher: s, Changes: s, Unlimited: p.Unlimited}
	if p.Voice == rpc.VoiceCLI {
		t.Voice = query.CLIVoice
	}
	if p.Unlimited {
		// The command line's answer, of no set size: the connection's
		// such answers are made one at a time (a client pipelining many
		// and reading none makes the daemon hold the work of one), and
		// each is bounded by the reply budget: streamed at its reader's
		// pace, or collected under it and cut short (saying so) when it
		// outgrows it (query.Tools.Budget).
		release, err := server.TakeTurn(ctx)
		if err != nil {
			return fail(envelope.Errorf(envelope.CodeExecution, "The request was cancelled: the client went away or the daemon is stopping."))
		}
		defer release()
		if h := d.cfg.hooks; h != nil && h.unlimited != nil {
			h.unlimited(1)
			defer h.unlimited(-1)
		}
		if p.Stream {
			// A client gone is noticed by ctx, which ends the search.
			t.Sink = func(b query.Batch) { _ = server.Notify(ctx, &b) }
			t.BatchText = p.BatchText
		} else {
			t.Budget = func(n int64) bool { return server.Reserve(ctx, n) }
		}
	}
	return t.Run(ctx, tool, p.Cwd, p.Args)
}

// knownRoot returns the root and cwd a query whose root the client chose
// (rpc.ToolParams.RootFrom) is answered in: the deepest root the daemon
// has that holds the current directory, if it is deeper than a .git
// root (from "git") or holds the directory taken as root (from "cwd");
// else root and cwd as given.
func (d *daemon) knownRoot(root, cwd, from string) (string, string) {
	abs := root
	if cwd != "" && cwd != "." {
		abs = filepath.Join(root, filepath.FromSlash(cwd))
		if filepath.IsAbs(cwd) {
			abs = filepath.Clean(cwd)
		}
	}
	realAbs, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return root, cwd
	}
	realRoot := realAbs
	if abs != root {
		if realRoot, err = filepath.EvalSymlinks(root); err != nil {
			return root, cwd
		}
	}
	best := ""
	d.mu.Lock()
	for r := range d.roots {
		if tree.Within(r, realAbs) && len(r) > len(best) {
			best = r
		}
	}
	d.mu.Unlock()
	switch {
	case best == "" || best == realRoot:
		return root, cwd
	case from == rpc.RootFromGit && !(tree.Within(realRoot, best)):
		return root, cwd // not below the .git root: keep the repository
	}
	rel, err := filepath.Rel(best, realAbs)
	if err != nil {
		return root, cwd
	}
	return best, filepath.ToSlash(rel)
}

// rootEnvelopeError is the envelope error for a root query.NewWorkspace
// refused.
func rootEnvelopeError(root string, err error) *envelope.Error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return envelope.Errorf(envelope.CodeNotFound, "Workspace root '%s' does not exist.", root)
	case errors.Is(err, query.ErrNotDir):
		return envelope.Errorf(envelope.CodeInvalidParam, "Workspace root '%s' is not a directory.", root)
	case errors.Is(err, fs.ErrPermission):
		return envelope.Errorf(envelope.CodePermissionDenied, "Permission denied: workspace root '%s'.", root)
	}
	return envelope.Errorf(envelope.CodeInvalidParam, "Workspace root '%s': %v", root, err)
}

// rootParams decodes the params of index, forget and status. With
// required, root must be given; absent params are allowed only without.
func rootParams(params json.RawMessage, required bool) (*rpc.RootParams, *rpc.Error) {
	var p rpc.RootParams
	trimmed := bytes.TrimSpace(params)
	if !required && (len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null"))) {
		return &p, nil
	}
	if err := rpc.DecodeParams(params, &p); err != nil {
		return nil, err
	}
	switch {
	case p.Root == "" && required:
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: missing root")
	case p.Root != "" && !filepath.IsAbs(p.Root):
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "invalid params: root must be an absolute path, got %q", p.Root)
	}
	return &p, nil
}

// realRoot resolves a root for index and status.
func realRoot(root string) (string, *rpc.Error) {
	ws, err := query.NewWorkspace(root)
	if err != nil {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "invalid params: %s", rootEnvelopeError(root, err).Message)
	}
	return ws.Root, nil
}

func (d *daemon) status(_ context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	p, perr := rootParams(params, false)
	if perr != nil {
		return nil, perr
	}
	d.dropGone() // a root that vanished is no longer served
	only := ""
	if p.Root != "" {
		if only, perr = realRoot(p.Root); perr != nil {
			return nil, perr
		}
	}
	return marshalResult(d.snapshot(only))
}

// index adds a root and, with wait, answers once its build attempt has
// ended (ready or failed). A root whose build failed is built again.
func (d *daemon) index(ctx context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	begun := time.Now()
	p, perr := rootParams(params, true)
	if perr != nil {
		return nil, perr
	}
	root, perr := realRoot(p.Root)
	if perr != nil {
		return nil, perr
	}
	w, err := d.get(ctx, root)
	switch {
	case errors.Is(err, errTooManyRoots):
		return nil, rpc.Errorf(rpc.CodeTooManyRoots, "too many roots (%d are indexed); forget one with 'indexctl forget ROOT'", d.cfg.MaxRoots)
	case errors.Is(err, errMemoryLimit):
		return nil, rpc.Errorf(rpc.CodeMemoryLimit, "%s", d.memoryLimitMessage())
	case errors.Is(err, errStopping):
		return nil, rpc.Errorf(rpc.CodeStopped, "the daemon is stopping")
	case err != nil:
		return nil, rpc.Errorf(rpc.CodeStopped, "%v", err)
	}
	if w.retry(begun) {
		d.log.Info("retrying a failed build", "root", root)
	}
	if p.Wait {
		// The state as of after the call: the attempt waited for ends,
		// then the sync barrier applies what changed before the call (a
		// new attempt's Freshener is ready after its catch-up walk, with
		// events of files made before the call perhaps still queued); a
		// root replaced before the call, noticed by the barrier even when
		// the new directory reused the old one's inode number, is waited
		// for afresh.
		for {
			if err := w.wait(ctx); err != nil {
				return nil, rpc.Errorf(rpc.CodeStopped, "indexing %s stopped: %v", root, err)
			}
			if w.settle(ctx) {
				break
			}
		}
	}
	return marshalResult(w.status())
}

// forget drops a root. A root that no longer exists on disk can be
// forgotten by the path it was indexed under.
func (d *daemon) forget(_ context.Context, params json.RawMessage) (json.RawMessage, *rpc.Error) {
	p, perr := rootParams(params, true)
	if perr != nil {
		return nil, perr
	}
	root := filepath.Clean(p.Root)
	if ws, err := query.NewWorkspace(root); err == nil {
		root = ws.Root
	}
	forgotten, err := d.drop(root)
	switch {
	case errors.Is(err, errStopping):
		return nil, rpc.Errorf(rpc.CodeStopped, "the daemon is stopping")
	case err != nil:
		return nil, rpc.Errorf(rpc.CodeFailed, "%v", err)
	}
	return marshalResult(rpc.ForgetResult{Root: root, Forgotten: forgotten})
}

// shutdown answers, then stops the daemon: the server drains the requests
// in flight (this one's answer included) and Run cleans up.
func (d *daemon) shutdown(context.Context, json.RawMessage) (json.RawMessage, *rpc.Error) {
	d.log.Info("shutdown requested")
	d.stop()
	return marshalResult(rpc.ShutdownResult{Stopping: true})
}

func marshalResult(v any) (json.RawMessage, *rpc.Error) {
	js, err := json.Marshal(v)
	if err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "internal error: %v", err)
	}
	return js, nil
}
