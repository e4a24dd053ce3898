package main

import (
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/indexd/indexd/bench/internal/corpus"
	"github.com/indexd/indexd/ignore"
)

// The plan is made in one sequential pass from the seed; the files' bytes
// are then generated from per-file seeds, so the tree does not depend on
// how many writers run or in which order they finish.

// lang is the language a directory's source files are mostly written in.
type lang int

const (
	langGo lang = iota
	langTS
	langPy
	langJava
	langRust
	langC
	langJS
	numLangs
)

// langWeights: how often a top-level project uses each language.
var langWeights = [numLangs]int{langGo: 30, langTS: 20, langPy: 18, langJava: 10, langRust: 7, langC: 8, langJS: 7}

type extWeight struct {
	ext string
	w   int
}

// langExts: the file kinds found in a directory of each language.
var langExts = [numLangs][]extWeight{
	langGo:   {{".go", 70}, {"_test.go", 18}, {".md", 3}, {".json", 2}, {".yaml", 3}, {".proto", 2}, {".sh", 1}, {".txt", 1}},
	langTS:   {{".ts", 48}, {".tsx", 24}, {".test.ts", 8}, {".json", 6}, {".css", 5}, {".md", 4}, {".js", 3}, {".html", 2}},
	langPy:   {{".py", 80}, {".md", 4}, {".txt", 3}, {".yaml", 4}, {".json", 3}, {".toml", 2}, {".sh", 2}, {".sql", 2}},
	langJava: {{".java", 82}, {".xml", 6}, {".properties", 4}, {".md", 3}, {".sql", 3}, {".yaml", 2}},
	langRust: {{".rs", 84}, {".toml", 6}, {".md", 6}, {".json", 2}, {".sh", 2}},
	langC:    {{".c", 40}, {".h", 32}, {".cc", 12}, {".md", 4}, {".txt", 3}, {".sh", 4}, {".py", 5}},
	langJS:   {{".js", 66}, {".json", 10}, {".css", 8}, {".md", 6}, {".html", 6}, {".sh", 4}},
}

// testdataExts: the files of a testdata directory.
var testdataExts = []extWeight{{".json", 58}, {".txt", 14}, {".golden", 10}, {".yaml", 8}, {".go", 5}, {".py", 5}}

type kind uint8

const (
	kindSource     kind = iota // text in the main tree
	kindBinary                 // NUL bytes in the first 8 KiB
	kindLarge                  // 1–20 MB of text
	kindNodeModule             // under node_modules
	kindBuild                  // under build/
	kindHidden                 // under a hidden name
	kindGitignored             // matched by a generated .gitignore
	kindGitignore              // a .gitignore file
)

// Plants: tokens a file must contain.
const (
	plantRare = 1 << iota
	plantRareUpper
	plantMain
	plantHandler
)

type dirPlan struct {
	rel      string // "" for the root
	depth    int
	lang     lang
	testdata bool // inside a testdata directory
	names    map[string]bool
	pkg      string // Go package name
	files    int    // source files still to place
}

type filePlan struct {
	rel    string
	kind   kind
	ext    string // ".go", "_test.go", ".json" ...
	lang   lang
	dir    int    // index of its directory in plan.dirs
	seed   uint64 // content seed
	size   int64  // target bytes for binary and large files
	plants uint8
	mode   uint32
	mtime  int64 // Unix nanoseconds
}

type plan struct {
	dirs  []*dirPlan
	files []*filePlan
	seed  uint64
	ref   time.Time
	man   corpus.Manifest
}

type config struct {
	files     int
	seed      uint64
	large     int
	largeMaxB int64
	ref       time.Time
}

// pcg returns a generator for stream s of the seed.
func pcg(seed, s uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, s^0x9e3779b97f4a7c15)) }

func pickExt(r *rand.Rand, ws []extWeight) string {
	total := 0
	for _, w := range ws {
		total += w.w
	}
	n := r.IntN(total)
	for _, w := range ws {
		if n < w.w {
			return w.ext
		}
		n -= w.w
	}
	return ws[0].ext
}

