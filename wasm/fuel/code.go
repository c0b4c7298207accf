package fuel

import "fmt"

// Immediate shapes of the instructions the decoder knows.
const (
	immInvalid = iota
	immNone    // no immediate
	immBlock   // block type (s33)
	immU32     // one u32
	immU32x2   // two u32
	immBrTable // vec(u32) u32
	immMemarg  // memarg
	immI32     // s32
	immI64     // s64
	immF32     // 4 bytes
	immF64     // 8 bytes
	immSelectT // vec(valtype)
	immRefNull // reftype
	immV128    // 16 bytes
	immLane    // one byte
	immMemargLane
	immPrefix // 0xFC, 0xFD, 0xFE: a u32 sub-opcode follows
)

// Control behaviour, for the cost model and block nesting.
const (
	flagOpen = 1 << iota // block, loop, if: opens a label
	flagEnd              // end: closes one
	flagLoop             // loop: a check goes right after its block type
	flagTerm             // ends the straight-line run (see the package doc)
	flagFunc             // its first immediate is a function index
)

type opInfo struct {
	imm   uint8
	flags uint8
}

var (
	ops   [256]opInfo
	opsFC [18]opInfo
	opsFD [256]opInfo
	opsFE [0x4f]opInfo
)

func init() {
	set := func(lo, hi int, imm, flags uint8) {
		for i := lo; i <= hi; i++ {
			ops[i] = opInfo{imm, flags}
		}
	}
	set(0x00, 0x00, immNone, flagTerm)                    // unreachable
	set(0x01, 0x01, immNone, 0)                           // nop
	set(0x02, 0x02, immBlock, flagOpen)                   // block
	set(0x03, 0x03, immBlock, flagOpen|flagLoop|flagTerm) // loop
	set(0x04, 0x04, immBlock, flagOpen|flagTerm)          // if
	set(0x05, 0x05, immNone, flagTerm)                    // else
	set(0x0b, 0x0b, immNone, flagEnd)                     // end
	set(0x0c, 0x0d, immU32, flagTerm)                     // br, br_if
	set(0x0e, 0x0e, immBrTable, flagTerm)                 // br_table
	set(0x0f, 0x0f, immNone, flagTerm)                    // return
	set(0x10, 0x10, immU32, flagFunc)                     // call
	set(0x11, 0x11, immU32x2, 0)                          // call_indirect
	set(0x12, 0x12, immU32, flagFunc|flagTerm)            // return_call
	set(0x13, 0x13, immU32x2, flagTerm)                   // return_call_indirect
	set(0x1a, 0x1b, immNone, 0)                           // drop, select
	set(0x1c, 0x1c, immSelectT, 0)                        // select t*
	set(0x20, 0x26, immU32, 0)                            // local.*, global.*, table.get/set
	set(0x28, 0x3e, immMemarg, 0)                         // loads, stores
	set(0x3f, 0x40, immU32, 0)                            // memory.size, memory.grow
	set(0x41, 0x41, immI32, 0)
	set(0x42, 0x42, immI64, 0)
	set(0x43, 0x43, immF32, 0)
	set(0x44, 0x44, immF64, 0)
	set(0x45, 0xc4, immNone, 0) // numeric, and 0xC0-0xC4 sign extension
	set(0xd0, 0xd0, immRefNull, 0)
	set(0xd1, 0xd1, immNone, 0)       // ref.is_null
	set(0xd2, 0xd2, immU32, flagFunc) // ref.func
	set(0xfc, 0xfe, immPrefix, 0)

	// 0xFC: saturating truncation, bulk memory, table operations.
	for i := 0; i <= 7; i++ {
		opsFC[i] = opInfo{immNone, 0}
	}
	opsFC[8] = opInfo{immU32x2, 0}  // memory.init data mem
	opsFC[9] = opInfo{immU32, 0}    // data.drop
	opsFC[10] = opInfo{immU32x2, 0} // memory.copy mem mem
	opsFC[11] = opInfo{immU32, 0}   // memory.fill mem
	opsFC[12] = opInfo{immU32x2, 0} // table.init elem table
	opsFC[13] = opInfo{immU32, 0}   // elem.drop
	opsFC[14] = opInfo{immU32x2, 0} // table.copy table table
	opsFC[15] = opInfo{immU32, 0}   // table.grow
	opsFC[16] = opInfo{immU32, 0}   // table.size
	opsFC[17] = opInfo{immU32, 0}   // table.fill

	// 0xFD: fixed-width SIMD (relaxed SIMD is not supported).
	for i := range opsFD {
		opsFD[i] = opInfo{immNone, 0}
	}
	for i := 0x00; i <= 0x0b; i++ {
		opsFD[i] = opInfo{immMemarg, 0} // v128.load*, v128.store
	}
	opsFD[0x0c] = opInfo{immV128, 0} // v128.const
	opsFD[0x0d] = opInfo{immV128, 0} // i8x16.shuffle
	for i := 0x15; i <= 0x22; i++ {
		opsFD[i] = opInfo{immLane, 0} // extract_lane, replace_lane
	}
	for i := 0x54; i <= 0x5b; i++ {
		opsFD[i] = opInfo{immMemargLane, 0} // v128.load*_lane, v128.store*_lane
	}
	opsFD[0x5c] = opInfo{immMemarg, 0} // v128.load32_zero
	opsFD[0x5d] = opInfo{immMemarg, 0} // v128.load64_zero
	for _, i := range []int{0x9a, 0xa2, 0xa5, 0xa6, 0xaf, 0xb0, 0xb2, 0xb3, 0xb4, 0xbb,
		0xc2, 0xc5, 0xc6, 0xcf, 0xd0, 0xd2, 0xd3, 0xd4, 0xe2, 0xee} {
		opsFD[i] = opInfo{} // unassigned
	}

	// 0xFE: threads (atomics).
	for i := 0x00; i <= 0x02; i++ {
		opsFE[i] = opInfo{immMemarg, 0} // notify, wait32, wait64
	}
	opsFE[0x03] = opInfo{immU32, 0} // atomic.fence (a reserved 0x00 byte)
	for i := 0x10; i <= 0x4e; i++ {
		opsFE[i] = opInfo{immMemarg, 0}
	}
}

