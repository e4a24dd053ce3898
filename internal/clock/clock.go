// Package clock is the time source of the code whose behaviour depends on
// how long something takes (an idle exit, an answer timeout): Real in
// production, and in tests a Fake, which moves only when the test moves
// it, so that no test depends on how fast the machine runs or how loaded
// it is.
//
// Only what that code needs is here: the time, and timers. A deadline
// given to the kernel (a socket's write deadline) stays on the system's
// clock.
package clock

import (
	"slices"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that sends the time on its channel once d
	// has passed.
	NewTimer(d time.Duration) Timer
}

// Timer is a Clock's time.Timer: its channel receives the time once, when
// it fires; Stop and Reset are time.Timer's, and as with those of Go 1.23
// no value sent before either is received after it.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
	Reset(d time.Duration) bool
}

// Real is the system's clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time        { return t.t.C }
func (t realTimer) Stop() bool                 { return t.t.Stop() }
func (t realTimer) Reset(d time.Duration) bool { return t.t.Reset(d) }

// Or returns c, or Real when c is nil: a zero Config or Dialer runs on the
// system's clock.
func Or(c Clock) Clock {
	if c == nil {
		return Real{}
	}
	return c
}

// Fake is a Clock that stands still until Advance moves it. Its timers
// fire during Advance, in the order of their deadlines; Armed tells a test
// when the code under test has set its timers, so that the test moves the
// clock only once they are waiting. It is safe for concurrent use.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	armed   []*fakeTimer // the timers waiting to fire
	waiters []waiter     // Armed's channels not yet closed
}

type waiter struct {
	n  int
	ch chan struct{}
}

// NewFake returns a Fake that says start until it is moved.
func NewFake(start time.Time) *Fake { return &Fake{now: start} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// NewTimer returns a timer firing once the fake time has moved d on (at
// once when d <= 0).
func (f *Fake) NewTimer(d time.Duration) Timer {
	t := &fakeTimer{f: f, c: make(chan time.Time, 1)}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t, d)
	return t
}

// Advance moves the fake time on by d and fires every timer whose
// deadline it reaches, earliest first; each receives the new time.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	due := slices.DeleteFunc(slices.Clone(f.armed), func(t *fakeTimer) bool { return t.at.After(f.now) })
	slices.SortStableFunc(due, func(a, b *fakeTimer) int { return a.at.Compare(b.at) })
	for _, t := range due {
		f.fireLocked(t)
	}
}

// Armed returns a channel closed once at least n timers are waiting to
// fire.
func (f *Fake) Armed(n int) <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	ch := make(chan struct{})
	f.waiters = append(f.waiters, waiter{n, ch})
	f.notifyLocked()
	return ch
}

// setLocked arms t to fire d from now, at once if d <= 0.
func (f *Fake) setLocked(t *fakeTimer, d time.Duration) {
	t.at = f.now.Add(d)
	if d <= 0 {
		f.fireLocked(t)
		return
	}
	if !slices.Contains(f.armed, t) {
		f.armed = append(f.armed, t)
	}
	f.notifyLocked()
}

// fireLocked sends the time on t's channel (unless a value waits there
// unread, as a time.Timer's would) and disarms it.
func (f *Fake) fireLocked(t *fakeTimer) {
	f.disarmLocked(t)
	select {
	case t.c <- f.now:
	default:
	}
}

// disarmLocked takes t off the armed timers; it reports whether it was
// there.
func (f *Fake) disarmLocked(t *fakeTimer) bool {
	i := slices.Index(f.armed, t)
	if i < 0 {
		return false
	}
	f.armed = slices.Delete(f.armed, i, i+1)
	return true
}

// notifyLocked closes the channels of the waiters whose count is reached.
func (f *Fake) notifyLocked() {
	f.waiters = slices.DeleteFunc(f.waiters, func(w waiter) bool {
		if len(f.armed) >= w.n {
			close(w.ch)
			return true
		}
		return false
	})
}

type fakeTimer struct {
	f  *Fake
	c  chan time.Time
	at time.Time // when it fires, while armed
}

func (t *fakeTimer) C() <-chan time.Time { return t.c }

func (t *fakeTimer) Stop() bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	return t.f.disarmLocked(t)
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.f.mu.Lock()
	defer t.f.mu.Unlock()
	t.drain()
	was := t.f.disarmLocked(t)
	t.f.setLocked(t, d)
	return was
}

// drain takes an unread value off the channel, so that none sent before
// a Stop or Reset is received after it.
func (t *fakeTimer) drain() {
	select {
	case <-t.c:
	default:
	}
}
