package peercred_test

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/indexd/indexd/internal/peercred"
)

// Both ends of a connection made by this process see its user: the
// server's accepted end and the client's.
func TestSameUserBothEnds(t *testing.T) {
	dir, err := os.MkdirTemp("", "peercred-") // short: a socket path is bounded
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ln, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server := <-accepted
	if server == nil {
		t.Fatal("accept failed")
	}
	defer server.Close()
	for name, c := range map[string]net.Conn{"client": client, "server": server} {
		rc, err := c.(syscall.Conn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		var uid uint32
		var uerr, serr error
		if err := rc.Control(func(fd uintptr) {
			uid, uerr = peercred.UID(int(fd))
			serr = peercred.SameUser(int(fd))
		}); err != nil {
			t.Fatal(err)
		}
		if uerr != nil || uid != uint32(os.Getuid()) || serr != nil {
			t.Errorf("%s's end: UID = %d, %v; SameUser = %v; want uid %d", name, uid, uerr, serr, os.Getuid())
		}
	}
}