// instr is one decoded instruction.
type instr struct {
	op    byte
	sub   uint32 // sub-opcode after a 0xFC/0xFD/0xFE prefix
	flags uint8
	// For flagFunc: the function index and where its LEB is.
	fn          uint32
	fnAt, fnEnd int
	// immAt is where the immediates start; label is the u32 immediate of
	// br and br_if (a relative label depth).
	immAt int
	label uint32
}

// opError reports an opcode the decoder does not know, naming the proposal
// it belongs to when that is known.
func opError(op byte, sub uint32, prefixed bool, at int) error {
	what := ""
	switch {
	case prefixed && op == 0xfd:
		what = " (SIMD: not a fixed-width SIMD opcode)"
	case prefixed:
	case op >= 0x06 && op <= 0x0a, op == 0x18, op == 0x19, op == 0x1f:
		what = " (exception handling is not supported)"
	case op == 0x14, op == 0x15, op >= 0xd3 && op <= 0xd6, op == 0xfb:
		what = " (typed function references and GC are not supported)"
	}
	if prefixed {
		return fmt.Errorf("unknown opcode 0x%02x 0x%x%s at offset 0x%x", op, sub, what, at)
	}
	return fmt.Errorf("unknown opcode 0x%02x%s at offset 0x%x", op, what, at)
}