func pickLang(r *rand.Rand) lang {
	total := 0
	for _, w := range langWeights {
		total += w
	}
	n := r.IntN(total)
	for l, w := range langWeights {
		if n < w {
			return lang(l)
		}
		n -= w
	}
	return langGo
}

// skewed picks from list, earlier entries more often.
func skewed(r *rand.Rand, list []string) string {
	u := r.Float64()
	return list[int(u*u*float64(len(list)))]
}

func okDirName(n string) bool {
	return n != "" && !ignore.DefaultDirs[n] && n != "internal" && n != "testdata" && n != "node_modules"
}

// makePlan lays out the whole tree.
func makePlan(c config) *plan {
	r := pcg(c.seed, 0)
	p := &plan{seed: c.seed, ref: c.ref}
	n := c.files
	// Budget: special files first, the main tree gets the rest.
	nBinary := n * 3 / 1000
	nNode := n * 3 / 100
	nBuild := n * 2 / 100
	nHidden := n * 5 / 1000
	nIgnored := n * 4 / 1000
	nLarge := min(c.large, n/100)
	nGitignore := 1 + n/20000
	nSource := n - nBinary - nNode - nBuild - nHidden - nIgnored - nLarge - nGitignore
	if nSource < 1 {
		nSource, nBinary, nNode, nBuild, nHidden, nIgnored, nLarge, nGitignore = n, 0, 0, 0, 0, 0, 0, 0
	}

	root := &dirPlan{names: map[string]bool{}, pkg: "mono"}
	p.dirs = append(p.dirs, root)
	newDir := func(parent int, name string) int {
		pd := p.dirs[parent]
		pd.names[name] = true
		d := &dirPlan{rel: path.Join(pd.rel, name), depth: pd.depth + 1, lang: pd.lang, testdata: pd.testdata || name == "testdata", names: map[string]bool{}}
		d.pkg = goPkgName(name)
		p.dirs = append(p.dirs, d)
		return len(p.dirs) - 1
	}

	// The main tree: top-level projects, then directories attached to a
	// random existing one (a random recursive tree: depth grows like the
	// log of the directory count), each holding 10–30 files.
	left := nSource
	var mainDirs []int
	tops := slices.Clone(topLevelDirs)
	r.Shuffle(len(tops), func(i, j int) { tops[i], tops[j] = tops[j], tops[i] })
	tops = tops[:min(len(tops), 8+r.IntN(5))]
	for _, t := range tops {
		i := newDir(0, t)
		p.dirs[i].lang = pickLang(r)
		mainDirs = append(mainDirs, i)
	}
	root.files = min(left, 6)
	left -= root.files
	const maxDepth = 14
	for left > 0 {
		var parent int
		for {
			parent = mainDirs[r.IntN(len(mainDirs))]
			if p.dirs[parent].depth < maxDepth {
				break
			}
		}
		pd := p.dirs[parent]
		var name string
		switch u := r.Float64(); {
		case pd.testdata:
			name = skewed(r, []string{"golden", "fixtures", "cases", "input", "output", "valid", "invalid", "v1", "v2"})
		case u < 0.035:
			name = "testdata"
		case u < 0.085:
			name = "internal"
		case u < 0.55:
			name = skewed(r, dirNamesCommon)
		default:
			name = skewed(r, codeWords)
		}
		special := name == "testdata" || name == "internal"
		if special && pd.names[name] || !special && !pd.testdata && !okDirName(name) {
			continue
		}
		for k := 2; pd.names[name]; k++ {
			name = strings.TrimRight(name, "0123456789") + strconv.Itoa(k)
		}
		i := newDir(parent, name)
		if r.IntN(100) < 12 {
			p.dirs[i].lang = pickLang(r)
		}
		d := p.dirs[i]
		d.files = min(left, 10+r.IntN(21))
		left -= d.files
		mainDirs = append(mainDirs, i)
	}
	for _, di := range append([]int{0}, mainDirs...) {
		d := p.dirs[di]
		for range d.files {
			var ext string
			if d.testdata {
				ext = pickExt(r, testdataExts)
			} else {
				ext = pickExt(r, langExts[d.lang])
			}
			p.addFile(r, di, kindSource, ext, d.lang)
		}
	}
	pickMain := func() int { return mainDirs[r.IntN(len(mainDirs))] }

	// Binary and large files, in random directories of the main tree.
	binExts := []string{".png", ".jpg", ".so", ".bin", ".jar", ".woff2", ".pdf", ".o"}
	for range nBinary {
		f := p.addFile(r, pickMain(), kindBinary, binExts[r.IntN(len(binExts))], langGo)
		f.size = int64(math.Min(math.Exp(9+1.2*r.NormFloat64()), 400<<10)) + 64
	}
	largeExts := []string{".min.js", ".json", ".sql", ".go", ".csv", ".md"}
	for i := range nLarge {
		f := p.addFile(r, pickMain(), kindLarge, largeExts[i%len(largeExts)], langGo)
		f.size = largeSize(i, nLarge, c.largeMaxB)
		p.man.LargeFiles = append(p.man.LargeFiles, f.rel)
	}

	// Files a generated .gitignore matches: *.log and *.tmp files, and a
	// coverage/ directory at the root.
	if nIgnored > 0 {
		cov := newDir(0, "coverage")
		for i := range nIgnored {
			switch i % 3 {
			case 0:
				p.addFile(r, cov, kindGitignored, pickExt(r, []extWeight{{".html", 2}, {".out", 1}}), langGo)
			case 1:
				p.addFile(r, pickMain(), kindGitignored, ".log", langGo)
			default:
				p.addFile(r, pickMain(), kindGitignored, ".tmp", langGo)
			}
		}
	}

	// .gitignore files: the root's, and a few nested ones.
	if nGitignore > 0 {
		p.addNamed(0, ".gitignore", kindGitignore, langGo)
		for range nGitignore - 1 {
			d := pickMain()
			if !p.dirs[d].names[".gitignore"] {
				p.addNamed(d, ".gitignore", kindGitignore, langGo)
			} else {
				p.addFile(r, d, kindSource, ".md", p.dirs[d].lang)
			}
		}
	}

	// Hidden directories and files: .github/ at the root, .config/ and
	// .cache/ (also default-ignored) in places, dotfiles in random dirs.
	if nHidden > 0 {
		gh := newDir(0, ".github")
		wf := newDir(gh, "workflows")
		cfgDirs := []int{wf}
		for range 1 + nHidden/400 {
			cfgDirs = append(cfgDirs, newDir(pickMainUnique(p, r, mainDirs, ".config"), ".config"))
		}
		cacheDir := newDir(0, ".cache")
		for i := range nHidden {
			switch i % 4 {
			case 0:
				p.addFile(r, cfgDirs[r.IntN(len(cfgDirs))], kindHidden, ".yaml", langGo)
			case 1:
				p.addFile(r, cacheDir, kindHidden, ".json", langGo)
			default:
				d := pickMain()
				name := []string{".eslintrc.json", ".prettierrc", ".env.example", ".dockerignore", ".editorconfig", ".npmrc"}[r.IntN(6)]
				if p.dirs[d].names[name] {
					p.addFile(r, cacheDir, kindHidden, ".json", langGo)
					continue
				}
				p.addNamed(d, name, kindHidden, langGo)
			}
		}
	}

	// node_modules in a JavaScript/TypeScript project (or the first
	// top-level one): packages of package.json, README.md, index.js and
	// lib/*.js.
	if nNode > 0 {
		host := mainDirs[0]
		for _, i := range mainDirs {
			if d := p.dirs[i]; d.depth == 2 && (d.lang == langTS || d.lang == langJS) {
				host = i
				break
			}
		}
		nm := newDir(host, "node_modules")
		p.dirs[nm].lang = langJS
		left := nNode
		for left > 0 {
			name := skewed(r, codeWords) + "-" + skewed(r, codeWords)
			parent := nm
			if r.IntN(5) == 0 {
				scope := "@" + skewed(r, codeWords)
				if !p.dirs[nm].names[scope] {
					newDir(nm, scope)
				}
				parent = p.childIndex(nm, scope)
			}
			if p.dirs[parent].names[name] {
				continue
			}
			pkg := newDir(parent, name)
			for _, f := range []string{"package.json", "README.md", "index.js"} {
				if left > 0 {
					p.addNamed(pkg, f, kindNodeModule, langJS)
					left--
				}
			}
			if left > 0 {
				lib := newDir(pkg, "lib")
				for range min(left, r.IntN(24)) {
					p.addFile(r, lib, kindNodeModule, ".js", langJS)
					left--
				}
			}
		}
	}

	// build/ at the root: generated JavaScript, declarations, source maps.
	if nBuild > 0 {
		b := newDir(0, "build")
		p.dirs[b].lang = langJS
		outs := []int{b}
		left := nBuild
		for left > 0 {
			parent := outs[r.IntN(len(outs))]
			d := newDir(parent, uniqueName(p.dirs[parent], skewed(r, codeWords)))
			outs = append(outs, d)
			for range min(left, 10+r.IntN(30)) {
				p.addFile(r, d, kindBuild, []string{".js", ".d.ts", ".js.map"}[r.IntN(3)], langJS)
				left--
			}
		}
	}

	p.plant(r)
	p.setTimes(r, c)
	p.count()
	return p
}

