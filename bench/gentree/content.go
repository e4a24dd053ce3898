package main

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/indexd/indexd/bench/internal/corpus"
)

// gen appends generated text to b. Every file gets its own gen seeded from
// its plan, so its bytes depend on nothing else.
type gen struct {
	r *rand.Rand
	b []byte
	n int // newlines written
}

func (g *gen) s(s string)             { g.b = append(g.b, s...) }
func (g *gen) c(c byte)               { g.b = append(g.b, c) }
func (g *gen) nl()                    { g.b = append(g.b, '\n'); g.n++ }
func (g *gen) line(s string)          { g.s(s); g.nl() }
func (g *gen) in(n int) bool          { return g.r.IntN(n) == 0 }
func (g *gen) word() string           { return skewed(g.r, codeWords) }
func (g *gen) prose() string          { return skewed(g.r, proseWords) }
func (g *gen) pick(l []string) string { return l[g.r.IntN(len(l))] }

func (g *gen) tabs(k int) {
	for range k {
		g.b = append(g.b, '\t')
	}
}

func (g *gen) spaces(k int) {
	for range k {
		g.b = append(g.b, ' ')
	}
}

// Identifier styles.
const (
	camel = iota
	pascalCase
	snake
	upperSnake
	kebab
)

// id appends an identifier of 1..maxWords words.
func (g *gen) id(style, maxWords int) {
	k := 1 + g.r.IntN(maxWords)
	if k > 1 && g.in(2) {
		k-- // shorter names are commoner
	}
	for i := range k {
		w := g.word()
		switch style {
		case camel:
			if i == 0 {
				g.s(w)
			} else {
				g.c(w[0] - 'a' + 'A')
				g.s(w[1:])
			}
		case pascalCase:
			g.c(w[0] - 'a' + 'A')
			g.s(w[1:])
		case snake, kebab:
			if i > 0 {
				if style == kebab {
					g.c('-')
				} else {
					g.c('_')
				}
			}
			g.s(w)
		case upperSnake:
			if i > 0 {
				g.c('_')
			}
			g.s(strings.ToUpper(w))
		}
	}
	if g.in(25) {
		g.b = strconv.AppendInt(g.b, int64(g.r.IntN(10)), 10)
	}
}

func (g *gen) idStr(style, maxWords int) string {
	n := len(g.b)
	g.id(style, maxWords)
	s := string(g.b[n:])
	g.b = g.b[:n]
	return s
}

// sentence appends min..max prose words, the first capitalised.
func (g *gen) sentence(lo, hi int) {
	k := lo + g.r.IntN(hi-lo+1)
	for i := range k {
		w := g.prose()
		if i == 0 {
			g.c(upper(w[0]))
			g.s(w[1:])
			continue
		}
		g.c(' ')
		if g.in(9) {
			g.id(camel, 2)
		} else {
			g.s(w)
		}
	}
}

func upper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// num appends a number literal: mostly small, sometimes sizes, ports,
// years and timestamps.
func (g *gen) num() {
	switch g.r.IntN(12) {
	case 0:
		g.s(g.pick([]string{"1024", "4096", "8080", "65536", "3600", "2048", "1000", "8443", "5432", "6379", "9090", "1e6"}))
	case 1:
		g.b = strconv.AppendInt(g.b, 1600000000+int64(g.r.IntN(140000000)), 10)
	case 2:
		g.s("0x")
		g.b = strconv.AppendInt(g.b, int64(g.r.Uint32()), 16)
	case 3:
		g.b = strconv.AppendInt(g.b, int64(g.r.IntN(1000)), 10)
	default:
		g.b = strconv.AppendInt(g.b, int64(g.r.IntN(64)), 10)
	}
}

// str appends a quoted string literal.
func (g *gen) str(q byte) {
	g.c(q)
	switch g.r.IntN(5) {
	case 0:
		g.s("/api/v")
		g.b = strconv.AppendInt(g.b, int64(1+g.r.IntN(3)), 10)
		g.c('/')
		g.s(g.word())
		g.c('/')
		g.s(g.word())
	case 1:
		g.id(kebab, 3)
	default:
		g.sentence(2, 7)
	}
	g.c(q)
}

// args appends 0..max call arguments.
func (g *gen) args(max int, style int) {
	k := g.r.IntN(max + 1)
	for i := range k {
		if i > 0 {
			g.s(", ")
		}
		switch g.r.IntN(6) {
		case 0:
			g.num()
		case 1:
			g.str('"')
		default:
			g.id(style, 2)
		}
	}
}

// linesFor is the line count of a text file: log-normal, median about 70.
func linesFor(r *rand.Rand, ext string) int {
	mu := math.Log(70)
	switch ext {
	case ".json", ".yaml", ".toml", ".properties", ".golden", ".txt":
		mu = math.Log(35)
	case ".md":
		mu = math.Log(60)
	case ".css", ".html", ".sh":
		mu = math.Log(45)
	}
	n := int(math.Exp(mu + 0.9*r.NormFloat64()))
	return max(3, min(n, 6000))
}

