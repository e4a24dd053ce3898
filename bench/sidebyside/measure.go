package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"time"
)

// outCounter consumes a command's standard output and counts its lines
// (each a result, for indexctl off a terminal as for the others).
type outCounter struct {
	lines int
}

func newOutCounter() *outCounter { return &outCounter{} }

func (w *outCounter) Write(p []byte) (int, error) {
	w.lines += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// sample is one timed run.
type sample struct {
	wall    time.Duration
	maxRSS  int64 // KiB
	lines   int   // output lines (result lines, for indexctl)
	header  string
	innerMS int // indexctl's own "Took Nms" / "in Nms", -1 if absent
}

var innerTime = regexp.MustCompile(`(?:Took|in) (\d+)ms\)`)

// runOnce runs argv in dir and times it. Exit status 1 (nothing found) is
// accepted; any other failure is an error carrying the command's stderr.
func runOnce(ctx context.Context, dir string, env, argv []string, indexctlOut bool) (sample, error) {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	out := newOutCounter()
	var stderr bytes.Buffer
	cmd.Stdout = out
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		msg := bytes.TrimSpace(stderr.Bytes())
		if len(msg) > 400 {
			msg = msg[:400]
		}
		return sample{}, fmt.Errorf("%v: %s", err, msg)
	}
	s := sample{wall: wall, lines: out.lines, innerMS: -1}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru != nil {
		s.maxRSS = ru.Maxrss
	}
	if indexctlOut {
		// Off a terminal, indexctl's stdout is its results, a line each;
		// with --stats its summary and notes ("indexctl: [...]") are on
		// stderr.
		var notes []string
		for i, l := range bytes.Split(bytes.TrimSpace(stderr.Bytes()), []byte{'\n'}) {
			l = bytes.TrimPrefix(l, []byte("indexctl: "))
			if len(l) == 0 {
				continue
			}
			if i == 0 || l[0] == '[' {
				notes = append(notes, string(l))
			}
			if m := innerTime.FindSubmatch(l); m != nil {
				s.innerMS, _ = strconv.Atoi(string(m[1]))
			}
		}
		s.header = joinNotes(notes)
	}
	return s, nil
}

func joinNotes(notes []string) string {
	var b bytes.Buffer
	for i, n := range notes {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(n)
	}
	return b.String()
}

// stats summarises the runs of one tool on one query.
type stats struct {
	n                int
	median, p90, min time.Duration
	maxRSS           int64 // KiB, largest of the runs
	lines            int   // of the last run
	linesVary        bool  // runs disagreed on the line count
	header           string
	innerMedianMS    float64 // -1 if absent
	err              error
}

func summarize(ss []sample) stats {
	st := stats{n: len(ss), innerMedianMS: -1}
	if len(ss) == 0 {
		return st
	}
	d := make([]time.Duration, len(ss))
	var inner []int
	for i, s := range ss {
		d[i] = s.wall
		st.maxRSS = max(st.maxRSS, s.maxRSS)
		if s.lines != ss[0].lines {
			st.linesVary = true
		}
		if s.innerMS >= 0 {
			inner = append(inner, s.innerMS)
		}
	}
	slices.Sort(d)
	st.min = d[0]
	st.median = medianDur(d)
	st.p90 = d[(len(d)*9+9)/10-1] // nearest rank
	last := ss[len(ss)-1]
	st.lines, st.header = last.lines, last.header
	if len(inner) == len(ss) {
		slices.Sort(inner)
		m := len(inner) / 2
		if len(inner)%2 == 1 {
			st.innerMedianMS = float64(inner[m])
		} else {
			st.innerMedianMS = float64(inner[m-1]+inner[m]) / 2
		}
	}
	return st
}

// medianDur is the median of sorted d (the mean of the middle two for an
// even count).
func medianDur(d []time.Duration) time.Duration {
	m := len(d) / 2
	if len(d)%2 == 1 {
		return d[m]
	}
	return (d[m-1] + d[m]) / 2
}
