package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/indexd/indexd/bench/internal/corpus"
	"github.com/indexd/indexd/ignore"
	"github.com/indexd/indexd/internal/testtree"
)

func generate(t *testing.T, c config, workers int) string {
	t.Helper()
	dir := t.TempDir()
	if err := write(dir, makePlan(c), workers); err != nil {
		t.Fatal(err)
	}
	return dir
}

// snapshot describes every entry of a tree: path, type and mode, mtime,
// and a hash of a file's contents.
func snapshot(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		line := fmt.Sprintf("%s %v %d", rel, fi.Mode(), fi.ModTime().UnixNano())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out = append(out, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var testConfig = config{files: 3000, seed: 42, large: 1, largeMaxB: 1 << 20, ref: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	cfg := testConfig
	if testtree.RaceEnabled {
		cfg.files = 1000 // the race detector needs no more; without it, 3,000
	}
	a := snapshot(t, generate(t, cfg, 1))
	b := snapshot(t, generate(t, cfg, 8))
	if len(a) < cfg.files {
		t.Fatalf("only %d entries", len(a))
	}
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		for i := range min(len(a), len(b)) {
			if a[i] != b[i] {
				t.Fatalf("trees differ at entry %d:\n%s\n%s", i, a[i], b[i])
			}
		}
		t.Fatalf("trees differ in length: %d, %d entries", len(a), len(b))
	}
	c := cfg
	c.seed++
	if d := snapshot(t, generate(t, c, 4)); strings.Join(a, "\n") == strings.Join(d, "\n") {
		t.Fatal("another seed made the same tree")
	}
}

// TestManifest checks the manifest's counts against the files written:
// the planted tokens and the glob counts, over what Grep and Glob see by
// default (no hidden names, no default-ignored directories, no files the
// generated .gitignore files match).
func TestManifest(t *testing.T) {
	t.Parallel()
	root := generate(t, testConfig, 4)
	m, err := corpus.ReadManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	count := func(re string) (files, lines int) {
		rx := regexp.MustCompile(re)
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			name := d.Name()
			if p != root && (strings.HasPrefix(name, ".") || d.IsDir() && (ignore.DefaultDirs[name] || name == "coverage")) {
				if d.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
			if d.IsDir() || strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".tmp") {
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0 {
				return nil // binary
			}
			n := len(rx.FindAllIndex(b, -1))
			if n > 0 {
				files++
				lines += n
			}
			return nil
		})
		return files, lines
	}
	for _, c := range []struct {
		re           string
		files, lines int
	}{
		{corpus.RareLiteral, m.RareFiles, m.RareFiles},
		{corpus.RareLiteralUpper, m.RareUpperFiles, m.RareUpperFiles},
		{`func main\b`, m.FuncMainFiles, m.FuncMainFiles},
		{`func \w+Handler\(`, m.HandlerFiles, m.HandlerLines},
	} {
		if f, l := count(c.re); f != c.files || l != c.lines {
			t.Errorf("%s: %d files, %d lines; manifest says %d, %d", c.re, f, l, c.files, c.lines)
		}
	}
	if m.RareFiles != 3 || m.FuncMainFiles != testConfig.files/100 || m.HandlerFiles == 0 {
		t.Errorf("planted rates: rare %d, func main %d, handlers %d", m.RareFiles, m.FuncMainFiles, m.HandlerFiles)
	}
	for _, g := range corpus.GlobPatterns {
		if m.Globs[g] == 0 {
			t.Errorf("glob %s: no files", g)
		}
	}
	var files int
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() && d.Name() != corpus.ManifestName {
			files++
		}
		return nil
	})
	if files != testConfig.files || m.Files != testConfig.files {
		t.Errorf("%d files written, manifest says %d, want %d", files, m.Files, testConfig.files)
	}
}