// render returns the contents of f.
func render(p *plan, f *filePlan, buf []byte) []byte {
	g := &gen{r: pcg(f.seed, 1), b: buf[:0]}
	switch f.kind {
	case kindBinary:
		g.binary(f.ext, int(f.size))
		return g.b
	case kindLarge:
		g.large(f.ext, int(f.size))
		return g.b
	case kindGitignore:
		if f.rel == ".gitignore" {
			g.s("# Build outputs and local state.\n/build/\n/dist/\n/coverage/\n*.log\n*.tmp\n.env\n.env.local\n__pycache__/\n*.pyc\n")
		} else {
			g.s("# Editor and scratch files.\n*.swp\n*.tmp\n/scratch/\n")
		}
		return g.b
	}
	target := linesFor(g.r, f.ext)
	switch f.ext {
	case ".go", "_test.go":
		g.goFile(f, p.dirs[f.dir].pkg, target)
	case ".ts", ".tsx", ".test.ts", ".js", ".d.ts":
		g.tsFile(f.ext, target)
	case ".py":
		g.pyFile(target)
	case ".java":
		g.javaFile(f, p, target)
	case ".rs":
		g.rustFile(target)
	case ".c", ".h", ".cc":
		g.cFile(f.ext, target)
	case ".md":
		g.mdFile(target)
	case ".json", ".eslintrc", ".js.map":
		if f.ext == ".js.map" {
			g.sourceMap()
		} else {
			g.jsonFile(target)
		}
	case ".yaml", ".toml", ".properties", ".xml", ".prettierrc", ".npmrc", ".editorconfig", ".example":
		g.configFile(f.ext, target)
	case ".sql":
		g.sqlFile(target)
	case ".sh":
		g.shFile(target)
	case ".html":
		g.htmlFile(target)
	case ".css":
		g.cssFile(target)
	case ".proto":
		g.protoFile(target)
	case ".log":
		g.logFile(target)
	default:
		g.textFile(target)
	}
	if f.plants&(plantRare|plantRareUpper) != 0 {
		g.insertRare(f)
	}
	return g.b
}

// insertRare puts the planted literal on its own line at a random line
// boundary, commented in the file's language.
func (g *gen) insertRare(f *filePlan) {
	lit := corpus.RareLiteral
	if f.plants&plantRareUpper != 0 {
		lit = corpus.RareLiteralUpper
	}
	var l string
	switch f.ext {
	case ".py", ".sh", ".yaml", ".toml", ".properties", ".example", ".txt", ".golden":
		l = "# " + lit + ": keep in sync with the migration notes"
	case ".md":
		l = "The legacy marker `" + lit + "` is still accepted."
	case ".json", ".js.map":
		l = `  "marker": "` + lit + `",`
	case ".html", ".xml":
		l = "<!-- " + lit + " -->"
	case ".sql":
		l = "-- " + lit + ": legacy column marker"
	case ".css":
		l = "/* " + lit + " */"
	default:
		l = "// " + lit + ": keep in sync with the migration notes"
	}
	nls := bytes.Count(g.b, []byte{'\n'})
	at := g.r.IntN(nls + 1) // insert after the at-th newline
	pos := 0
	for i := 0; i < at; i++ {
		pos += bytes.IndexByte(g.b[pos:], '\n') + 1
	}
	tail := append([]byte(l+"\n"), g.b[pos:]...)
	g.b = append(g.b[:pos], tail...)
}

// --- Go ---

func (g *gen) goFile(f *filePlan, pkg string, target int) {
	test := f.ext == "_test.go"
	g.s("// Copyright 20")
	g.b = strconv.AppendInt(g.b, int64(15+g.r.IntN(10)), 10)
	g.line(" The Mono Authors. All rights reserved.")
	g.line("// Use of this source code is governed by a BSD-style")
	g.line("// license that can be found in the LICENSE file.")
	g.nl()
	main := f.plants&plantMain != 0
	handlers := 0
	if f.plants&plantHandler != 0 {
		handlers = handlerCount(f.seed)
	}
	if main {
		pkg = "main"
	}
	if g.in(3) {
		g.s("// Package ")
		g.s(pkg)
		g.c(' ')
		g.sentence(4, 12)
		g.line(".")
	}
	g.s("package ")
	g.line(pkg)
	g.nl()
	g.line("import (")
	k := 2 + g.r.IntN(6)
	for range k {
		g.s("\t\"")
		g.s(g.pick(goImports))
		g.line("\"")
	}
	if test {
		g.line("\t\"testing\"")
	}
	if g.in(2) {
		g.nl()
		g.s("\t\"example.com/mono/")
		g.s(g.word())
		g.c('/')
		g.s(g.word())
		g.line("\"")
	}
	g.line(")")
	g.nl()
	mainAt := -1
	if main {
		mainAt = g.r.IntN(target + 1)
	}
	for g.n < target || main || handlers > 0 {
		switch {
		case main && g.n >= mainAt:
			g.line("func main() {")
			g.goBody(1, 3+g.r.IntN(10))
			g.line("}")
			main = false
		case handlers > 0 && (g.n >= target || g.in(3)):
			g.goHandler()
			handlers--
		case test && g.in(2):
			g.s("func Test")
			g.id(pascalCase, 3)
			g.line("(t *testing.T) {")
			g.goBody(1, 3+g.r.IntN(15))
			g.line("}")
		default:
			g.goDecl()
		}
		g.nl()
	}
}

