// Package glob matches root-relative paths against glob patterns as the
// tools read them: doublestar semantics ("*" and "?" stay within one
// directory, "**" spans any number of them, braces and classes), byte for
// byte on names that are not UTF-8 (the matchKey form), case folded on
// request, and able to say which directories a walk must enter (Descend)
// and which hidden names a pattern names (AllowHidden).
//
// It owns:
//
//   - Pattern: one compiled glob (pattern.go), with a string-operation
//     matcher for the common shapes ("**", literal names, "*.ext",
//     "prefix*") and the literal pieces every match holds, checked first
//     (globfast.go); doublestar matches the rest.
//   - Include: Grep's include, a base-name pattern or a path pattern.
//   - Filter: ripgrep's file selection by type (-t, -T) and by -g globs,
//     with their precedence (filter.go).
//
// It knows nothing of the tools that use it: callers decode and unquote
// what an agent sends, look file types up (package filetype) and word the
// errors (an error here wraps ErrBadPattern).
package glob