// childIndex returns the index of parent's child directory name.
func (p *plan) childIndex(parent int, name string) int {
	want := path.Join(p.dirs[parent].rel, name)
	for i := len(p.dirs) - 1; i >= 0; i-- {
		if p.dirs[i].rel == want {
			return i
		}
	}
	panic("gentree: no directory " + want)
}

// pickMainUnique picks a main-tree directory without a child called name.
func pickMainUnique(p *plan, r *rand.Rand, mainDirs []int, name string) int {
	for {
		d := mainDirs[r.IntN(len(mainDirs))]
		if !p.dirs[d].names[name] {
			return d
		}
	}
}

func uniqueName(d *dirPlan, name string) string {
	base := name
	for k := 2; d.names[name]; k++ {
		name = base + strconv.Itoa(k)
	}
	return name
}

// largeSize spreads the large files from 1 MB to max.
func largeSize(i, n int, max int64) int64 {
	const lo = 1 << 20
	if n <= 1 || max <= lo {
		return min(lo, max)
	}
	f := float64(i) / float64(n-1)
	return int64(lo * math.Pow(float64(max)/lo, f))
}

// addFile adds a file with a generated name to directory di.
func (p *plan) addFile(r *rand.Rand, di int, k kind, ext string, l lang) *filePlan {
	d := p.dirs[di]
	var name string
	for try := 0; ; try++ {
		name = fileStem(r, ext, d) + ext
		if try > 3 {
			name = fileStem(r, ext, d) + strconv.Itoa(try) + ext
		}
		if !d.names[name] {
			break
		}
	}
	return p.addNamed(di, name, k, l)
}