func (g *gen) goHandler() {
	g.s("// ")
	name := g.idStr(pascalCase, 2)
	g.s(name)
	g.s("Handler ")
	g.sentence(3, 9)
	g.line(".")
	g.s("func ")
	g.s(name)
	g.line("Handler(w http.ResponseWriter, r *http.Request) {")
	g.goBody(1, 3+g.r.IntN(12))
	g.line("}")
}

func (g *gen) goDecl() {
	switch g.r.IntN(10) {
	case 0, 1:
		typ := g.idStr(pascalCase, 2)
		g.s("// ")
		g.s(typ)
		g.c(' ')
		g.sentence(4, 14)
		g.line(".")
		g.s("type ")
		g.s(typ)
		g.line(" struct {")
		for range 2 + g.r.IntN(8) {
			g.c('\t')
			g.id(pascalCase, 2)
			g.c(' ')
			g.s(g.pick(goTypes))
			if g.in(3) {
				g.s(" `json:\"")
				g.id(snake, 2)
				g.s("\"`")
			}
			if g.in(4) {
				g.s(" // ")
				g.sentence(2, 8)
			}
			g.nl()
		}
		g.line("}")
	case 2:
		g.line("const (")
		for range 2 + g.r.IntN(6) {
			g.c('\t')
			g.id(camel, 3)
			g.s(" = ")
			if g.in(2) {
				g.num()
			} else {
				g.str('"')
			}
			g.nl()
		}
		g.line(")")
	case 3:
		g.s("type ")
		g.id(pascalCase, 2)
		g.line(" interface {")
		for range 1 + g.r.IntN(5) {
			g.c('\t')
			g.id(pascalCase, 2)
			g.s("(ctx context.Context, ")
			g.id(camel, 1)
			g.c(' ')
			g.s(g.pick(goTypes))
			g.s(") (")
			g.s(g.pick(goTypes))
			g.line(", error)")
		}
		g.line("}")
	default:
		name := g.idStr(pascalCase, 3)
		if g.in(3) {
			name = strings.ToLower(name[:1]) + name[1:]
		}
		g.s("// ")
		g.s(name)
		g.c(' ')
		g.sentence(4, 16)
		g.line(".")
		g.s("func ")
		if g.in(2) {
			g.s("(")
			g.c(g.word()[0])
			g.s(" *")
			g.id(pascalCase, 2)
			g.s(") ")
		}
		g.s(name)
		g.c('(')
		for i := range g.r.IntN(4) {
			if i > 0 {
				g.s(", ")
			}
			g.id(camel, 2)
			g.c(' ')
			g.s(g.pick(goTypes))
		}
		g.s(") (")
		g.s(g.pick(goTypes))
		g.line(", error) {")
		g.goBody(1, 3+g.r.IntN(20))
		g.line("\treturn nil, nil")
		g.line("}")
	}
}

