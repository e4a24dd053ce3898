package index

import (
	"math/bits"
	"slices"

	csindex "github.com/google/codesearch/index"
)

// A trigram query is evaluated against the base lazily: each node of the
// query is an ascending stream of ids that can be advanced and sought, an
// AND leapfrogging through its children from the one with the fewest ids,
// an OR merging its children. So an OR below an AND (as a case-insensitive
// pattern makes, one per trigram with alternatives such as the Kelvin sign
// for "k") is only sought at the ids the AND's rarest list proposes,
// never decoded whole, and the query's cost follows its answer.

// idStream is an ascending stream of ids.
type idStream interface {
	// at returns the current id, ok=false once the stream is exhausted.
	at() (id uint32, ok bool)
	// next moves past the current id.
	next()
	// seek moves to the first id ≥ t (never back).
	seek(t uint32)
	// size is an upper bound of the ids in the stream.
	size() int
}

// listStream streams a cursor (an encoded list or a slice).
type listStream struct{ c cursor }

func (s *listStream) at() (uint32, bool) { return s.c.cur, !s.c.done }
func (s *listStream) next()              { s.c.next() }
func (s *listStream) seek(t uint32)      { s.c.seek(t) }
func (s *listStream) size() int          { return s.c.n }

// andStream streams the ids on every one of its children (at least two).
type andStream struct {
	kids []idStream // the first has the fewest ids and leads
	cur  uint32
	done bool
	n    int
}

func newAnd(kids []idStream) *andStream {
	slices.SortStableFunc(kids, func(a, b idStream) int { return a.size() - b.size() })
	s := &andStream{kids: kids, n: kids[0].size()}
	s.align()
	return s
}

// align moves every child to the first id they all hold, from where the
// leader stands.
func (s *andStream) align() {
	lead, rest := s.kids[0], s.kids[1:]
	for {
		t, ok := lead.at()
		if !ok {
			s.done = true
			return
		}
		agree := true
		for _, c := range rest {
			c.seek(t)
			u, ok := c.at()
			if !ok {
				s.done = true
				return
			}
			if u != t {
				lead.seek(u)
				agree = false
				break
			}
		}
		if agree {
			s.cur = t
			return
		}
	}
}

func (s *andStream) at() (uint32, bool) { return s.cur, !s.done }
func (s *andStream) size() int          { return s.n }

func (s *andStream) next() {
	if !s.done {
		s.kids[0].next()
		s.align()
	}
}

func (s *andStream) seek(t uint32) {
	if !s.done && s.cur < t {
		s.kids[0].seek(t)
		s.align()
	}
}

// wordStream streams the ids set in a bitmap it computes a word of 64 ids
// at a time (word(i), i < w): the AND of bitmap-form lists (bitmapAnd) and
// the bitmap of the newer files (newerMask).
type wordStream struct {
	word func(i int) uint64
	w    int
	i    int    // the current word
	x    uint64 // the ids of word i from the current one on
	cur  uint32
	done bool
	n    int // an upper bound of the ids
}

// from moves to the first id ≥ t.
func (s *wordStream) from(t uint64) {
	s.i = int(t >> 6)
	if s.i >= s.w {
		s.done = true
		return
	}
	s.x = s.word(s.i) >> (t & 63) << (t & 63)
	s.settle()
}

// settle moves to the lowest id of x, or of the words after it.
func (s *wordStream) settle() {
	for s.x == 0 {
		if s.i++; s.i >= s.w {
			s.done = true
			return
		}
		s.x = s.word(s.i)
	}
	s.cur = uint32(s.i<<6 | bits.TrailingZeros64(s.x))
}

func (s *wordStream) at() (uint32, bool) { return s.cur, !s.done }
func (s *wordStream) size() int          { return s.n }

func (s *wordStream) next() {
	if !s.done {
		s.x &= s.x - 1
		s.settle()
	}
}

func (s *wordStream) seek(t uint32) {
	if !s.done && s.cur < t {
		s.from(uint64(t))
	}
}