func (p *plan) addNamed(di int, name string, k kind, l lang) *filePlan {
	d := p.dirs[di]
	d.names[name] = true
	f := &filePlan{rel: path.Join(d.rel, name), kind: k, lang: l, dir: di, mode: 0o644}
	f.ext = extOf(name)
	f.seed = splitmix(p.seed ^ splitmix(uint64(len(p.files))+1))
	if f.ext == ".sh" {
		f.mode = 0o755
	}
	p.files = append(p.files, f)
	return f
}

// extOf returns the generator's extension of a file name.
func extOf(name string) string {
	for _, e := range []string{"_test.go", ".test.ts", ".min.js", ".d.ts", ".js.map"} {
		if strings.HasSuffix(name, e) {
			return e
		}
	}
	if strings.HasPrefix(name, ".") && strings.Count(name, ".") == 1 {
		return name // .prettierrc, .npmrc ...
	}
	return path.Ext(name)
}

// fileStem names a file in the style of its language.
func fileStem(r *rand.Rand, ext string, d *dirPlan) string {
	w1, w2 := skewed(r, codeWords), skewed(r, codeWords)
	switch ext {
	case ".java":
		return pascal(w1) + pascal(w2)
	case ".tsx":
		return pascal(w1) + pascal(w2)
	case ".ts", ".test.ts", ".js", ".css", ".d.ts", ".js.map", ".html":
		if r.IntN(2) == 0 {
			return w1
		}
		return w1 + "-" + w2
	case ".md":
		if r.IntN(4) == 0 {
			return strings.ToUpper(w1)
		}
		return w1 + "-" + w2
	}
	if r.IntN(3) == 0 {
		return w1
	}
	return w1 + "_" + w2
}