func (g *gen) goBody(depth, n int) {
	for range n {
		g.tabs(depth)
		switch g.r.IntN(14) {
		case 0, 1:
			g.id(camel, 2)
			g.s(", err := ")
			g.id(camel, 1)
			g.c('.')
			g.id(pascalCase, 3)
			g.c('(')
			g.args(3, camel)
			g.c(')')
			g.nl()
			g.tabs(depth)
			g.line("if err != nil {")
			g.tabs(depth + 1)
			g.s("return nil, fmt.Errorf(\"")
			g.sentence(1, 4)
			g.line(": %w\", err)")
			g.tabs(depth)
			g.line("}")
		case 2:
			if depth < 4 {
				g.s("for _, ")
				g.id(camel, 1)
				g.s(" := range ")
				g.id(camel, 2)
				g.line(" {")
				g.goBody(depth+1, 1+g.r.IntN(4))
				g.tabs(depth)
				g.line("}")
			} else {
				g.line("continue")
			}
		case 3:
			g.s("// ")
			g.sentence(3, 14)
			g.nl()
		case 4:
			g.id(camel, 1)
			g.c('.')
			g.id(camel, 2)
			g.s(" = ")
			g.id(camel, 2)
			g.nl()
		case 5:
			g.s(g.pick([]string{"log.Printf(", "slog.Info(", "fmt.Fprintf(w, ", "t.Logf("}))
			g.str('"')
			g.s(", ")
			g.id(camel, 2)
			g.line(")")
		case 6:
			if depth < 4 {
				g.s("if ")
				g.id(camel, 2)
				g.s(g.pick([]string{" == nil", " != nil", " > 0", " == \"\"", ".Len() == 0"}))
				g.line(" {")
				g.goBody(depth+1, 1+g.r.IntN(3))
				g.tabs(depth)
				g.line("}")
			} else {
				g.line("break")
			}
		case 7:
			g.s("var ")
			g.id(camel, 2)
			g.c(' ')
			g.line(g.pick(goTypes))
		case 8:
			g.s("defer ")
			g.id(camel, 1)
			g.line(".Close()")
		case 9:
			g.id(camel, 1)
			g.s(" = append(")
			g.id(camel, 1)
			g.s(", ")
			g.id(camel, 2)
			g.line(")")
		case 10:
			g.s("ctx, cancel := context.WithTimeout(ctx, ")
			g.num()
			g.line("*time.Millisecond)")
			g.tabs(depth)
			g.line("defer cancel()")
		case 11:
			g.s("mux.Handle(\"/")
			g.s(g.word())
			g.s("\", New")
			g.id(pascalCase, 1)
			g.line("Handler(svc))")
		default:
			g.id(camel, 2)
			g.s(" := ")
			g.id(camel, 1)
			g.c('.')
			g.id(pascalCase, 2)
			g.c('(')
			g.args(3, camel)
			g.line(")")
		}
	}
}

// --- TypeScript / JavaScript ---

func (g *gen) tsFile(ext string, target int) {
	ts := ext != ".js"
	for range 1 + g.r.IntN(6) {
		g.s("import { ")
		g.id(pascalCase, 2)
		if g.in(2) {
			g.s(", ")
			g.id(camel, 2)
		}
		g.s(" } from '")
		if g.in(3) {
			g.s("@mono/")
		} else {
			g.s("./")
		}
		g.id(kebab, 2)
		g.line("';")
	}
	g.nl()
	typ := func() {
		if ts {
			g.s(": ")
			g.s(g.pick(tsTypes))
		}
	}
	for g.n < target {
		switch g.r.IntN(8) {
		case 0:
			if !ts {
				continue
			}
			g.s("export interface ")
			g.id(pascalCase, 2)
			g.line(" {")
			for range 2 + g.r.IntN(7) {
				g.s("  ")
				g.id(camel, 2)
				if g.in(4) {
					g.c('?')
				}
				typ()
				g.line(";")
			}
			g.line("}")
		case 1, 2:
			g.s("export class ")
			g.id(pascalCase, 2)
			g.line(" {")
			g.s("  constructor(private readonly ")
			g.id(camel, 2)
			typ()
			g.line(") {}")
			for range 1 + g.r.IntN(4) {
				g.nl()
				g.s("  async ")
				g.id(camel, 3)
				g.c('(')
				g.id(camel, 1)
				typ()
				g.c(')')
				typ()
				g.line(" {")
				g.tsBody(2, 2+g.r.IntN(10))
				g.line("  }")
			}
			g.line("}")
		case 3:
			g.s("export const ")
			g.id(upperSnake, 2)
			g.s(" = ")
			g.num()
			g.line(";")
		case 4:
			g.s("export function ")
			g.id(camel, 2)
			g.line("Handler(req: Request, res: Response) {")
			g.tsBody(1, 2+g.r.IntN(8))
			g.line("}")
		default:
			g.s("export function ")
			g.id(camel, 3)
			g.c('(')
			g.id(camel, 1)
			typ()
			g.s(", ")
			g.id(camel, 2)
			typ()
			g.c(')')
			typ()
			g.line(" {")
			g.tsBody(1, 2+g.r.IntN(14))
			g.line("}")
		}
		g.nl()
	}
}

func (g *gen) tsBody(depth, n int) {
	for range n {
		g.spaces(2 * depth)
		switch g.r.IntN(9) {
		case 0, 1:
			g.s("const ")
			g.id(camel, 2)
			g.s(" = await this.")
			g.id(camel, 1)
			g.c('.')
			g.id(camel, 2)
			g.c('(')
			g.args(3, camel)
			g.line(");")
		case 2:
			g.s("if (!")
			g.id(camel, 2)
			g.s(") { throw new Error(")
			g.str('\'')
			g.line("); }")
		case 3:
			g.s("// ")
			g.sentence(3, 12)
			g.nl()
		case 4:
			if depth < 4 {
				g.s("for (const ")
				g.id(camel, 1)
				g.s(" of ")
				g.id(camel, 2)
				g.line(") {")
				g.tsBody(depth+1, 1+g.r.IntN(3))
				g.spaces(2 * depth)
				g.line("}")
			} else {
				g.line("continue;")
			}
		case 5:
			g.s("logger.")
			g.s(g.pick([]string{"info", "debug", "warn", "error"}))
			g.c('(')
			g.str('`')
			g.line(");")
		case 6:
			g.s("return { ")
			g.id(camel, 1)
			g.s(": ")
			g.id(camel, 2)
			g.s(", ")
			g.id(camel, 1)
			g.s(": ")
			g.num()
			g.line(" };")
		default:
			g.s("let ")
			g.id(camel, 2)
			g.s(" = ")
			g.id(camel, 2)
			g.c('.')
			g.id(camel, 1)
			g.line(";")
		}
	}
}