// next decodes the instruction at r.off into in.
func (r *reader) next(in *instr) error {
	at := r.pos()
	op, err := r.byte()
	if err != nil {
		return err
	}
	info := ops[op]
	in.op, in.sub, in.flags = op, 0, info.flags
	in.immAt = r.off
	if info.imm == immPrefix {
		sub, err := r.u32()
		if err != nil {
			return err
		}
		in.sub = sub
		switch {
		case op == 0xfc && sub < uint32(len(opsFC)):
			info = opsFC[sub]
		case op == 0xfd && sub < uint32(len(opsFD)):
			info = opsFD[sub]
		case op == 0xfe && sub < uint32(len(opsFE)):
			info = opsFE[sub]
		default:
			info = opInfo{}
		}
		if info.imm == immInvalid {
			return opError(op, sub, true, at)
		}
	}
	switch info.imm {
	case immInvalid:
		return opError(op, 0, false, at)
	case immNone:
	case immBlock:
		return r.blockType()
	case immU32:
		if info.flags&flagFunc != 0 {
			in.fnAt = r.off
			in.fn, err = r.u32()
			in.fnEnd = r.off
			return err
		}
		in.label, err = r.u32()
	case immU32x2:
		if _, err = r.u32(); err == nil {
			_, err = r.u32()
		}
	case immBrTable:
		var n uint32
		if n, err = r.u32(); err != nil {
			return err
		}
		for i := uint64(0); i <= uint64(n) && err == nil; i++ { // n labels and the default
			_, err = r.u32()
		}
	case immMemarg:
		err = r.memarg()
	case immI32:
		_, err = r.signed(32)
	case immI64:
		_, err = r.signed(64)
	case immF32:
		_, err = r.bytes(4)
	case immF64:
		_, err = r.bytes(8)
	case immSelectT:
		var n uint32
		if n, err = r.u32(); err != nil {
			return err
		}
		for i := uint32(0); i < n && err == nil; i++ {
			err = r.valType()
		}
	case immRefNull:
		err = r.refType()
	case immV128:
		_, err = r.bytes(16)
	case immLane:
		_, err = r.byte()
	case immMemargLane:
		if err = r.memarg(); err == nil {
			_, err = r.byte()
		}
	}
	return err
}

func (r *reader) memarg() error {
	align, err := r.u32()
	if err != nil {
		return err
	}
	if align&0x40 != 0 { // multi-memory: a memory index follows
		if _, err := r.u32(); err != nil {
			return err
		}
	}
	_, err = r.u64()
	return err
}

func (r *reader) blockType() error {
	at := r.pos()
	v, err := r.signed(33)
	if err != nil {
		return err
	}
	switch {
	case v >= 0: // a type index (multi-value)
	case v == -0x40: // empty
	case v >= -5: // i32, i64, f32, f64, v128
	case v == -0x10, v == -0x11: // funcref, externref
	default:
		return fmt.Errorf("unsupported block type 0x%x at offset 0x%x", byte(v)&0x7f, at)
	}
	return nil
}

// valType reads a value type of the WebAssembly 2.0 type system.
func (r *reader) valType() error {
	at := r.pos()
	t, err := r.byte()
	if err != nil {
		return err
	}
	switch t {
	case 0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f:
		return nil
	}
	return fmt.Errorf("unsupported value type 0x%02x at offset 0x%x", t, at)
}

func (r *reader) refType() error {
	at := r.pos()
	t, err := r.byte()
	if err != nil {
		return err
	}
	if t != 0x70 && t != 0x6f {
		return fmt.Errorf("unsupported reference type 0x%02x at offset 0x%x", t, at)
	}
	return nil
}

// edit is a change to a function body: a check inserted at at (check), the
// function index LEB in [at, end) re-encoded as fn, or one of the other
// kinds (see editKind).
type edit struct {
	at, end int
	kind    editKind
	check   bool
	entry   bool // a function-entry check, or a callee's entry charge moved to its call site
	// silent: a wrapped loop's header check, which emits nothing: its cost
	// is charged where the loop is entered and at its back edges.
	silent bool
	cost   int64
	fn     uint32
	// For editLoopOpen and back edges: the index of the loop's header
	// check, whose cost they charge; -1 for a branch that is not a back edge.
	ref int
	// For editLoopOpen: the loop's block type, body[bt[0]:bt[1]].
	bt [2]int
	// For editBranch: the opcode (br, br_if, br_table), the new label
	// depth of br and br_if, and the new depths of br_table in
	// bodyInfo.depths[tbl[0]:tbl[1]] (the default last).
	op    byte
	depth uint32
	tbl   [2]int
}

// editKind tells the edits apart.
type editKind uint8

