package rpc

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listenRaw makes a listening Unix socket at path with the given backlog,
// which nothing accepts on unless the test does.
func listenRaw(t *testing.T, path string, backlog int) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		t.Fatal(err)
	}
	return fd
}

// fillBacklog connects to path until the server's backlog is full (the
// next non-blocking connect fails with EAGAIN).
func fillBacklog(t *testing.T, path string) {
	t.Helper()
	for range 100 {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err == unix.EAGAIN {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the backlog never filled")
}

// A server whose backlog is full is waited for, as a blocking connect
// would: Dial fails only at its connect timeout, saying so, having waited
// for room, and succeeds once the server makes room while it waits.
func TestDialFullBacklog(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.sock")
	lfd := listenRaw(t, path, 0)
	fillBacklog(t, path)

	waits := 0
	_, err := Dialer{ConnectTimeout: 100 * time.Millisecond, backlog: func() { waits++ }}.Dial(context.Background(), path)
	if !errors.Is(err, ErrNoAnswer) || !strings.Contains(err.Error(), "took over 100ms") {
		t.Fatalf("Dial with a full backlog: %v, want ErrNoAnswer at the connect timeout", err)
	}
	if waits == 0 {
		t.Fatal("Dial gave up without waiting for room")
	}

	// Room is made once Dial waits for it.
	waiting := make(chan struct{})
	var once sync.Once
	accepted := make(chan error, 1)
	go func() {
		<-waiting
		nfd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC) // makes room
		if err == nil {
			t.Cleanup(func() { unix.Close(nfd) })
		}
		accepted <- err
	}()
	d := Dialer{ConnectTimeout: time.Minute, backlog: func() { once.Do(func() { close(waiting) }) }}
	c, err := d.Dial(context.Background(), path)
	if err != nil {
		t.Fatalf("Dial once the server accepts: %v", err)
	}
	c.Close()
	if err := <-accepted; err != nil {
		t.Fatal(err)
	}
}

// Dial's errors name the socket and keep the cause: no socket file, and a
// socket nobody listens on.
func TestDialErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := Dial(context.Background(), filepath.Join(dir, "none.sock"))
	if !errors.Is(err, syscall.ENOENT) || !notListening(err) {
		t.Fatalf("Dial of a missing socket: %v", err)
	}
	path := filepath.Join(dir, "dead.sock")
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	unix.Close(fd) // the file stays, nobody listens
	_, err = Dial(context.Background(), path)
	if !errors.Is(err, syscall.ECONNREFUSED) || !notListening(err) {
		t.Fatalf("Dial of a dead socket: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Dial(ctx, path); !errors.Is(err, context.Canceled) {
		t.Fatalf("Dial with a cancelled context: %v", err)
	}
}

// The connection Dial makes is not inherited by the programs the client
// starts (close-on-exec), and goes through the poller (non-blocking).
func TestDialSocketFlags(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "s.sock")
	listenRaw(t, path, 8)
	f, err := dialUnix(context.Background(), path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) {
		fdfl, _ := unix.FcntlInt(fd, unix.F_GETFD, 0)
		fl, _ := unix.FcntlInt(fd, unix.F_GETFL, 0)
		if fdfl&unix.FD_CLOEXEC == 0 || fl&unix.O_NONBLOCK == 0 {
			t.Errorf("socket flags: fd %#x, file %#x: want close-on-exec and non-blocking", fdfl, fl)
		}
	})
	// A read with nothing to read ends at its deadline, not never.
	f.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
	if _, err := f.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past its deadline: %v", err)
	}
}
