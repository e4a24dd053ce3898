package clock

import (
	"testing"
	"time"
)

// recv returns what ch holds now, or fails.
func recv(t *testing.T, ch <-chan time.Time, what string) time.Time {
	t.Helper()
	select {
	case v := <-ch:
		return v
	default:
		t.Fatalf("%s: nothing sent", what)
		return time.Time{}
	}
}

// none fails if ch holds a value.
func none(t *testing.T, ch <-chan time.Time, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("%s: sent %v", what, v)
	default:
	}
}

// A Fake's timers fire when Advance reaches their deadline, and only
// then; Stop and Reset take back what is armed and what was sent unread;
// Armed says when timers wait.
func TestFake(t *testing.T) {
	t.Parallel()
	start := time.Unix(1000, 0)
	f := NewFake(start)
	armed := f.Armed(2)
	a := f.NewTimer(time.Second)
	select {
	case <-armed:
		t.Fatal("Armed(2) closed with one timer armed")
	default:
	}
	b := f.NewTimer(3 * time.Second)
	select {
	case <-armed:
	default:
		t.Fatal("Armed(2) not closed with two timers armed")
	}
	f.Advance(999 * time.Millisecond)
	none(t, a.C(), "a before its deadline")
	f.Advance(time.Millisecond)
	if got := recv(t, a.C(), "a at its deadline"); !got.Equal(start.Add(time.Second)) {
		t.Errorf("a sent %v, want %v", got, start.Add(time.Second))
	}
	if a.Stop() {
		t.Error("Stop of a fired timer reports it armed")
	}
	if !b.Reset(time.Second) {
		t.Error("Reset of an armed timer reports it was not")
	}
	f.Advance(time.Second)
	recv(t, b.C(), "b at its new deadline")
	f.Advance(time.Hour)
	none(t, b.C(), "b after it fired")

	// A value sent and unread is gone after Stop and after Reset.
	c := f.NewTimer(time.Second)
	f.Advance(time.Second)
	c.Stop()
	none(t, c.C(), "c after Stop")
	c.Reset(time.Second)
	f.Advance(time.Second)
	c.Reset(time.Second)
	none(t, c.C(), "c after Reset")
	if got := f.Now(); !got.Equal(start.Add(time.Hour + 4*time.Second)) {
		t.Errorf("Now = %v, want %v", got, start.Add(time.Hour+4*time.Second))
	}
	// A timer of no duration fires at once, armed or not.
	recv(t, f.NewTimer(0).C(), "a timer of no duration")
	if !c.Stop() {
		t.Error("Stop of an armed timer reports it was not")
	}
	select {
	case <-f.Armed(1):
		t.Error("Armed(1) closed with no timer armed")
	default:
	}
}