const (
	editPlain     editKind = iota // a check (check) or a function index (not check)
	editNone                      // nothing (a dropped entry check)
	editLoopOpen                  // a wrapped loop's entry charge and wrappers, before its loop
	editLoopClose                 // the end of its wrappers and its slow path, after its end
	editBranch                    // a branch, relabelled; a back edge gets its check
)

// A wrapped loop is a loop whose hook call sits outside it, so that the
// loop itself holds no call (see the package doc): an engine then need not
// spill the loop's registers around a call in every iteration. Its
// wrappers are three labels around it: block $out, loop $retry and block
// $slow.
const loopWrappers = 3

// bodyOpts are the module-wide facts bodyEdits needs.
type bodyOpts struct {
	remap         func(uint32) uint32 // renumbers function indices; nil: none
	skipLeafEntry bool
	// moved, when not nil, holds per defined function (index minus
	// funcImports) the entry charge that its callers make for it, at each
	// direct call, instead of its own entry (0: none; see moveEntries).
	moved       []int64
	funcImports uint32
	// dropEntry: this function's own entry charge is made by its callers.
	dropEntry bool
	// params is the function's parameter count (for its locals' limit);
	// wrapLoops wraps the loops that can be (Options.WrapLoops).
	params    uint32
	wrapLoops bool
}

// bodyInfo describes a decoded body.
type bodyInfo struct {
	localsStart int      // where the local declarations' groups start (after their count)
	localsEnd   int      // where the code starts
	groups      uint32   // local declaration groups
	locals      uint64   // locals declared (not counting parameters)
	entryCost   int64    // the cost of the entry check, 0 when it has none
	depths      []uint32 // the relabelled br_table depths (edit.tbl)
	wrapped     int      // loops wrapped
}

// localFits reports whether a function with params parameters and the
// locals of info may get one more local: engines refuse functions with
// more than maxLocals.
func (info *bodyInfo) localFits(params uint32) bool {
	return uint64(params)+info.locals+1 <= maxLocals && info.groups < maxLocals
}

// simpleBlockType reports whether a block type, encoded in bt, takes no
// parameters: the empty type or a single result type (one byte each); a
// type index may take parameters.
func simpleBlockType(bt []byte) bool {
	return len(bt) == 1 && bt[0] >= 0x40
}

// tableTargets decodes a body's code and returns, per loop in order, whether
// a br_table names it: such a loop is not wrapped (its back edges could
// not all get a check of their own).
func tableTargets(r *reader) ([]bool, error) {
	var loops []bool
	var stack []int // per open label: its loop's number, -1 for a block or if
	var in instr
	for !r.eof() {
		if err := r.next(&in); err != nil {
			return nil, err
		}
		switch {
		case in.flags&flagOpen != 0:
			if in.flags&flagLoop != 0 {
				stack = append(stack, len(loops))
				loops = append(loops, false)
			} else {
				stack = append(stack, -1)
			}
		case in.flags&flagEnd != 0:
			if len(stack) == 0 {
				return loops, nil
			}
			stack = stack[:len(stack)-1]
		case in.op == 0x0e && in.sub == 0:
			tr := &reader{b: r.b[:r.off], off: in.immAt}
			n, _ := tr.u32()
			for i := uint64(0); i <= uint64(n); i++ {
				d, _ := tr.u32()
				if uint64(d) < uint64(len(stack)) {
					if l := stack[len(stack)-1-int(d)]; l >= 0 {
						loops[l] = true
					}
				}
			}
		}
	}
	return loops, nil
}

