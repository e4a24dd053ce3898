// Package fakesock makes Unix-socket peers that misbehave, for tests of
// the clients that talk to the daemon.
package fakesock

import (
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Mute listens on a new socket (in a short temporary directory, so that
// the path fits a socket address), accepts every connection and never
// reads or writes one: a daemon that hangs. It returns the socket's path;
// the listener and its connections are closed when the test ends.
func Mute(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "indexd-mute-")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "indexd.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex // guards conns
		conns []net.Conn
		done  = make(chan struct{}) // closed when the accept loop ends
	)
	go func() { // owned by the test: ends when Cleanup closes ln
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		os.RemoveAll(dir)
	})
	return path
}