// withNewer returns the stream of the ids of s that the newer files'
// bitmap m holds (newerMask). When s is an AND, m joins its children
// rather than wrapping it: the smallest leads as ever, and m, the
// cheapest to test (a word's load), comes next, so that most of the
// leader's ids are turned away before any list is sought (a prefix of a
// fifth of the files turns away four in five).
func withNewer(s idStream, m *wordStream) idStream {
	a, ok := s.(*andStream)
	if !ok {
		return newAnd([]idStream{s, m})
	}
	kids := append(slices.Clone(a.kids), m)
	slices.SortStableFunc(kids, func(a, b idStream) int { return a.size() - b.size() })
	if i := slices.Index(kids, idStream(m)); i > 1 {
		copy(kids[2:i+1], kids[1:i])
		kids[1] = m
	}
	and := &andStream{kids: kids, n: kids[0].size()}
	and.align()
	return and
}

// newMaskStream streams the ids set in words.
func newMaskStream(words []uint64) *wordStream {
	s := &wordStream{word: func(i int) uint64 { return words[i] }, w: len(words)}
	for _, x := range words {
		s.n += bits.OnesCount64(x)
	}
	s.from(0)
	return s
}

// bitmapAnd streams the ids set in every one of its bitmap-form lists (at
// least two), ANDing them a word of 64 ids at a time: an AND of dense
// lists (the common trigrams of a phrase such as "func main") costs a
// few loads per 64 files, not a seek per list per id. The lists'
// cursors are moved to the id it stands on only when asked (place): a
// phrase filter sharing them reads a mask or two per id, not a rank per
// list.
type bitmapAnd struct {
	wordStream
	cs []*cursor
}

// groupBitmaps replaces the bitmap-form lists among kids, when there are
// two or more, by one bitmapAnd.
func groupBitmaps(kids []idStream) []idStream {
	var cs []*cursor
	rest := kids[:0:0]
	for _, k := range kids {
		if ls, ok := k.(*listStream); ok && ls.c.bm.words != nil && !ls.c.done {
			cs = append(cs, &ls.c)
		} else {
			rest = append(rest, k)
		}
	}
	if len(cs) < 2 {
		return kids
	}
	b := &bitmapAnd{cs: cs}
	b.word, b.w, b.n = b.and, cs[0].bm.w, cs[0].n
	for _, c := range cs {
		b.w, b.n = min(b.w, c.bm.w), min(b.n, c.n)
		c.and = b
	}
	b.from(0)
	return append(rest, b)
}

// and returns the AND of the lists' word i.
func (b *bitmapAnd) and(i int) uint64 {
	x := b.cs[0].bm.word(i)
	for _, c := range b.cs[1:] {
		x &= c.bm.word(i)
	}
	return x
}

// place moves c, one of the AND's lists, to the id the AND stands on
// (when it stands on one): its rank counted on from where it stands in
// the same word, else read from the directory, and its mask read.
func (b *bitmapAnd) place(c *cursor) {
	if b.done || c.cur == b.cur {
		return
	}
	if j := b.cur & 63; c.cur>>6 == uint32(b.i) && c.cur < b.cur {
		c.r += bits.OnesCount64(c.bm.word(b.i) & (1<<j - 1) >> (c.cur & 63))
	} else {
		c.r = c.bm.rank(b.i, int(j))
	}
	c.cur, c.mask = b.cur, maskAt(c.bm.masks, c.r)
}

// orStream streams the ids on any of its children (at least two).
type orStream struct {
	kids []idStream
	cur  uint32
	done bool
	n    int
}

func newOr(kids []idStream) *orStream {
	s := &orStream{kids: kids}
	for _, k := range kids {
		s.n += k.size()
	}
	s.settle()
	return s
}

// settle makes the least current id of the children the stream's.
func (s *orStream) settle() {
	s.done = true
	for _, k := range s.kids {
		if t, ok := k.at(); ok && (s.done || t < s.cur) {
			s.cur, s.done = t, false
		}
	}
}

func (s *orStream) at() (uint32, bool) { return s.cur, !s.done }
func (s *orStream) size() int          { return s.n }

func (s *orStream) next() {
	if s.done {
		return
	}
	for _, k := range s.kids {
		if t, ok := k.at(); ok && t == s.cur {
			k.next()
		}
	}
	s.settle()
}

func (s *orStream) seek(t uint32) {
	if s.done || s.cur >= t {
		return
	}
	for _, k := range s.kids {
		k.seek(t)
	}
	s.settle()
}

// stream returns the stream of base ids that may satisfy q (normalized),
// or all=true when q constrains nothing, or nil when nothing can match.
func (ix *Index) stream(q *csindex.Query) (s idStream, all bool) {
	return ix.streamShared(q, nil)
}

