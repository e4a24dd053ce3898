// Package corpus holds what the tree generator (bench/gentree) and the
// side-by-side harness (bench/sidebyside) must agree on: the planted
// tokens and the manifest the generator leaves at the top of a tree.
package corpus

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// ManifestName is the manifest's file name inside a generated tree. It is
// hidden, so no tool searches it by default.
const ManifestName = ".gentree.json"

// ManifestVersion is bumped whenever the generator's output changes for
// the same seed.
const ManifestVersion = 1

// Planted tokens. The generator's word lists never produce them (nor
// "main" or "handler" as identifiers), so every occurrence is planted and
// counted in the manifest.
const (
	// RareLiteral is planted in exactly Manifest.RareFiles visible files
	// (one line each), plus RareFilesIgnored files inside node_modules.
	RareLiteral = "QuokkaNeedleZeta"
	// RareLiteralUpper is RareLiteral in upper case, planted in other
	// files: a case-insensitive search finds both.
	RareLiteralUpper = "QUOKKANEEDLEZETA"
)

// Manifest describes a generated tree.
type Manifest struct {
	Version int    `json:"version"`
	Seed    uint64 `json:"seed"`
	// RefTime is the reference "now" (RFC 3339): mtimes lie before it,
	// RecentFiles of them within the 24 hours before it.
	RefTime string `json:"ref_time"`

	Files int   `json:"files"` // regular files written, the manifest excluded
	Dirs  int   `json:"dirs"`  // directories, the root excluded
	Bytes int64 `json:"bytes"` // total size of the files

	// What the files are.
	BinaryFiles      int      `json:"binary_files"`
	LargeFiles       []string `json:"large_files"` // root-relative paths
	NodeModulesFiles int      `json:"node_modules_files"`
	BuildFiles       int      `json:"build_files"`
	HiddenFiles      int      `json:"hidden_files"`     // dotfiles and files under hidden dirs (.gitignore files not counted)
	GitignoredFiles  int      `json:"gitignored_files"` // matched by the generated .gitignore files
	RecentFiles      int      `json:"recent_files"`
	MaxDepth         int      `json:"max_depth"`

	// Planted tokens: files (and lines) outside hidden, default-ignored
	// and gitignored paths, i.e. what Grep finds with default flags.
	RareFiles        int `json:"rare_files"`
	RareFilesIgnored int `json:"rare_files_ignored"` // inside node_modules
	RareUpperFiles   int `json:"rare_upper_files"`
	FuncMainFiles    int `json:"func_main_files"` // one `func main() {` each
	HandlerFiles     int `json:"handler_files"`   // files with `func XxxHandler(`
	HandlerLines     int `json:"handler_lines"`

	// Visible files (as above) matching the benchmark's glob patterns.
	Globs map[string]int `json:"globs"`
}

// ReadManifest reads the manifest of the generated tree at root; it
// returns an error wrapping fs.ErrNotExist when root has none.
func ReadManifest(root string) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(root, ManifestName))
	if err != nil {
		return nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("corpus: %s: %w", ManifestName, err)
	}
	if m.Version != ManifestVersion {
		return nil, fmt.Errorf("corpus: %s: version %d, want %d (regenerate the tree)", ManifestName, m.Version, ManifestVersion)
	}
	return &m, nil
}

// GlobPatterns are the glob queries the harness runs; the manifest counts
// the visible files matching each.
var GlobPatterns = []string{"**/*.go", "**/testdata/**/*.json", "**/internal/**/*.go"}