// --- Python ---

func (g *gen) pyFile(target int) {
	g.line(`"""`)
	g.sentence(5, 14)
	g.line(".")
	g.line(`"""`)
	for range 1 + g.r.IntN(5) {
		g.s("import ")
		g.line(g.pick(pyImports))
	}
	g.s("from ")
	g.id(snake, 1)
	g.c('.')
	g.id(snake, 1)
	g.s(" import ")
	g.id(pascalCase, 2)
	g.nl()
	g.nl()
	for g.n < target {
		if g.in(3) {
			g.s("def ")
			g.id(snake, 3)
			g.c('(')
			g.id(snake, 1)
			g.s(", ")
			g.id(snake, 2)
			g.line("=None):")
			g.pyBody(1, 2+g.r.IntN(10))
		} else {
			g.s("class ")
			g.id(pascalCase, 2)
			g.c('(')
			g.id(pascalCase, 1)
			g.line("):")
			g.s(`    """`)
			g.sentence(4, 12)
			g.line(`."""`)
			for range 1 + g.r.IntN(5) {
				g.nl()
				g.s("    def ")
				g.id(snake, 3)
				g.s("(self, ")
				g.id(snake, 2)
				g.line("):")
				g.pyBody(2, 2+g.r.IntN(10))
			}
		}
		g.nl()
		g.nl()
	}
}

func (g *gen) pyBody(depth, n int) {
	for range n {
		g.spaces(4 * depth)
		switch g.r.IntN(8) {
		case 0, 1:
			g.id(snake, 2)
			g.s(" = self.")
			g.id(snake, 2)
			g.c('(')
			g.args(3, snake)
			g.line(")")
		case 2:
			g.s("if ")
			g.id(snake, 2)
			g.line(" is None:")
			g.spaces(4 * depth)
			g.s("    raise ValueError(")
			g.str('"')
			g.line(")")
		case 3:
			g.s("# ")
			g.sentence(3, 12)
			g.nl()
		case 4:
			if depth < 4 {
				g.s("for ")
				g.id(snake, 1)
				g.s(" in ")
				g.id(snake, 2)
				g.line(":")
				g.pyBody(depth+1, 1+g.r.IntN(3))
			} else {
				g.line("pass")
			}
		case 5:
			g.s("logger.info(")
			g.str('"')
			g.s(", ")
			g.id(snake, 1)
			g.line(")")
		default:
			g.s("return ")
			g.id(snake, 2)
			g.nl()
		}
	}
}

// --- Java ---

func (g *gen) javaFile(f *filePlan, p *plan, target int) {
	g.s("package com.mono.")
	g.s(strings.ReplaceAll(strings.ReplaceAll(p.dirs[f.dir].pkg, "-", ""), "_", ""))
	g.line(";")
	g.nl()
	for range 2 + g.r.IntN(6) {
		g.s("import ")
		g.s(g.pick([]string{"java.util.", "java.io.", "java.time.", "com.mono.core."}))
		g.id(pascalCase, 2)
		g.line(";")
	}
	g.nl()
	g.line("/**")
	g.s(" * ")
	g.sentence(5, 14)
	g.line(".")
	g.line(" */")
	g.s("public class ")
	g.id(pascalCase, 2)
	g.line(" {")
	for range 1 + g.r.IntN(6) {
		g.s("    private final ")
		g.s(g.pick(javaTypes))
		g.c(' ')
		g.id(camel, 2)
		g.line(";")
	}
	for g.n < target {
		g.nl()
		g.s("    public ")
		g.s(g.pick(javaTypes))
		g.c(' ')
		g.id(camel, 3)
		g.c('(')
		g.s(g.pick(javaTypes))
		g.c(' ')
		g.id(camel, 1)
		g.line(") {")
		for range 2 + g.r.IntN(12) {
			g.s("        ")
			switch g.r.IntN(5) {
			case 0:
				g.s("// ")
				g.sentence(3, 10)
			case 1:
				g.s("if (")
				g.id(camel, 2)
				g.s(" == null) { throw new IllegalArgumentException(")
				g.str('"')
				g.s("); }")
			default:
				g.s("var ")
				g.id(camel, 2)
				g.s(" = ")
				g.id(camel, 1)
				g.c('.')
				g.id(camel, 2)
				g.c('(')
				g.args(3, camel)
				g.s(");")
			}
			g.nl()
		}
		g.line("        return null;")
		g.line("    }")
	}
	g.line("}")
}

