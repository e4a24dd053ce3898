package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// rootsInput is the id under which a call asks the client for its roots
// (SEP-2322 input requests).
const rootsInput = "roots"

// protocolInputRequests is the first protocol version in which a server
// may not send requests of its own while serving one: it asks for input
// through the call's result instead (SEP-2322). Versions are dates, so
// they compare as strings.
const protocolInputRequests = "2026-07-28"

// listRootsTimeout bounds the wait for the client's answer to roots/list;
// a client that does not answer gets the default root.
const listRootsTimeout = 10 * time.Second

// rootCache holds each session's root once it is known (or why the
// client's roots were refused).
type rootCache struct {
	mu sync.Mutex
	m  map[*sdk.ServerSession]cachedRoot
}

type cachedRoot struct {
	root string
	err  error
}

func (c *rootCache) get(ss *sdk.ServerSession) (cachedRoot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[ss]
	return r, ok
}

// set records ss's root (or refusal), and drops the roots of sessions
// that have ended.
func (c *rootCache) set(srv *sdk.Server, ss *sdk.ServerSession, r cachedRoot) {
	live := map[*sdk.ServerSession]bool{}
	for s := range srv.Sessions() {
		live[s] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[*sdk.ServerSession]cachedRoot{}
	}
	for s := range c.m {
		if !live[s] {
			delete(c.m, s)
		}
	}
	c.m[ss] = r
}

// forget drops ss's root, so that its next call asks again.
func (c *rootCache) forget(ss *sdk.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, ss)
}

// ErrRootRefused is wrapped by the error of a call whose workspace root
// was refused (see RootRefusedError).
var ErrRootRefused = errors.New("mcp: workspace root refused")

// RootRefusedError says why a root offered by the client (or the default
// root) was refused as the sandbox of a session's searches: it is the
// whole filesystem, or the client's root is not a directory owned by the
// user running the server. Only Config.Root (indexctl's --root) may set
// such a root. Tool calls answer it as an ACCESS_DENIED envelope.
type RootRefusedError struct {
	Root   string // the root refused, as offered
	Reason string // why
}

func (e *RootRefusedError) Error() string {
	return fmt.Sprintf("Workspace root '%s' refused: %s. Start the server with --root DIR to choose the directory to search.", e.Root, e.Reason)
}

// Is makes errors.Is(err, ErrRootRefused) hold.
func (e *RootRefusedError) Is(target error) bool { return target == ErrRootRefused }

// checkRoot refuses dir (a directory) as a session's root when it is the
// whole filesystem (symbolic links resolved) or, with owned, when it is
// not owned by the user running the server.
func checkRoot(dir string, owned bool) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return &RootRefusedError{Root: dir, Reason: err.Error()}
	}
	if real == "/" {
		return &RootRefusedError{Root: dir, Reason: "it is the whole filesystem"}
	}
	if !owned {
		return nil
	}
	fi, err := os.Stat(real)
	if err != nil {
		return &RootRefusedError{Root: dir, Reason: err.Error()}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return &RootRefusedError{Root: dir, Reason: "its owner cannot be read"}
	}
	if me := os.Getuid(); st.Uid != uint32(me) {
		return &RootRefusedError{Root: dir, Reason: fmt.Sprintf("it is owned by uid %d, not by the user running the server (uid %d)", st.Uid, me)}
	}
	return nil
}

// root returns the workspace root of the call's session: Config.Root, else
// the client's first file:// root that is a directory it may search (see
// pick), else the default root (unless it is "/": a *RootRefusedError). When the client must be asked for its roots through the result
// (protocol 2026-07-28 and later), root returns that result as ask
// instead; the SDK's client answers it and calls again.
//
// (The SDK marks roots deprecated from protocol 2026-07-28 on; clients of
// earlier versions, most of them today, still offer them.)
func (s *Server) root(ctx context.Context, req *sdk.CallToolRequest) (root string, ask *sdk.CallToolResult, err error) {
	if s.cfg.Root != "" {
		return s.cfg.Root, nil, nil
	}
	ss := req.Session
	if r, ok := s.roots.get(ss); ok {
		return r.root, nil, r.err
	}
	if caps := req.ClientCapabilities(); caps == nil || caps.RootsV2 == nil {
		return s.defaultRoot(ss)
	}
	if resp, ok := req.Params.InputResponses[rootsInput]; ok {
		if lr, ok := resp.(*sdk.ListRootsResult); ok && lr != nil {
			return s.pick(ss, lr.Roots)
		}
		return s.defaultRoot(ss)
	}
	if req.ProtocolVersion() >= protocolInputRequests {
		return "", &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{rootsInput: &sdk.ListRootsParams{}}}, nil
	}
	lctx, cancel := context.WithTimeout(ctx, listRootsTimeout)
	defer cancel()
	res, err := ss.ListRoots(lctx, nil)
	if err != nil {
		if ctx.Err() != nil {
			return "", nil, ctx.Err()
		}
		s.cfg.Logger.Warn("the client did not list its roots; searching the default root", "error", err)
		return s.defaultRoot(ss)
	}
	return s.pick(ss, res.Roots)
}

// pick returns the first of the client's roots that is a directory (a
// file:// URI on this host) and not refused by checkRoot (the whole
// filesystem, or a directory the server's user does not own), else the
// default root. When every directory offered was refused, the session's
// calls fail with the first refusal (a *RootRefusedError) rather than
// search somewhere the client did not ask for.
func (s *Server) pick(ss *sdk.ServerSession, roots []*sdk.Root) (string, *sdk.CallToolResult, error) {
	var refused error
	for _, r := range roots {
		if r == nil {
			continue
		}
		dir, ok := fileRoot(r.URI)
		if !ok {
			continue
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			s.cfg.Logger.Warn("skipping a client root that is not a directory", "uri", r.URI)
			continue
		}
		if err := checkRoot(dir, true); err != nil {
			s.cfg.Logger.Warn("refusing a client root", "uri", r.URI, "error", err)
			if refused == nil {
				refused = err
			}
			continue
		}
		s.roots.set(s.sdk, ss, cachedRoot{root: dir})
		return dir, nil, nil
	}
	if refused != nil {
		s.roots.set(s.sdk, ss, cachedRoot{err: refused})
		return "", nil, refused
	}
	return s.defaultRoot(ss)
}

// fileRoot returns the directory a file:// root URI names.
func fileRoot(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || !filepath.IsAbs(u.Path) {
		return "", false
	}
	return filepath.Clean(u.Path), true
}

// defaultRoot returns Config.DefaultRoot's root, refusing "/" (a server
// started in the root directory must be given --root).
func (s *Server) defaultRoot(ss *sdk.ServerSession) (string, *sdk.CallToolResult, error) {
	r, err := s.cfg.DefaultRoot()
	if err != nil {
		return "", nil, err
	}
	if err := checkRoot(r, false); err != nil {
		s.roots.set(s.sdk, ss, cachedRoot{err: err})
		return "", nil, err
	}
	s.roots.set(s.sdk, ss, cachedRoot{root: r})
	return r, nil, nil
}