// streamShared is stream, recording in shared (when not nil) the cursor
// of each trigram's list it opens (the first, if the query names a
// trigram twice), so that the mask filter reads a mask where the
// stream's cursor stands instead of seeking a cursor of its own.
func (ix *Index) streamShared(q *csindex.Query, shared map[uint32]*cursor) (s idStream, all bool) {
	var kids []idStream
	open := func(t string) *listStream {
		tri := queryTrigram(t)
		ls := &listStream{listCursor(ix.base.lookup(tri))}
		if _, ok := shared[tri]; !ok && shared != nil {
			shared[tri] = &ls.c
		}
		return ls
	}
	switch q.Op {
	case csindex.QAll:
		return nil, true
	case csindex.QNone:
		return nil, false
	case csindex.QAnd:
		for _, t := range q.Trigram {
			ls := open(t)
			if ls.c.done {
				return nil, false
			}
			kids = append(kids, ls)
		}
		for _, sub := range q.Sub {
			k, sall := ix.streamShared(sub, shared)
			if sall {
				continue
			}
			if k == nil {
				return nil, false
			}
			kids = append(kids, k)
		}
		kids = groupBitmaps(kids)
		switch len(kids) {
		case 0:
			return nil, true
		case 1:
			return kids[0], false
		}
		return newAnd(kids), false
	default: // QOr
		for _, t := range q.Trigram {
			if ls := open(t); !ls.c.done {
				kids = append(kids, ls)
			}
		}
		for _, sub := range q.Sub {
			k, sall := ix.streamShared(sub, shared)
			if sall {
				return nil, true
			}
			if k != nil {
				kids = append(kids, k)
			}
		}
		switch len(kids) {
		case 0:
			return nil, false
		case 1:
			return kids[0], false
		}
		return newOr(kids), false
	}
}

// drain appends the ids of s to dst.
func drain(dst []uint32, s idStream) []uint32 {
	for t, ok := s.at(); ok; t, ok = s.at() {
		dst = append(dst, t)
		s.next()
	}
	return dst
}

// intersectCursors returns the ids on every cursor.
func intersectCursors(cs []cursor) []uint32 {
	kids := make([]idStream, len(cs))
	for i := range cs {
		kids[i] = &listStream{cs[i]}
	}
	if len(kids) == 1 {
		return drain(nil, kids[0])
	}
	return drain(nil, newAnd(kids))
}

// Phrases are literals of which every match of a query holds at least
// one, compared under ASCII case folding: the query analysis' required
// literals. When matches lie within one line, a file is a candidate only
// if one of them can occur in a line of it by its masks (see trigram.go):
// the file has every trigram of the phrase, and their line masks share
// an eighth with the query's, or, for a file with next masks, each of
// its trigrams but the last has the bit of the phrase's byte after it.
// The test never drops a file holding a phrase in a line (each mask
// records every eighth its trigram's lines start in, or every byte that
// follows it), so never one that can match; it only drops files holding
// the phrase's trigrams apart.
type Phrases struct {
	lits [][]byte // ASCII-lowercased, each at least 3 bytes long
}

// NewPhrases returns the phrases of lits (every match holds one of them,
// as they are or under ASCII case folding), or nil when they cannot
// narrow the candidates: none, or one shorter than 3 bytes (it has no
// trigram).
func NewPhrases(lits [][]byte) *Phrases {
	if len(lits) == 0 {
		return nil
	}
	ph := &Phrases{}
	for _, l := range lits {
		if len(l) < 3 {
			return nil
		}
		low := make([]byte, len(l))
		for i, c := range l {
			low[i] = lower[c]
		}
		ph.lits = append(ph.lits, low)
	}
	return ph
}

// phraseTri returns the trigram at l[i:] (lowercase).
func phraseTri(l []byte, i int) uint32 {
	return uint32(l[i])<<16 | uint32(l[i+1])<<8 | uint32(l[i+2])
}