// --- Rust ---

func (g *gen) rustFile(target int) {
	for range 1 + g.r.IntN(5) {
		g.s("use ")
		g.s(g.pick([]string{"std::collections::", "std::io::", "crate::", "serde::", "tokio::"}))
		g.id(pascalCase, 2)
		g.line(";")
	}
	g.nl()
	for g.n < target {
		g.s("/// ")
		g.sentence(4, 12)
		g.line(".")
		if g.in(3) {
			g.line("#[derive(Debug, Clone)]")
			g.s("pub struct ")
			g.id(pascalCase, 2)
			g.line(" {")
			for range 2 + g.r.IntN(6) {
				g.s("    pub ")
				g.id(snake, 2)
				g.s(": ")
				g.s(g.pick(rustTypes))
				g.line(",")
			}
			g.line("}")
		} else {
			g.s("pub fn ")
			g.id(snake, 3)
			g.s("(")
			g.id(snake, 1)
			g.s(": ")
			g.s(g.pick(rustTypes))
			g.s(") -> Result<")
			g.s(g.pick(rustTypes))
			g.line(", Error> {")
			for range 2 + g.r.IntN(12) {
				g.s("    ")
				switch g.r.IntN(4) {
				case 0:
					g.s("// ")
					g.sentence(3, 10)
				case 1:
					g.s("if ")
					g.id(snake, 2)
					g.s(".is_empty() { return Err(Error::new(")
					g.str('"')
					g.s(")); }")
				default:
					g.s("let ")
					g.id(snake, 2)
					g.s(" = ")
					g.id(snake, 1)
					g.c('.')
					g.id(snake, 2)
					g.c('(')
					g.args(2, snake)
					g.s(")?;")
				}
				g.nl()
			}
			g.line("    Ok(Default::default())")
			g.line("}")
		}
		g.nl()
	}
}

// --- C ---

func (g *gen) cFile(ext string, target int) {
	g.line("/*")
	g.s(" * ")
	g.sentence(5, 14)
	g.line(".")
	g.line(" */")
	for range 2 + g.r.IntN(5) {
		g.s("#include ")
		if g.in(2) {
			g.s("<")
			g.s(g.pick([]string{"stdio", "stdlib", "string", "stdint", "errno", "unistd", "pthread"}))
			g.line(".h>")
		} else {
			g.c('"')
			g.id(snake, 2)
			g.line(".h\"")
		}
	}
	g.nl()
	for g.n < target {
		if ext == ".h" || g.in(4) {
			g.s("#define ")
			g.id(upperSnake, 3)
			g.c(' ')
			g.num()
			g.nl()
			g.s(g.pick(cTypes))
			g.c(' ')
			g.id(snake, 3)
			g.s("(")
			g.s(g.pick(cTypes))
			g.c(' ')
			g.id(snake, 1)
			g.line(");")
			continue
		}
		g.s("static ")
		g.s(g.pick(cTypes))
		g.c(' ')
		g.id(snake, 3)
		g.s("(")
		g.s(g.pick(cTypes))
		g.c(' ')
		g.id(snake, 1)
		g.line(")")
		g.line("{")
		for range 2 + g.r.IntN(12) {
			g.c('\t')
			switch g.r.IntN(4) {
			case 0:
				g.s("/* ")
				g.sentence(3, 10)
				g.s(" */")
			case 1:
				g.s("if (")
				g.id(snake, 2)
				g.s(" < 0)\n\t\treturn -EINVAL;")
				g.n++
			default:
				g.id(snake, 2)
				g.s(" = ")
				g.id(snake, 2)
				g.c('(')
				g.args(3, snake)
				g.s(");")
			}
			g.nl()
		}
		g.line("\treturn 0;")
		g.line("}")
		g.nl()
	}
}

// --- Documents and data ---

func (g *gen) mdFile(target int) {
	g.s("# ")
	g.sentence(2, 5)
	g.nl()
	for g.n < target {
		g.nl()
		switch g.r.IntN(6) {
		case 0:
			g.s("## ")
			g.sentence(1, 5)
			g.nl()
		case 1:
			for range 2 + g.r.IntN(5) {
				g.s("- ")
				g.sentence(3, 12)
				g.nl()
			}
		case 2:
			g.line("```go")
			g.goBody(0, 2+g.r.IntN(5))
			g.line("```")
		default:
			for range 2 + g.r.IntN(5) {
				g.sentence(8, 14)
				if g.in(3) {
					g.s(" `")
					g.id(camel, 2)
					g.c('`')
				}
				g.line(".")
			}
		}
	}
}

func (g *gen) jsonFile(target int) {
	g.line("{")
	g.jsonObj(1, target)
	g.line("}")
}

