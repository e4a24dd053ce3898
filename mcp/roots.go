package mcp

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"sync"
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

// rootCache holds each session's root once it is known.
type rootCache struct {
	mu sync.Mutex
	m  map[*sdk.ServerSession]string
}

func (c *rootCache) get(ss *sdk.ServerSession) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[ss]
	return r, ok
}

// set records ss's root, and drops the roots of sessions that have ended.
func (c *rootCache) set(srv *sdk.Server, ss *sdk.ServerSession, root string) {
	live := map[*sdk.ServerSession]bool{}
	for s := range srv.Sessions() {
		live[s] = true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[*sdk.ServerSession]string{}
	}
	for s := range c.m {
		if !live[s] {
			delete(c.m, s)
		}
	}
	c.m[ss] = root
}

// forget drops ss's root, so that its next call asks again.
func (c *rootCache) forget(ss *sdk.ServerSession) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, ss)
}

// root returns the workspace root of the call's session: Config.Root, else
// the client's first file:// root that is a directory, else the default
// root. When the client must be asked for its roots through the result
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
		return r, nil, nil
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
// file:// URI on this host), else the default root.
func (s *Server) pick(ss *sdk.ServerSession, roots []*sdk.Root) (string, *sdk.CallToolResult, error) {
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
		s.roots.set(s.sdk, ss, dir)
		return dir, nil, nil
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

func (s *Server) defaultRoot(ss *sdk.ServerSession) (string, *sdk.CallToolResult, error) {
	r, err := s.cfg.DefaultRoot()
	if err != nil {
		return "", nil, err
	}
	s.roots.set(s.sdk, ss, r)
	return r, nil, nil
}