func pascal(w string) string { return strings.ToUpper(w[:1]) + w[1:] }

func goPkgName(dir string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(dir) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' && b.Len() > 0 {
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 || b.String() == "main" {
		return "pkg"
	}
	return b.String()
}

// splitmix is SplitMix64: distinct, well-mixed seeds from a counter.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// plant chooses the files that carry the planted tokens.
func (p *plan) plant(r *rand.Rand) {
	var text, goFiles, nodeJS []int
	for i, f := range p.files {
		switch {
		case f.kind == kindSource && f.ext == ".go" && !p.dirs[f.dir].testdata:
			goFiles = append(goFiles, i)
			text = append(text, i)
		case f.kind == kindSource:
			text = append(text, i)
		case f.kind == kindNodeModule && f.ext == ".js":
			nodeJS = append(nodeJS, i)
		}
	}
	take := func(from []int, k int, bit uint8, avoid uint8) int {
		got := 0
		for _, j := range r.Perm(len(from)) {
			if got == k {
				break
			}
			f := p.files[from[j]]
			if f.plants&(bit|avoid) != 0 {
				continue
			}
			f.plants |= bit
			got++
		}
		return got
	}
	p.man.RareFiles = take(text, 3, plantRare, 0)
	p.man.RareUpperFiles = take(text, 2, plantRareUpper, plantRare)
	p.man.RareFilesIgnored = take(nodeJS, 1, plantRare, 0)
	p.man.FuncMainFiles = take(goFiles, len(p.files)/100, plantMain, 0)
	p.man.HandlerFiles = take(goFiles, len(p.files)/200, plantHandler, 0)
	for _, f := range p.files {
		if f.plants&plantHandler != 0 {
			p.man.HandlerLines += handlerCount(f.seed)
		}
	}
}

// handlerCount is how many `func XxxHandler(` declarations a file planted
// with them holds (1–3), derived from its seed.
func handlerCount(seed uint64) int { return 1 + int(splitmix(seed^0x5a5a)%3) }

// setTimes gives every file an mtime in the two years before the
// reference time, newer ones more likely; 1% fall within its last 24 hours.
func (p *plan) setTimes(r *rand.Rand, c config) {
	ref := c.ref.UnixNano()
	span := float64(730 * 24 * time.Hour)
	day := int64(24 * time.Hour)
	for _, f := range p.files {
		if r.IntN(100) == 0 {
			f.mtime = ref - 1 - r.Int64N(day-1)
			p.man.RecentFiles++
			continue
		}
		u := r.Float64()
		f.mtime = ref - day - int64(u*u*span)
	}
}

// count fills the manifest's counts.
func (p *plan) count() {
	m := &p.man
	m.Files = len(p.files)
	m.Dirs = len(p.dirs) - 1
	m.Globs = map[string]int{}
	for _, d := range p.dirs {
		m.MaxDepth = max(m.MaxDepth, d.depth)
	}
	for _, f := range p.files {
		switch f.kind {
		case kindBinary:
			m.BinaryFiles++
		case kindNodeModule:
			m.NodeModulesFiles++
		case kindBuild:
			m.BuildFiles++
		case kindHidden:
			m.HiddenFiles++
		case kindGitignored:
			m.GitignoredFiles++
		}
		if f.kind == kindSource || f.kind == kindLarge || f.kind == kindBinary {
			for _, g := range corpus.GlobPatterns {
				if globMatch(g, f.rel) {
					m.Globs[g]++
				}
			}
		}
	}
}

// globMatch matches the three benchmark patterns (all of the form
// **/[DIR/**/]*.EXT).
func globMatch(pattern, rel string) bool {
	rest, _ := strings.CutPrefix(pattern, "**/")
	dir, ext, ok := strings.Cut(rest, "/**/*")
	if !ok {
		ext = strings.TrimPrefix(rest, "*")
		dir = ""
	}
	if !strings.HasSuffix(rel, ext) {
		return false
	}
	if dir == "" {
		return true
	}
	parts := strings.Split(rel, "/")
	return slices.Contains(parts[:len(parts)-1], dir)
}