func (g *gen) jsonObj(depth, target int) {
	k := 1 + g.r.IntN(8)
	for i := 0; i < k || (depth == 1 && g.n < target); i++ {
		if i > 0 {
			g.line(",")
		}
		g.spaces(2 * depth)
		g.c('"')
		g.id(camel, 2)
		g.s(`": `)
		switch g.r.IntN(7) {
		case 0:
			if depth < 5 {
				g.line("{")
				g.jsonObj(depth+1, 0)
				g.nl()
				g.spaces(2 * depth)
				g.c('}')
			} else {
				g.s("{}")
			}
		case 1:
			g.c('[')
			for j := range 1 + g.r.IntN(4) {
				if j > 0 {
					g.s(", ")
				}
				g.str('"')
			}
			g.c(']')
		case 2, 3:
			g.num()
		case 4:
			g.s(g.pick([]string{"true", "false", "null"}))
		default:
			g.str('"')
		}
	}
}

// sourceMap is one long line, as generated source maps are.
func (g *gen) sourceMap() {
	g.s(`{"version":3,"file":"`)
	g.id(kebab, 2)
	g.s(`.js","sources":["../src/`)
	g.id(kebab, 2)
	g.s(`.ts"],"mappings":"`)
	const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range 2000 + g.r.IntN(20000) {
		if i%7 == 6 {
			g.c(";,"[g.r.IntN(2)])
		}
		g.c(b64[g.r.IntN(64)])
	}
	g.line(`"}`)
}

func (g *gen) configFile(ext string, target int) {
	sep := ": "
	switch ext {
	case ".toml", ".editorconfig":
		sep = " = "
	case ".properties", ".npmrc", ".example":
		sep = "="
	}
	if ext == ".xml" {
		g.line(`<?xml version="1.0" encoding="UTF-8"?>`)
		g.line("<project>")
		for g.n < target {
			g.s("  <")
			tag := g.idStr(camel, 2)
			g.s(tag)
			g.c('>')
			g.id(kebab, 3)
			g.s("</")
			g.s(tag)
			g.line(">")
		}
		g.line("</project>")
		return
	}
	for g.n < target {
		if ext == ".toml" && g.in(6) {
			g.nl()
			g.c('[')
			g.id(snake, 2)
			g.line("]")
			continue
		}
		if ext == ".yaml" && g.in(5) {
			g.id(snake, 2)
			g.line(":")
			for range 1 + g.r.IntN(5) {
				g.s("  ")
				g.id(snake, 2)
				g.s(sep)
				g.yamlValue()
				g.nl()
			}
			continue
		}
		if ext == ".properties" || ext == ".example" {
			g.id(snake, 1)
			g.c('.')
			g.id(snake, 2)
		} else {
			g.id(snake, 2)
		}
		g.s(sep)
		g.yamlValue()
		g.nl()
	}
}

func (g *gen) yamlValue() {
	switch g.r.IntN(4) {
	case 0:
		g.num()
	case 1:
		g.s(g.pick([]string{"true", "false"}))
	default:
		g.str('"')
	}
}

func (g *gen) sqlFile(target int) {
	for g.n < target {
		if g.in(3) {
			g.s("CREATE TABLE ")
			g.id(snake, 2)
			g.line(" (")
			g.line("    id BIGSERIAL PRIMARY KEY,")
			for range 2 + g.r.IntN(8) {
				g.s("    ")
				g.id(snake, 2)
				g.c(' ')
				g.s(g.pick([]string{"TEXT NOT NULL", "INTEGER", "BIGINT", "BOOLEAN DEFAULT false", "TIMESTAMPTZ NOT NULL DEFAULT now()", "JSONB", "VARCHAR(255)"}))
				g.line(",")
			}
			g.line("    created_at TIMESTAMPTZ NOT NULL DEFAULT now()")
			g.line(");")
			g.nl()
			continue
		}
		g.sqlInsert()
	}
}

func (g *gen) sqlInsert() {
	g.s("INSERT INTO ")
	g.id(snake, 2)
	g.s(" (")
	g.id(snake, 1)
	g.s(", ")
	g.id(snake, 2)
	g.s(", created_at) VALUES (")
	g.num()
	g.s(", ")
	g.str('\'')
	g.s(", '20")
	g.b = strconv.AppendInt(g.b, int64(18+g.r.IntN(7)), 10)
	g.line("-06-01T12:00:00Z');")
}