// bodyEdits decodes one function body (without its size prefix) and
// returns the edits that instrument it, appended to edits.
//
// A direct call to a function whose entry charge is moved (o.moved) adds
// that charge to the check of the straight-line run the call is in, where
// it costs nothing at run time: the callee's entry runs exactly when the
// call does, and every instruction of a run runs once its check has. A call
// outside any run gets a charge-only edit of its own right before it, as
// costly as the entry charge it replaces. Either way the fuel consumed is
// the same as with the charge at the callee's entry.
//
// With o.wrapLoops, a loop that takes no parameters, that no br_table
// names, in a function that may get a local, is wrapped (see the package doc): its header
// check's cost is charged where it is entered and at each of its back
// edges, and every branch that crosses the wrappers is relabelled.
func bodyEdits(r *reader, edits []edit, o bodyOpts) ([]edit, bodyInfo, error) {
	var info bodyInfo
	// Locals: vec((count, valtype)).
	n, err := r.u32()
	if err != nil {
		return edits, info, err
	}
	info.groups = n
	info.localsStart = r.off
	for i := uint32(0); i < n; i++ {
		k, err := r.u32()
		if err != nil {
			return edits, info, err
		}
		info.locals += uint64(k)
		if err := r.valType(); err != nil {
			return edits, info, err
		}
	}
	info.localsEnd = r.off
	var tabled []bool // per loop: named by a br_table; nil: wrap no loop
	if o.wrapLoops && info.localFits(o.params) {
		if tabled, err = tableTargets(&reader{b: r.b, off: r.off, base: r.base}); err != nil {
			return edits, info, err
		}
	}
	edits = append(edits, edit{at: r.off, check: true, entry: true})
	entry := len(edits) - 1
	run := entry // the edit whose cost the next instruction adds to; -1 for none
	calls := false
	// The open labels, innermost last: per label, the wrapper labels added
	// outside it and those of the labels it is in (wraps), and for a
	// wrapped loop the index of its header check (else -1).
	type frame struct {
		wraps  uint32
		header int
	}
	var stack []frame
	wrapsAt := func(d uint32) (crossed uint32, target int) { // for a branch to label d
		top := uint32(0)
		if len(stack) > 0 {
			top = stack[len(stack)-1].wraps
		}
		if uint64(d) >= uint64(len(stack)) { // the function's own label
			return top, -1
		}
		t := len(stack) - 1 - int(d)
		return top - stack[t].wraps, t
	}
	loops := 0
	var in instr
	for {
		if r.eof() {
			return edits, info, fmt.Errorf("function body has no final end (offset 0x%x)", r.pos())
		}
		at := r.off
		if err := r.next(&in); err != nil {
			return edits, info, err
		}
		if run >= 0 {
			edits[run].cost++
		}
		if in.sub == 0 && in.op >= 0x10 && in.op <= 0x13 { // call, call_indirect, return_call*
			calls = true
		}
		if (in.op == 0x10 || in.op == 0x12) && o.moved != nil && in.fn >= o.funcImports &&
			uint64(in.fn-o.funcImports) < uint64(len(o.moved)) {
			if c := o.moved[in.fn-o.funcImports]; c > 0 {
				if run >= 0 && !(run == entry && o.dropEntry) {
					edits[run].cost += c
				} else {
					edits = append(edits, edit{at: at, check: true, entry: true, cost: c})
				}
			}
		}
		if in.flags&flagFunc != 0 && o.remap != nil {
			edits = append(edits, edit{at: in.fnAt, end: in.fnEnd, fn: o.remap(in.fn)})
		}
		if in.flags&flagTerm != 0 {
			run = -1
		}
		switch {
		case (in.op == 0x0c || in.op == 0x0d) && tabled != nil: // br, br_if
			crossed, t := wrapsAt(in.label)
			back := -1
			if t >= 0 {
				back = stack[t].header
			}
			if crossed > 0 || back >= 0 {
				edits = append(edits, edit{at: at, end: r.off, kind: editBranch, op: in.op, depth: in.label + crossed, ref: back})
			}
		case in.op == 0x0e && tabled != nil: // br_table
			tr := &reader{b: r.b[:r.off], off: in.immAt}
			k, _ := tr.u32()
			from := len(info.depths)
			moved := false
			for i := uint64(0); i <= uint64(k); i++ {
				d, _ := tr.u32()
				crossed, _ := wrapsAt(d)
				moved = moved || crossed > 0
				info.depths = append(info.depths, d+crossed)
			}
			if moved {
				edits = append(edits, edit{at: at, end: r.off, kind: editBranch, op: in.op, tbl: [2]int{from, len(info.depths)}, ref: -1})
			} else {
				info.depths = info.depths[:from]
			}
		case in.flags&flagOpen != 0:
			f := frame{header: -1}
			if len(stack) > 0 {
				f.wraps = stack[len(stack)-1].wraps
			}
			if in.flags&flagLoop != 0 {
				wrap := tabled != nil && loops < len(tabled) && !tabled[loops] && simpleBlockType(r.b[in.immAt:r.off])
				loops++
				if wrap {
					edits = append(edits, edit{at: at, kind: editLoopOpen, bt: [2]int{in.immAt, r.off}, ref: len(edits) + 1})
					f.wraps += loopWrappers
					info.wrapped++
				}
				edits = append(edits, edit{at: r.off, check: true, silent: wrap})
				run = len(edits) - 1
				if wrap {
					f.header = run
				}
			}
			stack = append(stack, f)
		case in.flags&flagEnd != 0:
			if len(stack) == 0 {
				if !r.eof() {
					return edits, info, fmt.Errorf("function body continues after its final end (offset 0x%x)", r.pos())
				}
				switch {
				case o.skipLeafEntry && !calls:
					// A leaf runs a bounded number of instructions between
					// its entry and its first loop (checked there) or its
					// end: its entry check can go.
					edits[entry] = edit{at: edits[entry].at, kind: editNone}
				case o.dropEntry: // its callers charge it
					info.entryCost = edits[entry].cost
					edits[entry] = edit{at: edits[entry].at, kind: editNone}
				default:
					info.entryCost = edits[entry].cost
				}
				return edits, info, nil
			}
			if f := stack[len(stack)-1]; f.header >= 0 {
				edits = append(edits, edit{at: r.off, kind: editLoopClose})
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// checkCode holds the parts of the injected check around its cost.
type checkCode struct {
	global, hook uint32
	pre, post    []byte
	// entryPost, when set, ends function-entry checks instead of post:
	// they only charge the cost, without testing the counter.
	entryPost []byte
	buf       []byte // appendBody's scratch
}

func newCheckCode(global, hook uint32, chargeOnlyAtEntry bool) checkCode {
	c := checkCode{global: global, hook: hook}
	if chargeOnlyAtEntry {
		c.entryPost = appendU32([]byte{0x7d, 0x24}, global) // i64.sub; global.set $fuel
	}
	c.pre = appendU32([]byte{0x23}, global) // global.get $fuel
	c.pre = append(c.pre, 0x42)             // i64.const <cost>
	c.post = c.teePost(-1)
	return c
}

// teePost is the end of a check that tests the counter. With local >= 0
// the new value goes through that local (an i64 the pass adds) rather
// than being read back from the global: a local is a register to the
// engines, a global a load from the instance.
func (c *checkCode) teePost(local int64) []byte {
	post := []byte{0x7d} // i64.sub
	if local >= 0 {
		post = appendU32(append(post, 0x22), uint32(local)) // local.tee $t
		post = appendU32(append(post, 0x24), c.global)      // global.set $fuel
		post = appendU32(append(post, 0x20), uint32(local)) // local.get $t
	} else {
		post = appendU32(append(post, 0x24), c.global) // global.set $fuel
		post = appendU32(append(post, 0x23), c.global) // global.get $fuel
	}
	post = append(post, 0x42, 0x00, 0x53, 0x04, 0x40, 0x10) // i64.const 0; i64.lt_s; if; call $hook
	post = appendU32(post, c.hook)
	return append(post, 0x0b) // end
}

func (c *checkCode) postFor(e edit, post []byte) []byte {
	if e.entry && c.entryPost != nil {
		return c.entryPost
	}
	return post
}

// maxLocals is the most locals (parameters included) a function may have
// for the pass to add its own: engines refuse functions with more than
// 50,000 (wasmtime's limit).
const maxLocals = 50_000

// appendBody appends body, with its size prefix, with edits applied. A
// body with checks that test the counter gets an i64 local for them (see
// teePost), declared after its own locals (params counts its parameters).
func (c *checkCode) appendBody(out, body []byte, edits []edit, info bodyInfo, params uint32) []byte {
	post := c.post
	var locals []byte // the new local declarations, replacing body[:info.localsEnd]
	tests := false
	for _, e := range edits {
		if e.kind == editPlain && e.check && !(e.entry && c.entryPost != nil) {
			tests = true
			break
		}
	}
	t := int64(-1) // the added local
	if tests && info.localFits(params) {
		locals = appendU32(nil, info.groups+1)
		locals = append(locals, body[info.localsStart:info.localsEnd]...)
		locals = append(locals, 0x01, 0x7e) // one i64
		t = int64(params) + int64(info.locals)
		post = c.teePost(t)
	}
	b := c.buf[:0]
	prev := 0
	if locals != nil {
		b = append(b, locals...)
		prev = info.localsEnd
	}
	for _, e := range edits {
		b = append(b, body[prev:e.at]...)
		prev = e.at
		switch e.kind {
		case editNone:
		case editLoopOpen:
			// The entry charge, then: block $out bt; loop $retry bt; block
			// $slow; the entry's test (br_if $slow); the loop follows.
			b = c.appendCharge(b, edits[e.ref].cost, uint32(t))
			bt := body[e.bt[0]:e.bt[1]]
			b = append(append(b, 0x02), bt...)
			b = append(append(b, 0x03), bt...)
			b = append(b, 0x02, 0x40)
			b = c.appendTest(b, uint32(t), 0)
		case editLoopClose:
			// br $out; end $slow; call $hook; the test passes on re-entry;
			// br $retry; end $retry; end $out.
			b = append(b, 0x0c, 0x02, 0x0b, 0x10)
			b = appendU32(b, c.hook)
			b = append(b, 0x42, 0x00, 0x21)
			b = appendU32(b, uint32(t))
			b = append(b, 0x0c, 0x00, 0x0b, 0x0b)
		case editBranch:
			prev = e.end
			switch {
			case e.ref >= 0 && e.op == 0x0d: // br_if to a wrapped loop: if; check; br; end
				b = append(b, 0x04, 0x40)
				b = c.appendCharge(b, edits[e.ref].cost, uint32(t))
				b = c.appendTest(b, uint32(t), e.depth+2)
				b = appendU32(append(b, 0x0c), e.depth+1)
				b = append(b, 0x0b)
			case e.ref >= 0: // br to a wrapped loop: check; br
				b = c.appendCharge(b, edits[e.ref].cost, uint32(t))
				b = c.appendTest(b, uint32(t), e.depth+1)
				b = appendU32(append(b, 0x0c), e.depth)
			case e.op == 0x0e:
				d := info.depths[e.tbl[0]:e.tbl[1]]
				b = appendU32(append(b, 0x0e), uint32(len(d)-1))
				for _, v := range d {
					b = appendU32(b, v)
				}
			default:
				b = appendU32(append(b, e.op), e.depth)
			}
		case editPlain:
			switch {
			case e.silent:
			case e.check:
				b = append(b, c.pre...)
				b = appendS64(b, e.cost)
				b = append(b, c.postFor(e, post)...)
			default:
				b = appendU32(b, e.fn)
				prev = e.end
			}
		}
	}
	b = append(b, body[prev:]...)
	c.buf = b
	out = appendU32(out, uint32(len(b)))
	return append(out, b...)
}

// appendCharge appends a charge of cost that leaves the new value in local
// t: global.get $fuel; i64.const cost; i64.sub; local.tee $t; global.set
// $fuel.
func (c *checkCode) appendCharge(b []byte, cost int64, t uint32) []byte {
	b = append(b, c.pre...)
	b = appendS64(b, cost)
	b = appendU32(append(b, 0x7d, 0x22), t)
	return appendU32(append(b, 0x24), c.global)
}

// appendTest appends a branch to label when the local t is below zero:
// local.get $t; i64.const 0; i64.lt_s; br_if label.
func (c *checkCode) appendTest(b []byte, t, label uint32) []byte {
	b = appendU32(append(b, 0x20), t)
	b = append(b, 0x42, 0x00, 0x53, 0x0d)
	return appendU32(b, label)
}
