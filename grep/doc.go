// Package grep is the Grep engine: it finds the lines of files that match
// a pattern, in Grep's order (file mtime descending, then path, then
// line), with ripgrep's line semantics, and stops as soon as the answer
// is settled.
//
// It owns:
//
//   - Matcher (match.go): the pattern, rewritten so that no match spans a
//     line break outside multiline mode, and what every match must hold,
//     looked for before the regexp runs: literals, found by the scan
//     kernel (kernel.go: each literal by its two rarest bytes at once,
//     case folded in place), or, for a pattern without one, a run of one
//     ASCII class (classrun.go).
//   - The scan of one file (chunk.go): in windows of whole lines, a large
//     file in chunks and a huge line streamed, the context looked at
//     between bounded pieces of work; context lines, invert, the three
//     output modes; a large file read through its block filter, when the
//     caller has one (Blocks, blocks.go); a file the index places its
//     matches in some eighths of, probed there first (probe.go).
//   - Scan (scan.go): many files read in parallel in Grep's order, put in
//     that order as they are reached (order.go), the answer a completed
//     prefix so that it is deterministic and Truncated exact; results
//     handed to a Sink as they are completed, or assembled into a Result.
//     Every Grep of the process shares one pool of file scanners, fewest
//     files taken first (admit.go).
//   - The prescan (prescan.go): reading the files a walk lists while it
//     lists them, their hits given to Scan.
//
// It knows nothing of where its files come from (a walk, an index's
// candidates: package query glues them) nor of the answers' envelopes:
// a Search says what to look for and how much of it, a Result is what was
// found, and the caller words it.
package grep
