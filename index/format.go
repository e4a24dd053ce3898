package index

// Index format (SchemaVersion 11).
//
// This file holds only this comment: the format of a saved index, byte by
// byte. store.go writes and reads the DB, basefile.go and postings.go the
// base postings, trigram.go the masks; a change to any of what
// follows is a new SchemaVersion and an entry in the version log at the
// end.
//
// # Files
//
// One index per workspace root, in the daemon's state directory:
//
//	<db>                   the bbolt DB (the daemon names it by the first
//	                       16 hex digits of the root's SHA-256, ".db")
//	<db>.base-<gen>        the base postings (gen: 16 hex digits), named
//	                       by the DB's meta "base"; written once, synced,
//	                       mmap'd read-only, never changed
//	<db>.tmp-<random>      a Save in progress (renamed over <db> when done)
//	<db>.build-<random>    a build's spilled runs (spill.go)
//	<db>.corrupt-<ns>      a DB that failed its checks, set aside
//	<db>.old-<ns>          a DB of another schema or root, set aside
//
// The postings live outside bbolt so that queries read them in place
// (the page cache holds them, not the heap) and no bbolt value is large.
// Base files the DB does not name and temporaries are removed when the
// DB is opened or rebuilt; of the files set aside, the newest is kept.
//
// Changes reach the DB in bbolt transactions (each as it is made, or,
// while the watcher defers them, those made since the last: pending.go),
// so a crash at any point leaves the state of the last committed
// transaction: the old index or the new, never a mix; what the DB had
// not been given is found again by the next open's revalidation. A new
// base file (Save, Compact) is complete and synced before the
// transaction that names it commits. Save writes a new DB beside the old
// one, syncs it and renames it into place (then syncs the directory), so
// a save that fails leaves the old file, or none, never a partial one.
// bbolt keeps its freelist on disk (NoFreelistSync off): opening reads it
// rather than walking every page.
//
// Integers are big-endian unless noted as uvarint/varint (encoding/binary's;
// varint is zigzag); times are Unix nanoseconds clamped to the int64
// range (tree.Nanos).
//
// # The DB
//
//	bucket "meta"
//	    "schema"   uint32: SchemaVersion; any other value → rebuild
//	    "root"     the workspace root (absolute path) the DB describes
//	    "slots"    uint32: the id bound, number of table slots (files and
//	               free slots); ids of removed files may be anywhere below it
//	    "written"  int64: when the last transaction was committed; a file
//	               whose mtime is not older is racy (re-read on revalidation)
//	    "base"     uint64 gen ‖ uint64 size ‖ uint32 CRC-32C: the base file
//	               <db>.base-<gen as 16 hex digits>, its size and checksum
//	    "sums"     4 × uint64: the record sums (below) of "files", "delta",
//	               "stale" and "ignored", in that order
//	    "metasum"  uint32: CRC-32C over every other "meta" record in key
//	               order, each as uvarint len(key) ‖ key ‖ uvarint
//	               len(value) ‖ value
//	bucket "files"   one key per table entry
//	    key   path (root-relative, slash separated)
//	    value uvarint id ‖ varint size ‖ varint mtime ‖ varint ctime ‖
//	          uvarint inode ‖ uvarint device ‖ byte type (0 file, 1 symlink) ‖
//	          byte flags (1 binary, 2 unknown, 4 racy, 8 denied: unknown
//	          because it may not be read, 16 next masks: see below) ‖
//	          uvarint hidden
//	          (bit i set when path component i, 0 the first below the
//	          root, has a hidden name no ignore rule lets through;
//	          components past 63 share bit 63)
//	bucket "delta"   files read since the base was built
//	    key   uint32 id
//	    value m×4 bytes: the file's trigrams, strictly increasing, each
//	          (3 bytes) followed by its mask (1 byte, see below); m
//	          is 0 for a file too short to hold one
//	bucket "stale"   ids whose base postings are out of date
//	    key   uint32 id, value empty
//	bucket "ignored" what a walk without include_hidden or include_ignored
//	                 skips: the entries the ignore rules pruned, the
//	                 directories with a hidden name (whose files the table
//	                 holds; recorded so that one holding no file is known),
//	                 and the directories that could not be listed
//	    key   path, value byte 0 for a pruned file, 1 for a pruned
//	          directory, 5 for a directory pruned by the default list
//	          alone (ignore.Verdict.Default), 3 for a hidden directory,
//	          9 for a directory this process may not list (permission
//	          denied: the table holds nothing under it), 11 for a hidden
//	          one
//
// A file's trigrams are those of its contents with ASCII letters
// lowercased (one lookup serves a case-insensitive query), each packed
// as its three bytes, the first the most significant. A file is in the
// postings (base or delta) only when it is a regular file, neither
// binary (a NUL in its first 8 KiB, BinarySniff) nor unknown (over
// MaxFileSize or MaxFileTrigrams, or unreadable); an unknown file is a
// candidate for every query.
//
// # Record sums
//
// A record (key k, value v) of "files", "delta", "stale" or "ignored"
// hashes to fmix64(c<<32 | len(v) mod 2^32), where c is the CRC-32C of
// uvarint len(k) ‖ k ‖ v and fmix64 MurmurHash3's 64-bit finalizer (a
// bijection that hides the CRC's linearity); a bucket's sum is the sum
// of its records' hashes mod 2^64. Every put and delete adjusts it (a
// delete or an overwrite subtracts the old record's hash, one lookup
// per record written), so a transaction costs in proportion to what it
// writes; Open recomputes every sum while it loads. A changed, lost or
// added record changes its bucket's sum (but for a 2^-32 chance). With
// "metasum" over the meta records and the CRC in "base" over the base
// file (computed over its mapped bytes), every byte an answer depends on
// is checked on open.
//
// # The base file
//
// Read in place:
//
//	lists   each trigram's list, in trigram order
//	table   n × 8 bytes: trigram (3 bytes) ‖ offset of its list (5 bytes,
//	        so a base may reach 1 TiB); a list ends where the next
//	        begins, the last where the table begins
//	footer  uint64 offset of the table ‖ uint32 n ‖ "IXB8"
//
// A list (k ≥ 1 ids, ascending, each with its mask, a byte) takes the
// smaller of two forms (blocks on a tie; postings.go has
// the detail). Blocks, for a sparse list: uvarint k<<1, then, when
// k > 128, one skip entry per block of 128 ids (uint32 the block's last
// id ‖ uint32 where its data ends, counted from the start of the data),
// then the data: per block, per id uvarint (id + 1 − (previous id + 1)),
// the previous id of the first being −1, continuing across blocks, then
// the block's masks. A bitmap, for a dense list: uvarint k<<1 | 1,
// uvarint w, w little-endian 64-bit words with bit j of word i set for
// id 64i+j (the last word not zero), a little-endian uint32 rank per 8
// words (the ids in the words before them), then the k masks. A query
// seeks through a long list by its skip entries and decodes only the
// blocks it lands in; in a bitmap a seek is a word lookup and a rank.
//
// # Masks
//
// The mask of a trigram in a file is a byte (trigram.go), of one of two
// kinds. A file of at most 1 MiB (NextMasksFrom) as read gets line
// masks: bit e set for each eighth e = ⌊8s/n⌋ of the file (n the bytes
// read of it) holding the start s of a line an occurrence of the
// trigram ends in (a line starts at the file's start and after each
// "\n"). A query whose matches lie within one line (not multiline) skips
// a file where the trigram query, evaluated with each trigram as its
// mask (AND as intersection, OR as union), and the trigrams of one of
// the literals every match holds, leave no eighth; and reads, of a file
// it does not skip, the lines starting in the eighths left first. A
// larger file, or one whose bytes read were not its size (n is taken to
// be the size when its lines are read), flagged 16 ("next masks"), gets
// next masks: bit nextBin[c] set for each byte c (ASCII-lowercased)
// that follows an occurrence of the trigram, nextBin being the fixed
// table of 256 bin numbers 0–7 in trigram.go, and every bit for an
// occurrence at the end of the file. A query (not multiline) for a literal that every match
// holds skips such a file where some trigram of the literal lacks the
// bit of the literal's byte after it. Either kind is never 0, since the
// trigram occurs.
//
// What a mask claims is not checked on open (the file's contents are
// not read), but the CRC and the record sums cover it, and Check
// refuses a mask of 0 in the base and in a delta set (it would
// rule the file out of every query).
//
// # Worked example
//
// A root holding only "a.go" = "Abc\n" and "b.txt" = "ab" (written long
// before the build: not racy) has files {"a.go": id 0, size 4, type 0,
// flags 0; "b.txt": id 1, size 2} and a base file of 38 bytes holding
// two lists, of "abc" (0x616263) and "bc\n" (0x62630a), each naming id 0
// alone:
//
//	02 01 01                     list of "abc": k 1 (blocks: 1<<1), id 0
//	                             (gap 0+1), its mask 0x01 (the line
//	                             starting at 0, eighth 0)
//	02 01 01                     list of "bc\n": the same line, 0x01
//	61 62 63  00 00 00 00 00     table: "abc" at 0
//	62 63 0a  00 00 00 00 03     "bc\n" at 3
//	00 00 00 00 00 00 00 06  00 00 00 02  49 58 42 38
//	                             footer: table at 6, 2 lists, "IXB8"
//
// Were "a.go" read again after the build (changed), its "delta" value
// would be the 8 bytes 61 62 63 01 62 63 0a 01.
//
// "b.txt" is too short for a trigram: it is in no list, and no query
// that needs a trigram will name it, which is right since it cannot
// hold a three-byte match. With mtime 1 s and ctime 2 s after the epoch,
// inode 12 and device 2049, the "files" value of "a.go" is the 18 bytes
//
//	00                  id 0
//	08                  size 4 (zigzag)
//	80 a8 d6 b9 07      mtime 1000000000 (zigzag)
//	80 d0 ac f3 0e      ctime 2000000000 (zigzag)
//	0c                  inode 12
//	81 10               device 2049
//	00 00 00            type file, flags none, hidden none
//
// TestWorkedExampleBase and TestWorkedExampleFileRecord check these
// bytes.
//
// # Checks on open
//
// The bbolt page structure, before bbolt reads the file (boltcheck.go);
// schema and root match; "metasum" and the four record sums match; the
// base file named by "base" is there, of its size, with its CRC, its
// footer and table in bounds; then what Check verifies: trigrams
// strictly increase within 24 bits; offsets start at 0 and never
// decrease; (Check only, not on open: the CRC covers them and a restart
// must not decode them) every list decodes to exactly its k strictly
// increasing ids below the id bound ("slots"), each with its mask (not
// zero), its skip entries matching its blocks (a bitmap: its ranks
// matching its words, its last word not zero) and no byte left over, and an id listed whose slot is free is stale (a query
// reads lists defensively: a bad list never panics, an id beyond the
// table is skipped); every id in "files", "delta" and "stale" is below
// the id bound; each "files" record decodes, with a known type and known
// flags (a symlink's are 0: it is never read; next masks never with
// binary or unknown), and no id is used twice;
// a delta id is a live regular file, neither binary nor unknown, and
// stale, its set strictly increasing, each mask not zero; every
// stale id of a live regular
// file that is neither binary nor unknown is in the delta (otherwise its
// base postings would be skipped with nothing in their place, and its
// matches lost); "ignored" values are one byte, 0, 1, 3, 5, 9 or 11. A DB
// failing any of them is never trusted: OpenOrBuild moves it aside
// (<db>.corrupt-<unixnano>, one kept) and rebuilds. A bbolt panic while
// opening or reading it counts as corruption.
//
// # Version log
//
//	1  first format.
//	2  "files" records gain ctime, inode and device (git's stat comparison)
//	   and the racy flag; meta gains "written", "sums" and "metasum" (every
//	   bucket checked on open, not only the base) and "slots" (format 1
//	   derived the id bound from the highest live id, too low once that
//	   file was removed before a compaction); a file too short for a
//	   trigram has an empty delta set; the freelist is synced (a format 1
//	   file, whose freelist is not, is refused before bbolt walks it).
//	3  "ignored" also records the directories with a hidden name (value
//	   3), so the index knows what a walk would skip as hidden where the
//	   table holds no file to tell.
//	4  the base leaves bbolt for its own file, mmap'd and read in place
//	   (meta "base" names it; bucket "base" and meta "basesum" are gone),
//	   its lists block-coded with skip entries and prefixed by their
//	   length, so that a query seeks through long lists instead of
//	   decoding them; a format 3 DB is rebuilt.
//	5  every posting carries a next mask (base lists: a byte after each
//	   id's gap; delta sets: a byte after each trigram), so that a phrase
//	   selects only files where its trigrams follow one another, not
//	   merely occur; the base footer's magic is "IXB5". Measured on
//	   GOROOT/src, candidates for func \w+Handler\( fell from 678 to 173
//	   (41 files match), for "func main" from 1273 to 984, at the cost
//	   of about one byte per posting (the base about doubles); a format 4
//	   DB is rebuilt.
//	6  a dense list may be a bitmap (a bit per file, a rank per 512
//	   files, then its masks) where that is smaller than its blocks; a
//	   list's first uvarint is k<<1 | form; the footer's magic is
//	   "IXB6". A seek in a dense list was a binary search over its skip
//	   entries and a decode of up to a block; the lists of a phrase's
//	   common trigrams (" ma" is in 3 files of 4 in a generated tree)
//	   were decoded whole by every query for it. A format 5 DB is
//	   rebuilt.
//	7  a next mask has four bits (bins b and b+4 of nextBin share bit b),
//	   packed two to a byte: after a block's gaps, and after a bitmap's
//	   ranks; the footer's magic is "IXB7". The masks were 62% of the
//	   base (212 of 340 MB on the 200k generated tree). Folding the eight
//	   bits to four, measured on the same indexes: candidates for "func
//	   main" 976 → 1076 on GOROOT/src (2010 → 2020 on the generated
//	   tree), func \w+Handler\( 172 → 267 (45101 → 45113), "return nil"
//	   1818 → 1873, errors.New 605 → 611; two bits would have given 1109,
//	   403, 2051 and 964. A format 6 DB is rebuilt.
//	8  an "ignored" directory pruned by the default list alone has the
//	   value 5 (bit 4), so that the index's answers name it as the
//	   walk's do; and inside a git work tree a directory of the default
//	   list in which git tracks files is no longer pruned, so a format 7
//	   DB lacks it. The base file is unchanged ("IXB7"). A format 7 DB is
//	   rebuilt.
//	9  "ignored" also records the directories that could not be listed
//	   for want of permission (value 9, or 11 for a hidden one), so
//	   that the index's answers name them as the walk's do (format 8
//	   recorded nothing of them); and an update or reconcile keeps a
//	   file that may not be read, flagged unknown and denied (flag 8:
//	   trusted on its stat, not read again while it is unchanged), as
//	   the build did (format 8's dropped it). The base file is
//	   unchanged ("IXB7"). A format 8 DB is rebuilt.
//	10 a mask is a byte: the next mask in its low half, and in its high
//	   half a line mask, the quarters of the file holding the lines the
//	   trigram occurs in, so that a query whose matches lie within a
//	   line skips files whose trigrams, or whose literals, never share
//	   one (base lists: a byte per id, after a block's gaps and after a
//	   bitmap's ranks; delta sets: the high half of their mask byte,
//	   zero before; runs: uvarint gap ‖ mask); the footer's magic is
//	   "IXB8". Measured on the Linux 6.1 source (78,311 files), the
//	   daemon's candidates (stats.candidates) before and after:
//	   spin_lock\(.*kfree\( 2967 → 2006 (none matches),
//	   EXPORT_SYMBOL.*kmalloc 1003 → 651 (22 lines match), "struct
//	   device" 16946 → 15892, kmalloc\(\w+, GFP_\w+\) 3155 → 2947; on
//	   GOROOT/src func \w+Handler\( 269 → 212, errors\.New.*Handler
//	   171 → 95, t\.Fatal.*os\.Open\( 127 → 100 (none matches), "func
//	   main" 1085 → 972. The index grew from 150.4 to 204.7 MB on the
//	   kernel, 20.3 to 26.2 MB on GOROOT/src. Other uses of the four
//	   bits, in a model of the filter over the kernel's files, for
//	   spin_lock, EXPORT_SYMBOL and "unsigned long flags": eighths (four
//	   more bits a posting) 1535, 470, 5180 files against quarters'
//	   2006, 628, 5278; line numbers mod 4 2461, 724, 5333; a case mask
//	   (which of four letter-case shapes the trigram occurs in) helps
//	   only case-sensitive queries with capitals (Handler\( 5273 →
//	   1048), and none of these. A format 9 DB is rebuilt.
//	11 a mask is of one kind, by the file's size: a line mask of eighths
//	   (bit e for the eighth ⌊8s/n⌋ holding a line's start s), or, for a
//	   file over 1 MiB (flag 16), a next mask of eight bins (schema 10
//	   had quarters and four next bits in every mask). Layout unchanged
//	   (a byte per posting; "IXB8"), so the index's bytes are too: 214.6
//	   MB (DB and base) on the kernel either way. The daemon's candidates, schema 10 → 11, on
//	   the Linux 6.1 source: spin_lock\(.*kfree\( 2006 → 1562 (none
//	   matches), EXPORT_SYMBOL.*kmalloc 651 → 480 (11 files match),
//	   kmalloc\(\w+, GFP_\w+\) 2947 → 2873, (?i)spin_lock_irqsave
//	   3763 → 3754, "struct device" 15892 → 17339 and "unsigned long
//	   flags" 5278 → 5627 (phrases lose the next mask's chaining); on
//	   GOROOT/src "func main" 972 → 957, func \w+Handler\( 212 → 281,
//	   errors\.New.*Handler 95 → 73, t\.Fatal.*os\.Open\( 100 → 84,
//	   (?i)errors.new 1251 → 1123, "return nil" 1859 → 2053. Through
//	   the daemon, the two schemas alternated in one run: the kernel's
//	   spin_lock\(.*kfree\( 20.8–23.4 → 15.0–15.5 ms (its probes read
//	   half the bytes), "struct device" 8.0–8.5 → 8.2–8.8, GOROOT's
//	   func \w+Handler\( 1.95–2.00 → 2.01–2.27, "func main" 6.8–7.3 →
//	   6.3–7.3. A model of the filter over the kernel's files put
//	   eighths with a 4-bit next mask (12 bits a posting) at 1535 files
//	   for spin_lock and 10161 for "struct device \*dev" (10423 with
//	   schema 10, 11202 with 11), and a case mask at 981 for a
//	   case-sensitive Handler\( (4838): wider masks, a new posting
//	   pipeline and more bytes a posting. A format 10 DB is rebuilt.
