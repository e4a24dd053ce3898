#include "textflag.h"

// func indexVector(p *byte, n, d int, a, ao, b, bo byte) int
//
// Each step looks at the 32 places [i, i+32): it loads p[i:i+32] and
// p[i+d:i+d+32], ORs each with its class's mask, compares each with its
// class's byte and ANDs the two results; a set bit is a place where both
// hold. The last step starts at n-32, overlapping the one before: places
// looked at twice had no pair the first time and have none again, so the
// lowest set bit is still the least place. n ≥ 32.
TEXT ·indexVector(SB), NOSPLIT, $0-40
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ d+16(FP), DX
	LEAQ (SI)(DX*1), DI // the second stream: p+d

	// Broadcast from memory: a legacy SSE move (MOVQ AX, X0) between
	// 256-bit instructions costs a state transition each time.
	VPBROADCASTB a+24(FP), Y0
	VPBROADCASTB ao+25(FP), Y1
	VPBROADCASTB b+26(FP), Y2
	VPBROADCASTB bo+27(FP), Y3

	SUBQ $32, CX // the last step's start
	XORQ BX, BX  // i

loop:
	VMOVDQU (SI)(BX*1), Y4
	VMOVDQU (DI)(BX*1), Y5
	VPOR    Y1, Y4, Y4
	VPOR    Y3, Y5, Y5
	VPCMPEQB Y0, Y4, Y4
	VPCMPEQB Y2, Y5, Y5
	VPAND   Y4, Y5, Y4
	VPMOVMSKB Y4, AX
	TESTL   AX, AX
	JNZ     found
	CMPQ    BX, CX
	JEQ     none
	ADDQ    $32, BX
	CMPQ    BX, CX
	JBE     loop
	MOVQ    CX, BX // the last, overlapping step
	JMP     loop

found:
	BSFL AX, AX
	ADDQ BX, AX
	VZEROUPPER
	MOVQ AX, ret+32(FP)
	RET

none:
	VZEROUPPER
	MOVQ $-1, ret+32(FP)
	RET