// maskFilter tests files against a query's masks, after their trigrams
// (trigram.go), when every match lies within one line: a file with line
// masks is kept when some eighth of it may hold a line holding both the
// query's trigrams and one of the phrases', by their masks; a file with
// next masks when one of the phrases may occur in it (each trigram of
// the phrase but the last having the bit of the phrase's byte after it).
// The test never drops a file holding a match: each mask records every
// eighth its trigram's lines start in, or every byte that follows it.
//
// For base ids (ascending), a trigram's mask is read where the query's
// stream left that trigram's cursor (shared) when it stands on the id,
// as an AND's do; otherwise from a cursor of the filter's own, sought
// along. For a delta set, by a binary search of it.
type maskFilter struct {
	base  *postings
	steps []maskStep
	lines *lineNode // nil: no node to read masks of (the phrases say all)
	lits  [][]litStep
	// from: the eighths of a file below from bytes are not wanted
	// (lineScope); files is the table, for the sizes; nexts the ids
	// whose masks are next masks (Index.nexts: a bit a file, where the
	// table's flags would cost a cache miss a file tested).
	from  int64
	files []File
	nexts idSet

	id    uint32   // the id of the file tested
	delta bool     // a delta set is tested, not a base id
	tris  []uint32 // the delta set tested
	gen   uint64   // counts the files tested, for the steps' memos
}

// maskStep reads one trigram's masks.
type maskStep struct {
	tri    uint32
	shared *cursor // the stream's cursor of tri, or nil
	own    cursor
	opened bool // own is open
	// The mask read for the file tested when gen is the filter's: the
	// query's node and a phrase often read one trigram twice.
	gen  uint64
	mask uint8
	has  bool
}

// litStep is a trigram of a phrase: its step and the next mask bit of
// the phrase's byte after it (0 for the last, which has none to test).
type litStep struct {
	step int
	bit  uint8
}

// lineNode is a node of the trigram query, its trigrams as steps.
type lineNode struct {
	and   bool
	steps []int
	subs  []*lineNode
}

// lineScope is what a content query's mask filter works out masks for
// (CandidateOptions.OneLine and LinesFrom): with oneLine, matches lie
// within one line, and the eighths of the files of from bytes or more
// that may hold one are told exactly.
type lineScope struct {
	oneLine bool
	from    int64
}

// newMaskFilter returns the filter of the query q (normalized) and
// phrases ph (nil: none known), whose matches lie within one line when
// ls.oneLine; base is the postings its base ids are read from (nil for
// delta sets only), shared the stream's cursors (see streamShared),
// files the table (for ls.from) and nexts its files with next masks. It
// is nil when it can rule nothing out: a multiline match may span the
// lines the masks tell apart.
func newMaskFilter(q *csindex.Query, ph *Phrases, ls lineScope, base *postings, shared map[uint32]*cursor, files []File, nexts idSet) *maskFilter {
	if !ls.oneLine {
		return nil
	}
	f := &maskFilter{base: base, from: ls.from, files: files, nexts: nexts}
	index := map[uint32]int{}
	step := func(t uint32) int {
		i, ok := index[t]
		if !ok {
			i = len(f.steps)
			index[t] = i
			f.steps = append(f.steps, maskStep{tri: t, shared: shared[t]})
		}
		return i
	}
	f.lines = newLineNode(q, step)
	if ph != nil {
		for _, l := range ph.lits {
			var steps []litStep
			for i := 0; i+3 <= len(l); i++ {
				s := litStep{step: step(phraseTri(l, i))}
				if i+4 <= len(l) {
					s.bit = nextBit(l[i+3])
				}
				steps = append(steps, s)
			}
			f.lits = append(f.lits, steps)
		}
	}
	if f.lines != nil && f.lines.and && len(f.lines.subs) == 0 && f.lits != nil && coveredBy(f.lines.steps, f.lits) {
		f.lines = nil // the phrases' masks say all the node's do
	}
	return f
}

// coveredBy reports whether every phrase reads each of steps.
func coveredBy(steps []int, lits [][]litStep) bool {
	for _, l := range lits {
		for _, i := range steps {
			if !slices.ContainsFunc(l, func(s litStep) bool { return s.step == i }) {
				return false
			}
		}
	}
	return true
}

// newLineNode returns q's node, its trigrams' steps made by step.
func newLineNode(q *csindex.Query, step func(t uint32) int) *lineNode {
	switch q.Op {
	case csindex.QAll:
		return &lineNode{and: true} // every eighth
	case csindex.QNone:
		return &lineNode{} // none
	}
	n := &lineNode{and: q.Op == csindex.QAnd}
	add := func(i int) {
		if !slices.Contains(n.steps, i) {
			n.steps = append(n.steps, i)
		}
	}
	for _, t := range q.Trigram {
		add(step(queryTrigram(t)))
	}
	for _, s := range q.Sub {
		// Flattened: a sub of one trigram (a case-insensitive pattern's
		// variants, folded) is that trigram, and a sub of the node's own
		// kind is part of it.
		sub := newLineNode(s, step)
		switch {
		case len(sub.steps) == 1 && len(sub.subs) == 0:
			add(sub.steps[0])
		case sub.and == n.and:
			for _, i := range sub.steps {
				add(i)
			}
			n.subs = append(n.subs, sub.subs...)
		default:
			n.subs = append(n.subs, sub)
		}
	}
	return n
}