func (g *gen) shFile(target int) {
	g.line("#!/usr/bin/env bash")
	g.line("set -euo pipefail")
	g.nl()
	for g.n < target {
		switch g.r.IntN(5) {
		case 0:
			g.s("# ")
			g.sentence(3, 12)
		case 1:
			g.id(upperSnake, 2)
			g.s("=\"${")
			g.id(upperSnake, 2)
			g.s(":-")
			g.id(kebab, 2)
			g.s("}\"")
		case 2:
			g.s("if [[ -z \"${")
			g.id(upperSnake, 2)
			g.s("}\" ]]; then echo \"")
			g.sentence(2, 6)
			g.s("\" >&2; exit 1; fi")
		default:
			g.s(g.pick([]string{"go build ./...", "npm run ", "docker build -t ", "kubectl apply -f ", "echo "}))
			g.id(kebab, 2)
		}
		g.nl()
	}
}

func (g *gen) htmlFile(target int) {
	g.line("<!DOCTYPE html>")
	g.line("<html lang=\"en\">")
	g.s("<head><title>")
	g.sentence(2, 5)
	g.line("</title></head>")
	g.line("<body>")
	for g.n < target {
		g.s("  <div class=\"")
		g.id(kebab, 2)
		g.s("\"><p>")
		g.sentence(4, 14)
		g.line("</p></div>")
	}
	g.line("</body>")
	g.line("</html>")
}

func (g *gen) cssFile(target int) {
	for g.n < target {
		g.c('.')
		g.id(kebab, 3)
		g.line(" {")
		for range 2 + g.r.IntN(6) {
			g.s("  ")
			g.s(g.pick([]string{"margin", "padding", "color", "display", "font-size", "border", "width", "height", "background"}))
			g.s(": ")
			g.s(g.pick([]string{"0", "auto", "1rem", "#333", "flex", "none", "100%", "12px", "var(--accent)"}))
			g.line(";")
		}
		g.line("}")
		g.nl()
	}
}

func (g *gen) protoFile(target int) {
	g.line(`syntax = "proto3";`)
	g.nl()
	g.s("package mono.")
	g.id(snake, 1)
	g.line(".v1;")
	g.nl()
	for g.n < target {
		g.s("message ")
		g.id(pascalCase, 2)
		g.line(" {")
		for i := range 2 + g.r.IntN(8) {
			g.s("  ")
			g.s(g.pick([]string{"string", "int64", "bool", "bytes", "repeated string", "uint32"}))
			g.c(' ')
			g.id(snake, 2)
			g.s(" = ")
			g.b = strconv.AppendInt(g.b, int64(i+1), 10)
			g.line(";")
		}
		g.line("}")
		g.nl()
	}
}

func (g *gen) logFile(target int) {
	t := int64(1700000000) + g.r.Int64N(40000000)
	for g.n < target {
		t += g.r.Int64N(30)
		g.b = strconv.AppendInt(g.b, t, 10)
		g.s(g.pick([]string{" INFO ", " WARN ", " DEBUG ", " ERROR "}))
		g.id(snake, 2)
		g.s(": ")
		g.sentence(3, 12)
		g.nl()
	}
}

func (g *gen) textFile(target int) {
	for g.n < target {
		g.sentence(4, 16)
		g.line(".")
	}
}

// --- Binary and large files ---

// binary writes a file with a magic number and NULs in its first bytes.
func (g *gen) binary(ext string, size int) {
	switch ext {
	case ".png":
		g.s("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	case ".jpg":
		g.s("\xff\xd8\xff\xe0\x00\x10JFIF\x00")
	case ".so", ".o":
		g.s("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	case ".jar":
		g.s("PK\x03\x04\x14\x00\x08\x00")
	case ".pdf":
		g.s("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n\x00")
	default:
		g.s("\x00\x01\x02\x03BIN\x00")
	}
	for len(g.b) < size {
		v := g.r.Uint64()
		if v&7 == 0 {
			v &^= 0xff // zero bytes are common in binaries
		}
		for i := 0; i < 8 && len(g.b) < size; i++ {
			g.c(byte(v >> (8 * i)))
		}
	}
}

// large writes about size bytes of text in the file's format.
func (g *gen) large(ext string, size int) {
	for len(g.b) < size {
		switch ext {
		case ".min.js":
			// Minified: statements run together, lines of 2–60 KB.
			end := len(g.b) + 2000 + g.r.IntN(58000)
			for len(g.b) < end {
				g.s("var ")
				g.id(camel, 1)
				g.s("=function(e,t){return e.")
				g.id(camel, 2)
				g.s("(t,")
				g.num()
				g.s(")};")
			}
			g.nl()
		case ".json":
			g.s(`{"`)
			g.id(camel, 2)
			g.s(`": [`)
			for j := range 1 + g.r.IntN(6) {
				if j > 0 {
					g.s(", ")
				}
				g.str('"')
			}
			g.line("]},")
		case ".sql":
			g.sqlInsert()
		case ".go":
			g.goDecl()
			g.nl()
		case ".csv":
			g.num()
			g.c(',')
			g.id(snake, 2)
			g.c(',')
			g.str('"')
			g.c(',')
			g.num()
			g.nl()
		default:
			g.s("- ")
			g.sentence(6, 16)
			g.nl()
		}
	}
}
