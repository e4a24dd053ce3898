// Package filetype owns the table of named file types that Grep's and
// Glob's "type" and "type_not" parameters (and indexctl's -t/-T) accept.
// The table is ripgrep's default type table (rg --type-list of ripgrep
// 13.0.0), so a type name means the same files to indexctl as to rg: a
// file is of a type when its base name matches one of the type's globs.
//
// The package has no dependencies: it holds names and glob strings only;
// package query compiles the globs with its own glob matcher.
package filetype

import (
	"sort"
	"strings"
)

// Type is one named file type: the globs its files' base names match.
type Type struct {
	Name  string
	Globs []string
}

// Lookup returns the type called name (exactly as the table spells it).
func Lookup(name string) (Type, bool) {
	i := sort.Search(len(table), func(i int) bool { return table[i].Name >= name })
	if i < len(table) && table[i].Name == name {
		return table[i], true
	}
	return Type{}, false
}

// All returns the table, sorted by name. It is shared: callers must not
// change it.
func All() []Type { return table }

// Names returns the types' names, sorted, joined by ", ", for error
// messages.
func Names() string {
	names := make([]string, len(table))
	for i, t := range table {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// table is rg --type-list (ripgrep 13.0.0), sorted by name.
var table = []Type{
	{"agda", []string{`*.agda`, `*.lagda`}},
	{"aidl", []string{`*.aidl`}},
	{"amake", []string{`*.bp`, `*.mk`}},
	{"asciidoc", []string{`*.adoc`, `*.asc`, `*.asciidoc`}},
	{"asm", []string{`*.S`, `*.asm`, `*.s`}},
	{"asp", []string{`*.ascx`, `*.ascx.cs`, `*.ascx.vb`, `*.aspx`, `*.aspx.cs`, `*.aspx.vb`}},
	{"ats", []string{`*.ats`, `*.dats`, `*.hats`, `*.sats`}},
	{"avro", []string{`*.avdl`, `*.avpr`, `*.avsc`}},
	{"awk", []string{`*.awk`}},
	{"bazel", []string{`*.BUILD`, `*.bazel`, `*.bazelrc`, `*.bzl`, `BUILD`, `WORKSPACE`}},
	{"bitbake", []string{`*.bb`, `*.bbappend`, `*.bbclass`, `*.conf`, `*.inc`}},
	{"brotli", []string{`*.br`}},
	{"buildstream", []string{`*.bst`}},
	{"bzip2", []string{`*.bz2`, `*.tbz2`}},
	{"c", []string{`*.[chH]`, `*.[chH].in`, `*.cats`}},
	{"cabal", []string{`*.cabal`}},
	{"cbor", []string{`*.cbor`}},
	{"ceylon", []string{`*.ceylon`}},
	{"clojure", []string{`*.clj`, `*.cljc`, `*.cljs`, `*.cljx`}},
	{"cmake", []string{`*.cmake`, `CMakeLists.txt`}},
	{"coffeescript", []string{`*.coffee`}},
	{"config", []string{`*.cfg`, `*.conf`, `*.config`, `*.ini`}},
	{"coq", []string{`*.v`}},
	{"cpp", []string{`*.[ChH]`, `*.[ChH].in`, `*.[ch]pp`, `*.[ch]pp.in`, `*.[ch]xx`, `*.[ch]xx.in`, `*.cc`, `*.cc.in`, `*.hh`, `*.hh.in`, `*.inl`}},
	{"creole", []string{`*.creole`}},
	{"crystal", []string{`*.cr`, `Projectfile`}},
	{"cs", []string{`*.cs`}},
	{"csharp", []string{`*.cs`}},
	{"cshtml", []string{`*.cshtml`}},
	{"css", []string{`*.css`, `*.scss`}},
	{"csv", []string{`*.csv`}},
	{"cython", []string{`*.pxd`, `*.pxi`, `*.pyx`}},
	{"d", []string{`*.d`}},
	{"dart", []string{`*.dart`}},
	{"dhall", []string{`*.dhall`}},
	{"diff", []string{`*.diff`, `*.patch`}},
	{"docker", []string{`*Dockerfile*`}},
	{"dvc", []string{`*.dvc`, `Dvcfile`}},
	{"ebuild", []string{`*.ebuild`}},
	{"edn", []string{`*.edn`}},
	{"elisp", []string{`*.el`}},
	{"elixir", []string{`*.eex`, `*.ex`, `*.exs`}},
	{"elm", []string{`*.elm`}},
	{"erb", []string{`*.erb`}},
	{"erlang", []string{`*.erl`, `*.hrl`}},
	{"fidl", []string{`*.fidl`}},
	{"fish", []string{`*.fish`}},
	{"flatbuffers", []string{`*.fbs`}},
	{"fortran", []string{`*.F`, `*.F77`, `*.F90`, `*.F95`, `*.f`, `*.f77`, `*.f90`, `*.f95`, `*.pfo`}},
	{"fsharp", []string{`*.fs`, `*.fsi`, `*.fsx`}},
	{"fut", []string{`.fut`}},
	{"gap", []string{`*.g`, `*.gap`, `*.gd`, `*.gi`, `*.tst`}},
	{"gn", []string{`*.gn`, `*.gni`}},
	{"go", []string{`*.go`}},
	{"gradle", []string{`*.gradle`}},
	{"groovy", []string{`*.gradle`, `*.groovy`}},
	{"gzip", []string{`*.gz`, `*.tgz`}},
	{"h", []string{`*.h`, `*.hpp`}},
	{"haml", []string{`*.haml`}},
	{"haskell", []string{`*.c2hs`, `*.cpphs`, `*.hs`, `*.hsc`, `*.lhs`}},
	{"hbs", []string{`*.hbs`}},
	{"hs", []string{`*.hs`, `*.lhs`}},
	{"html", []string{`*.ejs`, `*.htm`, `*.html`}},
	{"idris", []string{`*.idr`, `*.lidr`}},
	{"java", []string{`*.java`, `*.jsp`, `*.jspx`, `*.properties`}},
	{"jinja", []string{`*.j2`, `*.jinja`, `*.jinja2`}},
	{"jl", []string{`*.jl`}},
	{"js", []string{`*.js`, `*.jsx`, `*.vue`}},
	{"json", []string{`*.json`, `composer.lock`}},
	{"jsonl", []string{`*.jsonl`}},
	{"julia", []string{`*.jl`}},
	{"jupyter", []string{`*.ipynb`, `*.jpynb`}},
	{"k", []string{`*.k`}},
	{"kotlin", []string{`*.kt`, `*.kts`}},
	{"less", []string{`*.less`}},
	{"license", []string{`*[.-]LICEN[CS]E*`, `AGPL-*[0-9]*`, `APACHE-*[0-9]*`, `BSD-*[0-9]*`, `CC-BY-*`, `COPYING`, `COPYING[.-]*`, `COPYRIGHT`, `COPYRIGHT[.-]*`, `EULA`, `EULA[.-]*`, `GFDL-*[0-9]*`, `GNU-*[0-9]*`, `GPL-*[0-9]*`, `LGPL-*[0-9]*`, `LICEN[CS]E`, `LICEN[CS]E[.-]*`, `MIT-*[0-9]*`, `MPL-*[0-9]*`, `NOTICE`, `NOTICE[.-]*`, `OFL-*[0-9]*`, `PATENTS`, `PATENTS[.-]*`, `UNLICEN[CS]E`, `UNLICEN[CS]E[.-]*`, `agpl[.-]*`, `gpl[.-]*`, `lgpl[.-]*`, `licen[cs]e`, `licen[cs]e.*`}},
	{"lisp", []string{`*.el`, `*.jl`, `*.lisp`, `*.lsp`, `*.sc`, `*.scm`}},
	{"lock", []string{`*.lock`, `package-lock.json`}},
	{"log", []string{`*.log`}},
	{"lua", []string{`*.lua`}},
	{"lz4", []string{`*.lz4`}},
	{"lzma", []string{`*.lzma`}},
	{"m4", []string{`*.ac`, `*.m4`}},
	{"make", []string{`*.mak`, `*.mk`, `[Gg][Nn][Uu]makefile`, `[Gg][Nn][Uu]makefile.am`, `[Gg][Nn][Uu]makefile.in`, `[Mm]akefile`, `[Mm]akefile.am`, `[Mm]akefile.in`}},
	{"mako", []string{`*.mako`, `*.mao`}},
	{"man", []string{`*.[0-9][cEFMmpSx]`, `*.[0-9lnpx]`}},
	{"markdown", []string{`*.markdown`, `*.md`, `*.mdown`, `*.mkdn`}},
	{"matlab", []string{`*.m`}},
	{"md", []string{`*.markdown`, `*.md`, `*.mdown`, `*.mkdn`}},
	{"meson", []string{`meson.build`, `meson_options.txt`}},
	{"minified", []string{`*.min.css`, `*.min.html`, `*.min.js`}},
	{"mint", []string{`*.mint`}},
	{"mk", []string{`mkfile`}},
	{"ml", []string{`*.ml`}},
	{"msbuild", []string{`*.csproj`, `*.fsproj`, `*.proj`, `*.props`, `*.targets`, `*.vcxproj`}},
	{"nim", []string{`*.nim`, `*.nimble`, `*.nimf`, `*.nims`}},
	{"nix", []string{`*.nix`}},
	{"objc", []string{`*.h`, `*.m`}},
	{"objcpp", []string{`*.h`, `*.mm`}},
	{"ocaml", []string{`*.ml`, `*.mli`, `*.mll`, `*.mly`}},
	{"org", []string{`*.org`, `*.org_archive`}},
	{"pascal", []string{`*.dpr`, `*.inc`, `*.lpr`, `*.pas`, `*.pp`}},
	{"pdf", []string{`*.pdf`}},
	{"perl", []string{`*.PL`, `*.perl`, `*.pl`, `*.plh`, `*.plx`, `*.pm`, `*.t`}},
	{"php", []string{`*.php`, `*.php3`, `*.php4`, `*.php5`, `*.phtml`}},
	{"po", []string{`*.po`}},
	{"pod", []string{`*.pod`}},
	{"postscript", []string{`*.eps`, `*.ps`}},
	{"protobuf", []string{`*.proto`}},
	{"ps", []string{`*.cdxml`, `*.ps1`, `*.ps1xml`, `*.psd1`, `*.psm1`}},
	{"puppet", []string{`*.erb`, `*.pp`, `*.rb`}},
	{"purs", []string{`*.purs`}},
	{"py", []string{`*.py`}},
	{"qmake", []string{`*.prf`, `*.pri`, `*.pro`}},
	{"qml", []string{`*.qml`}},
	{"r", []string{`*.R`, `*.Rmd`, `*.Rnw`, `*.r`}},
	{"racket", []string{`*.rkt`}},
	{"rdoc", []string{`*.rdoc`}},
	{"readme", []string{`*README`, `README*`}},
	{"red", []string{`*.r`, `*.red`, `*.reds`}},
	{"robot", []string{`*.robot`}},
	{"rst", []string{`*.rst`}},
	{"ruby", []string{`*.gemspec`, `*.rb`, `*.rbw`, `.irbrc`, `Gemfile`, `Rakefile`, `config.ru`}},
	{"rust", []string{`*.rs`}},
	{"sass", []string{`*.sass`, `*.scss`}},
	{"scala", []string{`*.sbt`, `*.scala`}},
	{"sh", []string{`*.bash`, `*.bashrc`, `*.csh`, `*.cshrc`, `*.ksh`, `*.kshrc`, `*.sh`, `*.tcsh`, `*.zsh`, `.bash_login`, `.bash_logout`, `.bash_profile`, `.bashrc`, `.cshrc`, `.kshrc`, `.login`, `.logout`, `.profile`, `.tcshrc`, `.zlogin`, `.zlogout`, `.zprofile`, `.zshenv`, `.zshrc`, `bash_login`, `bash_logout`, `bash_profile`, `bashrc`, `profile`, `zlogin`, `zlogout`, `zprofile`, `zshenv`, `zshrc`}},
	{"slim", []string{`*.skim`, `*.slim`, `*.slime`}},
	{"smarty", []string{`*.tpl`}},
	{"sml", []string{`*.sig`, `*.sml`}},
	{"soy", []string{`*.soy`}},
	{"spark", []string{`*.spark`}},
	{"spec", []string{`*.spec`}},
	{"sql", []string{`*.psql`, `*.sql`}},
	{"stylus", []string{`*.styl`}},
	{"sv", []string{`*.h`, `*.sv`, `*.svh`, `*.v`, `*.vg`}},
	{"svg", []string{`*.svg`}},
	{"swift", []string{`*.swift`}},
	{"swig", []string{`*.def`, `*.i`}},
	{"systemd", []string{`*.automount`, `*.conf`, `*.device`, `*.link`, `*.mount`, `*.path`, `*.scope`, `*.service`, `*.slice`, `*.socket`, `*.swap`, `*.target`, `*.timer`}},
	{"taskpaper", []string{`*.taskpaper`}},
	{"tcl", []string{`*.tcl`}},
	{"tex", []string{`*.bib`, `*.cls`, `*.dtx`, `*.ins`, `*.ltx`, `*.sty`, `*.tex`}},
	{"textile", []string{`*.textile`}},
	{"tf", []string{`*.tf`}},
	{"thrift", []string{`*.thrift`}},
	{"toml", []string{`*.toml`, `Cargo.lock`}},
	{"ts", []string{`*.ts`, `*.tsx`}},
	{"twig", []string{`*.twig`}},
	{"txt", []string{`*.txt`}},
	{"typoscript", []string{`*.ts`, `*.typoscript`}},
	{"vala", []string{`*.vala`}},
	{"vb", []string{`*.vb`}},
	{"vcl", []string{`*.vcl`}},
	{"verilog", []string{`*.sv`, `*.svh`, `*.v`, `*.vh`}},
	{"vhdl", []string{`*.vhd`, `*.vhdl`}},
	{"vim", []string{`*.vim`}},
	{"vimscript", []string{`*.vim`}},
	{"webidl", []string{`*.idl`, `*.webidl`, `*.widl`}},
	{"wiki", []string{`*.mediawiki`, `*.wiki`}},
	{"xml", []string{`*.dtd`, `*.rng`, `*.sch`, `*.xhtml`, `*.xjb`, `*.xml`, `*.xml.dist`, `*.xsd`, `*.xsl`, `*.xslt`}},
	{"xz", []string{`*.txz`, `*.xz`}},
	{"yacc", []string{`*.y`}},
	{"yaml", []string{`*.yaml`, `*.yml`}},
	{"yang", []string{`*.yang`}},
	{"z", []string{`*.Z`}},
	{"zig", []string{`*.zig`}},
	{"zsh", []string{`*.zsh`, `.zlogin`, `.zlogout`, `.zprofile`, `.zshenv`, `.zshrc`, `zlogin`, `zlogout`, `zprofile`, `zshenv`, `zshrc`}},
	{"zstd", []string{`*.zst`, `*.zstd`}},
}