// mask returns the mask of step i's trigram in the file tested,
// ok=false when the file lacks it. Base ids are asked in ascending order.
func (f *maskFilter) mask(i int) (uint8, bool) {
	s := &f.steps[i]
	if s.gen != f.gen {
		s.gen = f.gen
		s.mask, s.has = f.read(s)
	}
	return s.mask, s.has
}

// read returns the mask of s's trigram in the file tested.
func (f *maskFilter) read(s *maskStep) (uint8, bool) {
	if f.delta {
		j := findPacked(f.tris, s.tri)
		if j < 0 {
			return 0, false
		}
		return uint8(f.tris[j]), true
	}
	if c := s.shared; c != nil {
		if c.and != nil {
			c.and.place(c)
		}
		if !c.done && c.cur == f.id {
			return c.mask, true
		}
	}
	if !s.opened {
		s.own, s.opened = listCursor(f.base.lookup(s.tri)), true
	}
	s.own.seek(f.id)
	if s.own.done || s.own.cur != f.id {
		return 0, false
	}
	return s.own.mask, true
}

// eighths returns the mask of n in the file tested: the eighths that may
// hold a line holding n's trigrams as n asks.
func (f *maskFilter) eighths(n *lineNode) uint8 {
	if n.and {
		acc := uint8(allLines)
		for _, i := range n.steps {
			m, ok := f.mask(i)
			if !ok {
				return 0
			}
			if acc &= m; acc == 0 {
				return 0
			}
		}
		for _, s := range n.subs {
			if acc &= f.eighths(s); acc == 0 {
				return 0
			}
		}
		return acc
	}
	acc := uint8(0)
	for _, i := range n.steps {
		if m, ok := f.mask(i); ok {
			acc |= m
		}
	}
	for _, s := range n.subs {
		if acc == allLines {
			break
		}
		acc |= f.eighths(s)
	}
	return acc
}

// test returns the eighths of the file tested that may hold a match's
// line (every one for a file with next masks), 0 when the file holds no
// match.
func (f *maskFilter) test() uint8 {
	f.gen++
	if f.nexts.has(f.id) {
		if f.lits != nil && !f.phrase() {
			return 0
		}
		return allLines
	}
	lines := uint8(allLines)
	if f.lines != nil {
		lines = f.eighths(f.lines)
	}
	if lines != 0 && f.lits != nil {
		lines = f.phraseLines(lines)
	}
	return lines
}

// phraseLines returns the eighths among lines where one of the phrases
// may occur in a line, by their masks; when the file's eighths are not
// wanted (lineScope), allLines as soon as one phrase may.
func (f *maskFilter) phraseLines(lines uint8) uint8 {
	acc := uint8(0)
	for k, steps := range f.lits {
		if k > 0 && acc != 0 && !f.wanted() {
			return allLines
		}
		in := lines &^ acc // an eighth already in is not asked again
		for _, s := range steps {
			m, has := f.mask(s.step)
			if !has {
				in = 0
			} else {
				in &= m
			}
			if in == 0 {
				break
			}
		}
		if acc |= in; acc == lines {
			break
		}
	}
	return acc
}

// phrase reports whether one of the phrases may occur in the file tested
// by its next masks.
func (f *maskFilter) phrase() bool {
	for _, steps := range f.lits {
		ok := true
		for _, s := range steps {
			if m, has := f.mask(s.step); !has || s.bit != 0 && m&s.bit == 0 {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// wanted reports whether the eighths of the file tested are wanted
// exactly (lineScope).
func (f *maskFilter) wanted() bool {
	return f.from <= 0 || int(f.id) < len(f.files) && f.files[f.id].Size >= f.from
}

// keep returns the eighths of the base file id (above every id asked
// before) that may hold a match's line (test), 0 when none may.
func (f *maskFilter) keep(id uint32) uint8 {
	f.id, f.delta = id, false
	return f.test()
}

// keepPacked is keep for the file id with the sorted packed postings tris
// (a delta set).
func (f *maskFilter) keepPacked(id uint32, tris []uint32) uint8 {
	f.id, f.tris, f.delta = id, tris, true
	return f.test()
}
