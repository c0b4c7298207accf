package fuel

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
)

// Defaults for the empty fields of Options.
const (
	DefaultHookModule   = "wasmeval"
	DefaultHookName     = "fuel"
	DefaultGlobalExport = "wasmeval_fuel"
)

// ErrNoHook is returned (wrapped) when the module does not import the hook
// and Options.AddImport is false.
var ErrNoHook = errors.New("fuel: module does not import the hook")

// Options configures Instrument. The zero value is ready to use.
type Options struct {
	// HookModule and HookName name the function import of type () -> ()
	// that a check calls when the fuel runs out. Empty means
	// DefaultHookModule and DefaultHookName ("wasmeval" "fuel").
	HookModule, HookName string
	// AddImport adds the hook import when the module does not have it. The
	// new import takes the first function index after the existing function
	// imports, so the module's own functions are renumbered: calls,
	// ref.func, exports, the start function, element segments and the
	// "name" section are rewritten to match. When false, a module without
	// the import is refused with ErrNoHook.
	AddImport bool
	// GlobalExport is the name under which the new mutable i64 fuel global
	// is exported. Empty means DefaultGlobalExport ("wasmeval_fuel").
	GlobalExport string
	// InitialFuel is the value of the fuel global when the module is
	// instantiated. Zero means the first check calls the hook.
	InitialFuel int64
	// SkipLeafEntries leaves out the entry check of functions that call
	// nothing (no call or call_indirect). Such a function runs a bounded
	// number of instructions before its first loop header, which is still
	// checked, so the guest stays interruptible; the instructions it runs
	// outside loops are not charged. Metering stays deterministic.
	SkipLeafEntries bool
	// ChargeOnlyAtEntry makes function-entry checks only charge their cost
	// (global.get, i64.const, i64.sub, global.set) without testing the
	// counter; only loop headers call the hook. Any unbounded run goes
	// through a loop header or recursion, and recursion without loops is
	// bounded by the guest's stack, so the guest stays interruptible, the
	// charge stays exact and deterministic, and the check on the hottest
	// path (calls) costs less than half. The hook runs later, at the next
	// loop header, than it would with full entry checks.
	ChargeOnlyAtEntry bool
	// WrapLoops moves the hook call out of every loop it can (see "Wrapped
	// loops" in the package doc): the same fuel is consumed and the hook
	// runs at the same points, but no call sits inside the loop itself.
	// Off by default: measured on CPython (fib and a 3M-iteration loop,
	// paired runs), it made no cell faster on wasmtime and slowed fib by a
	// fifth on both engines.
	WrapLoops bool
	// LocalHook makes the checks call a function that the pass appends to
	// the module (its index follows every existing function, so none
	// moves), whose body only calls the hook import. A call to a defined
	// function needs nothing but the instance, which is at hand; a call
	// to an import loads the import's code pointer and context from the
	// instance, and Cranelift hoists those loads out of each loop with a
	// check, which then keeps them in two registers (or spill slots) for
	// the whole loop. The fuel consumed and the points at which the hook
	// runs are the same.
	LocalHook bool
}

// Instrument returns a copy of the WebAssembly module bin with fuel
// metering: see the package documentation for the injected check and its
// cost model. bin is not modified.
//
// # Notes
//
//   - Custom sections are kept, except DWARF (".debug_*"),
//     "sourceMappingURL" and "external_debug_info": they describe code
//     offsets that instrumentation moves.
//   - The module must use only WebAssembly 2.0 features plus threads
//     (atomics), tail calls and multi-memory. Exception handling, GC,
//     typed function references and relaxed SIMD are refused.
//
// # Errors
//
// Instrument fails on a module it cannot decode (the error names the
// section, the function and the byte offset, for example an unknown
// opcode), when the hook import is missing (ErrNoHook) or is not a function
// of type () -> (), and when GlobalExport is already exported. Every
// function body is decoded in full: the pass never guesses past an
// instruction it does not know.
func Instrument(bin []byte, opts Options) ([]byte, error) {
	out, _, err := instrument(bin, opts)
	return out, err
}

// stats describes one instrumentation.
type stats struct {
	hook, global uint32 // function index of the hook, global index of the fuel
	// call is the function the checks call: the hook, or with
	// Options.LocalHook the function the pass adds, which calls it.
	call uint32
}

// Section ids.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

var sectionNames = [...]string{"custom", "type", "import", "function", "table", "memory",
	"global", "export", "start", "element", "code", "data", "data count", "tag"}

// rank orders the known sections as the binary format requires.
func rank(id byte) int {
	switch id {
	case secTag:
		return 55 // between memory and global
	case secDataCount:
		return 95 // between element and code
	}
	return int(id) * 10
}

type section struct {
	id         byte
	start, end int // content, in bin
	name       string
}

type module struct {
	bin      []byte
	sections []section
	byID     [14]int // index in sections + 1, 0 when absent

	emptyTypes  []bool   // per type index: is it () -> ()
	typeParams  []uint32 // per type index: its parameter count
	funcTypes   []uint32 // per defined function: its type index
	funcImports uint32
	globImports uint32
	globals     uint32 // defined globals
	funcs       uint32 // defined functions (function section)
	hook        int64  // hook function index, -1 when absent
	hookType    uint32 // the type index of an added hook
	exports     []string
	exportFuncs []uint32 // function indices exported
}

func (m *module) section(id byte) *section {
	if i := m.byID[id]; i > 0 {
		return &m.sections[i-1]
	}
	return nil
}

func (m *module) reader(s *section) *reader {
	return &reader{b: m.bin[s.start:s.end], base: s.start}
}

func instrument(bin []byte, opts Options) (out []byte, st stats, err error) {
	if opts.HookModule == "" {
		opts.HookModule = DefaultHookModule
	}
	if opts.HookName == "" {
		opts.HookName = DefaultHookName
	}
	if opts.GlobalExport == "" {
		opts.GlobalExport = DefaultGlobalExport
	}
	m := &module{bin: bin, hook: -1}
	if err := m.parseSections(); err != nil {
		return nil, st, err
	}
	if err := m.parseTypes(); err != nil {
		return nil, st, err
	}
	if err := m.parseImports(opts); err != nil {
		return nil, st, err
	}
	if err := m.parseCounts(); err != nil {
		return nil, st, err
	}
	for _, name := range m.exports {
		if name == opts.GlobalExport {
			return nil, st, fmt.Errorf("fuel: the module already exports %q: choose another Options.GlobalExport", name)
		}
	}

	var remap func(uint32) uint32
	if m.hook < 0 {
		if !opts.AddImport {
			return nil, st, fmt.Errorf("%w %s.%s (declare it, or set Options.AddImport)", ErrNoHook, opts.HookModule, opts.HookName)
		}
		m.hook = int64(m.funcImports)
		m.hookType = uint32(len(m.emptyTypes))
		for i, empty := range m.emptyTypes {
			if empty {
				m.hookType = uint32(i)
				break
			}
		}
		hook := uint32(m.hook)
		remap = func(f uint32) uint32 {
			if f >= hook {
				return f + 1
			}
			return f
		}
	}
	st.hook = uint32(m.hook)
	st.call = st.hook
	if opts.LocalHook && m.section(secCode) != nil {
		// Appended after the defined functions: no index moves (beyond
		// the added import's renumbering).
		st.call = m.funcImports + m.funcs
		if remap != nil {
			st.call++
		}
	}
	st.global = m.globImports + m.globals
	if uint64(st.global) >= math.MaxUint32 {
		return nil, st, errors.New("fuel: too many globals")
	}

	out = make([]byte, 0, len(bin)+len(bin)/4+64)
	out = append(out, bin[:8]...)
	// Sections the module lacks but the output needs, in rank order.
	var missing []byte
	if m.section(secType) == nil && remap != nil && m.hookType == uint32(len(m.emptyTypes)) {
		missing = append(missing, secType)
	}
	if m.section(secImport) == nil && remap != nil {
		missing = append(missing, secImport)
	}
	if m.section(secGlobal) == nil {
		missing = append(missing, secGlobal)
	}
	if m.section(secExport) == nil {
		missing = append(missing, secExport)
	}
	// emit appends section id, which rewrite builds in place after a gap of
	// five bytes for its size; the gap then shrinks to the size's length.
	emit := func(id byte, s *section) error {
		out = append(out, id, 0, 0, 0, 0, 0)
		start := len(out)
		if s != nil && s.id == secCustom {
			out = appendName(out, s.name)
		}
		var keep bool
		out, keep, err = m.rewrite(id, s, out, opts, remap, &st)
		if err != nil {
			return err
		}
		if !keep {
			out = out[:start-6]
			return nil
		}
		size := len(out) - start
		if uint64(size) > math.MaxUint32 {
			return fmt.Errorf("fuel: instrumented %s section too large", sectionNames[id])
		}
		n := len(appendU32(out[start-5:start-5], uint32(size))) // in place
		copy(out[start-5+n:], out[start:])
		out = out[:len(out)-(5-n)]
		return nil
	}
	for i := range m.sections {
		s := &m.sections[i]
		if s.id != secCustom {
			for len(missing) > 0 && rank(missing[0]) < rank(s.id) {
				if err := emit(missing[0], nil); err != nil {
					return nil, st, err
				}
				missing = missing[1:]
			}
		}
		if err := emit(s.id, s); err != nil {
			return nil, st, err
		}
	}
	for _, id := range missing {
		if err := emit(id, nil); err != nil {
			return nil, st, err
		}
	}
	if uint64(len(out)) > math.MaxUint32 {
		return nil, st, errors.New("fuel: instrumented module too large")
	}
	return out, st, nil
}

func (m *module) parseSections() error {
	if len(m.bin) < 8 || !bytes.Equal(m.bin[:4], []byte("\x00asm")) {
		return errors.New("fuel: not a WebAssembly module (bad magic)")
	}
	if !bytes.Equal(m.bin[4:8], []byte{1, 0, 0, 0}) {
		return fmt.Errorf("fuel: unsupported binary version % x (want a core module, version 1)", m.bin[4:8])
	}
	r := &reader{b: m.bin, off: 8}
	last := 0
	for !r.eof() {
		at := r.pos()
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return fmt.Errorf("fuel: section header at offset 0x%x: %w", at, err)
		}
		start := r.off
		if _, err := r.bytes(int(size)); err != nil {
			return fmt.Errorf("fuel: section %d at offset 0x%x: size %d past the end of the module", id, at, size)
		}
		s := section{id: id, start: start, end: r.off}
		if id > secTag {
			return fmt.Errorf("fuel: unknown section id %d at offset 0x%x", id, at)
		}
		if id == secCustom {
			cr := &reader{b: m.bin[start:r.off], base: start}
			if s.name, err = cr.name(); err != nil {
				return fmt.Errorf("fuel: custom section at offset 0x%x: bad name: %w", at, err)
			}
			s.start += cr.off
			if s.name == "linking" || strings.HasPrefix(s.name, "reloc.") {
				return errors.New("fuel: relocatable object files are not supported: instrument the linked module")
			}
		} else {
			if m.byID[id] != 0 {
				return fmt.Errorf("fuel: duplicate %s section at offset 0x%x", sectionNames[id], at)
			}
			if rank(id) < last {
				return fmt.Errorf("fuel: %s section out of order at offset 0x%x", sectionNames[id], at)
			}
			last = rank(id)
			m.byID[id] = len(m.sections) + 1
		}
		m.sections = append(m.sections, s)
	}
	return nil
}

func (m *module) parseTypes() error {
	s := m.section(secType)
	if s == nil {
		return nil
	}
	r := m.reader(s)
	n, err := r.u32()
	for i := uint32(0); i < n && err == nil; i++ {
		at := r.pos()
		var form byte
		if form, err = r.byte(); err != nil {
			break
		}
		if form != 0x60 {
			return fmt.Errorf("fuel: type section: unsupported type form 0x%02x at offset 0x%x (GC types are not supported)", form, at)
		}
		empty := true
		for j := 0; j < 2 && err == nil; j++ { // params, then results
			var k uint32
			if k, err = r.u32(); err != nil {
				break
			}
			if j == 0 {
				m.typeParams = append(m.typeParams, k)
			}
			if k != 0 {
				empty = false
			}
			for ; k > 0 && err == nil; k-- {
				err = r.valType()
			}
		}
		m.emptyTypes = append(m.emptyTypes, empty)
	}
	if err == nil {
		err = r.end()
	}
	if err != nil {
		return fmt.Errorf("fuel: type section: %w", err)
	}
	return nil
}

func (m *module) parseImports(opts Options) error {
	s := m.section(secImport)
	if s == nil {
		return nil
	}
	r := m.reader(s)
	n, err := r.u32()
	for i := uint32(0); i < n && err == nil; i++ {
		var mod, name string
		var kind byte
		if mod, err = r.name(); err != nil {
			break
		}
		if name, err = r.name(); err != nil {
			break
		}
		at := r.pos()
		if kind, err = r.byte(); err != nil {
			break
		}
		isHook := mod == opts.HookModule && name == opts.HookName && m.hook < 0
		if isHook && kind != 0 {
			return fmt.Errorf("fuel: import %s.%s is not a function: the hook must be a function of type () -> ()", mod, name)
		}
		switch kind {
		case 0: // function
			var t uint32
			if t, err = r.u32(); err != nil {
				break
			}
			if isHook {
				if int(t) >= len(m.emptyTypes) || !m.emptyTypes[t] {
					return fmt.Errorf("fuel: import %s.%s has type index %d, which is not () -> (): the hook must take and return nothing", mod, name, t)
				}
				m.hook = int64(m.funcImports)
				m.hookType = t
			}
			m.funcImports++
		case 1: // table
			if err = r.refType(); err == nil {
				err = r.limits()
			}
		case 2: // memory
			err = r.limits()
		case 3: // global
			if err = r.valType(); err == nil {
				_, err = r.byte()
			}
			m.globImports++
		case 4: // tag
			if _, err = r.byte(); err == nil {
				_, err = r.u32()
			}
		default:
			err = fmt.Errorf("unknown import kind 0x%02x at offset 0x%x", kind, at)
		}
	}
	if err == nil {
		err = r.end()
	}
	if err != nil {
		return fmt.Errorf("fuel: import section: %w", err)
	}
	return nil
}

func (r *reader) limits() error {
	at := r.pos()
	flags, err := r.byte()
	if err != nil {
		return err
	}
	if flags > 7 {
		return fmt.Errorf("unknown limits flags 0x%02x at offset 0x%x", flags, at)
	}
	if _, err := r.u64(); err != nil {
		return err
	}
	if flags&1 != 0 {
		_, err = r.u64()
	}
	return err
}

// parseCounts reads the function and global counts and the export names.
func (m *module) parseCounts() error {
	var err error
	if s := m.section(secFunction); s != nil {
		r := m.reader(s)
		m.funcs, err = r.u32()
		for i := uint32(0); i < m.funcs && err == nil; i++ {
			var t uint32
			if t, err = r.u32(); err == nil && int(t) >= len(m.typeParams) {
				err = fmt.Errorf("function %d has type index %d, but the module has %d types", m.funcImports+i, t, len(m.typeParams))
			}
			m.funcTypes = append(m.funcTypes, t)
		}
		if err == nil {
			err = r.end()
		}
		if err != nil {
			return fmt.Errorf("fuel: function section: %w", err)
		}
	}
	if s := m.section(secGlobal); s != nil {
		r := m.reader(s)
		m.globals, err = r.u32()
		for i := uint32(0); i < m.globals && err == nil; i++ {
			if err = r.valType(); err == nil {
				if _, err = r.byte(); err == nil {
					err = r.skipExpr()
				}
			}
		}
		if err == nil {
			err = r.end()
		}
		if err != nil {
			return fmt.Errorf("fuel: global section: %w", err)
		}
	}
	if s := m.section(secExport); s != nil {
		r := m.reader(s)
		n, err := r.u32()
		for i := uint32(0); i < n && err == nil; i++ {
			var name string
			if name, err = r.name(); err != nil {
				break
			}
			var kind byte
			if kind, err = r.byte(); err != nil {
				break
			}
			var idx uint32
			idx, err = r.u32()
			if kind == 0 {
				m.exportFuncs = append(m.exportFuncs, idx)
			}
			m.exports = append(m.exports, name)
		}
		if err == nil {
			err = r.end()
		}
		if err != nil {
			return fmt.Errorf("fuel: export section: %w", err)
		}
	}
	return nil
}

// rewrite appends to out the new content of section id (s is nil for a
// section the module lacks). keep is false to drop the section.
func (m *module) rewrite(id byte, s *section, out []byte, opts Options, remap func(uint32) uint32, st *stats) (_ []byte, keep bool, err error) {
	var r *reader
	if s != nil {
		r = m.reader(s)
	}
	copyRest := func(out []byte) []byte { return append(out, r.b[r.off:]...) }
	switch id {
	case secCustom:
		switch {
		case strings.HasPrefix(s.name, ".debug_"), s.name == "sourceMappingURL", s.name == "external_debug_info":
			return out, false, nil
		case s.name == "name" && remap != nil:
			return m.rewriteNames(r, out, opts, remap)
		}
		return copyRest(out), true, nil

	case secType:
		if remap == nil || m.hookType < uint32(len(m.emptyTypes)) {
			return copyRest(out), true, nil
		}
		out = appendU32(out, uint32(len(m.emptyTypes))+1)
		if r != nil {
			_, _ = r.u32()
			out = copyRest(out)
		}
		return append(out, 0x60, 0x00, 0x00), true, nil

	case secImport:
		if remap == nil {
			return copyRest(out), true, nil
		}
		var n uint32
		if r != nil {
			n, _ = r.u32()
		}
		out = appendU32(out, n+1)
		if r != nil {
			out = copyRest(out)
		}
		out = appendName(out, opts.HookModule)
		out = appendName(out, opts.HookName)
		out = append(out, 0x00)
		return appendU32(out, m.hookType), true, nil

	case secGlobal:
		out = appendU32(out, m.globals+1)
		if r != nil {
			_, _ = r.u32()
			if remap == nil {
				out = copyRest(out)
			} else {
				for i := uint32(0); i < m.globals; i++ {
					start := r.off
					err := r.valType()
					if err == nil {
						_, err = r.byte()
					}
					if err != nil {
						return out, false, fmt.Errorf("fuel: global section: %w", err)
					}
					out = append(out, r.b[start:r.off]...)
					if out, err = r.rewriteExpr(out, remap); err != nil {
						return out, false, fmt.Errorf("fuel: global section: %w", err)
					}
				}
				out = copyRest(out)
			}
		}
		// (global (mut i64) (i64.const InitialFuel))
		out = append(out, 0x7e, 0x01, 0x42)
		out = appendS64(out, opts.InitialFuel)
		return append(out, 0x0b), true, nil

	case secExport:
		out = appendU32(out, uint32(len(m.exports))+1)
		if r != nil {
			_, _ = r.u32()
			if remap == nil {
				out = copyRest(out)
			} else {
				for range m.exports { // parsed once already: no errors
					from := r.off
					_ = r.skipName()
					kind, _ := r.byte()
					out = append(out, r.b[from:r.off]...)
					idx, _ := r.u32()
					if kind == 0 {
						idx = remap(idx)
					}
					out = appendU32(out, idx)
				}
				out = copyRest(out)
			}
		}
		out = appendName(out, opts.GlobalExport)
		out = append(out, 0x03)
		return appendU32(out, st.global), true, nil

	case secStart:
		if remap == nil {
			return copyRest(out), true, nil
		}
		f, err := r.u32()
		if err != nil {
			return out, false, fmt.Errorf("fuel: start section: %w", err)
		}
		out = appendU32(out, remap(f))
		return copyRest(out), true, nil

	case secElement:
		if remap == nil {
			return copyRest(out), true, nil
		}
		out, err = r.rewriteElements(out, remap)
		if err != nil {
			return out, false, fmt.Errorf("fuel: element section: %w", err)
		}
		return out, true, nil

	case secFunction:
		if st.call == st.hook {
			return copyRest(out), true, nil
		}
		// The local hook's type: the hook's.
		_, _ = r.u32()
		out = appendU32(out, m.funcs+1)
		return appendU32(copyRest(out), m.hookType), true, nil

	case secCode:
		out, err = m.rewriteCode(r, out, remap, st, opts.SkipLeafEntries, opts.ChargeOnlyAtEntry, opts.WrapLoops)
		return out, err == nil, err
	}
	return copyRest(out), true, nil
}

func (m *module) rewriteCode(r *reader, out []byte, remap func(uint32) uint32, st *stats, skipLeafEntries, chargeOnlyAtEntry, wrapLoops bool) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, fmt.Errorf("fuel: code section: %w", err)
	}
	if n != m.funcs {
		return nil, fmt.Errorf("fuel: code section has %d bodies but the function section declares %d functions", n, m.funcs)
	}
	bodies := make([][2]int, n) // each body's [start, end) in r.b
	for i := uint32(0); i < n; i++ {
		size, err := r.u32()
		if err == nil {
			_, err = r.bytes(int(size))
		}
		if err != nil {
			return nil, fmt.Errorf("fuel: code section: function %d: %w", m.funcImports+i, err)
		}
		bodies[i] = [2]int{r.off - int(size), r.off}
	}
	if err := r.end(); err != nil {
		return nil, fmt.Errorf("fuel: code section: %w", err)
	}
	body := func(i uint32) ([]byte, *reader) {
		b := r.b[bodies[i][0]:bodies[i][1]]
		return b, &reader{b: b, base: r.base + bodies[i][0]}
	}
	var edits []edit
	o := bodyOpts{remap: remap, skipLeafEntry: skipLeafEntries, funcImports: m.funcImports}
	if chargeOnlyAtEntry {
		// Entry charges only charge: the charge of a function that only
		// direct calls reach moves to its call sites (see bodyEdits).
		if o.moved, err = m.moveEntries(n, body, skipLeafEntries); err != nil {
			return nil, err
		}
	}
	cc := newCheckCode(st.global, st.call, chargeOnlyAtEntry)
	local := st.call != st.hook
	if local {
		out = appendU32(out, n+1)
	} else {
		out = appendU32(out, n)
	}
	for i := uint32(0); i < n; i++ {
		b, br := body(i)
		o.dropEntry = o.moved != nil && o.moved[i] > 0
		o.params = m.typeParams[m.funcTypes[i]]
		o.wrapLoops = wrapLoops
		var info bodyInfo
		edits, info, err = bodyEdits(br, edits[:0], o)
		if err != nil {
			return nil, fmt.Errorf("fuel: code section: function %d: %w", m.funcImports+i, err)
		}
		out = cc.appendBody(out, b, edits, info, m.typeParams[m.funcTypes[i]])
	}
	if local {
		// (func $local_hook call $hook): no locals, no check of its own.
		body := appendU32([]byte{0x00, 0x10}, st.hook)
		body = append(body, 0x0b)
		out = appendU32(out, uint32(len(body)))
		out = append(out, body...)
	}
	return out, nil
}

// moveEntries returns, per defined function, the entry charge its direct
// callers make for it (0: it charges itself, or has no entry charge): that
// of every function that nothing but direct calls reaches, that is one not
// exported, not the start function and not in any table or element segment
// (where call_indirect, a host or ref.func could reach it; ref.func may
// only name functions declared outside the code, by an element segment, an
// export or a global's initializer).
func (m *module) moveEntries(n uint32, body func(uint32) ([]byte, *reader), skipLeafEntries bool) ([]int64, error) {
	addressed := make([]bool, n)
	mark := func(f uint32) uint32 {
		if f >= m.funcImports && f-m.funcImports < n {
			addressed[f-m.funcImports] = true
		}
		return f
	}
	for _, f := range m.exportFuncs {
		mark(f)
	}
	if s := m.section(secStart); s != nil {
		f, err := m.reader(s).u32()
		if err != nil {
			return nil, fmt.Errorf("fuel: start section: %w", err)
		}
		mark(f)
	}
	if s := m.section(secElement); s != nil {
		if _, err := m.reader(s).rewriteElements(nil, mark); err != nil {
			return nil, fmt.Errorf("fuel: element section: %w", err)
		}
	}
	if s := m.section(secGlobal); s != nil {
		r := m.reader(s)
		k, err := r.u32()
		for i := uint32(0); i < k && err == nil; i++ {
			if err = r.valType(); err == nil {
				if _, err = r.byte(); err == nil {
					_, err = r.rewriteExpr(nil, mark)
				}
			}
		}
		if err != nil {
			return nil, fmt.Errorf("fuel: global section: %w", err)
		}
	}
	moved := make([]int64, n)
	var edits []edit
	o := bodyOpts{skipLeafEntry: skipLeafEntries}
	for i := uint32(0); i < n; i++ {
		if addressed[i] {
			continue
		}
		_, br := body(i)
		var info bodyInfo
		var err error
		if edits, info, err = bodyEdits(br, edits[:0], o); err != nil {
			return nil, fmt.Errorf("fuel: code section: function %d: %w", m.funcImports+i, err)
		}
		moved[i] = info.entryCost
	}
	return moved, nil
}

// skipExpr skips a constant expression, through its end.
func (r *reader) skipExpr() error {
	var in instr
	depth := 0
	for {
		if err := r.next(&in); err != nil {
			return err
		}
		switch {
		case in.flags&flagOpen != 0:
			depth++
		case in.flags&flagEnd != 0:
			if depth == 0 {
				return nil
			}
			depth--
		}
	}
}

// rewriteExpr copies a constant expression, through its end, renumbering
// function indices.
func (r *reader) rewriteExpr(out []byte, remap func(uint32) uint32) ([]byte, error) {
	var in instr
	depth := 0
	prev := r.off
	for {
		if err := r.next(&in); err != nil {
			return out, err
		}
		if in.flags&flagFunc != 0 {
			out = append(out, r.b[prev:in.fnAt]...)
			out = appendU32(out, remap(in.fn))
			prev = in.fnEnd
		}
		switch {
		case in.flags&flagOpen != 0:
			depth++
		case in.flags&flagEnd != 0:
			if depth == 0 {
				return append(out, r.b[prev:r.off]...), nil
			}
			depth--
		}
	}
}

func (r *reader) rewriteElements(out []byte, remap func(uint32) uint32) ([]byte, error) {
	n, err := r.u32()
	if err != nil {
		return nil, err
	}
	out = appendU32(out, n)
	for i := uint32(0); i < n; i++ {
		at := r.pos()
		flags, err := r.u32()
		if err != nil {
			return nil, err
		}
		if flags > 7 {
			return nil, fmt.Errorf("unknown segment flags %d at offset 0x%x", flags, at)
		}
		out = appendU32(out, flags)
		if flags&3 == 2 { // explicit table index
			t, err := r.u32()
			if err != nil {
				return nil, err
			}
			out = appendU32(out, t)
		}
		if flags&1 == 0 { // active: offset expression
			if out, err = r.rewriteExpr(out, remap); err != nil {
				return nil, err
			}
		}
		if flags&3 != 0 { // elemkind or reftype
			b, err := r.byte()
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
		k, err := r.u32()
		if err != nil {
			return nil, err
		}
		out = appendU32(out, k)
		for j := uint32(0); j < k; j++ {
			if flags&4 != 0 {
				out, err = r.rewriteExpr(out, remap)
			} else {
				var f uint32
				f, err = r.u32()
				out = appendU32(out, remap(f))
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return out, r.end()
}

// rewriteNames renumbers the function indices of a "name" section and
// names the added hook. A name section it cannot parse is dropped: names
// only decorate stack traces.
func (m *module) rewriteNames(r *reader, out []byte, opts Options, remap func(uint32) uint32) ([]byte, bool, error) {
	start := len(out)
	hook := uint32(m.hook)
	hookName := opts.HookModule + "." + opts.HookName
	for !r.eof() {
		id, _ := r.byte()
		size, err := r.u32()
		if err != nil {
			return out[:start], false, nil
		}
		payload, err := r.bytes(int(size))
		if err != nil {
			return out[:start], false, nil
		}
		if id != 1 && id != 2 && id != 3 { // not indexed by function
			out = append(out, id)
			out = appendU32(out, size)
			out = append(out, payload...)
			continue
		}
		sr := &reader{b: payload}
		n, err := sr.u32()
		if err != nil {
			return out[:start], false, nil
		}
		sub := make([]byte, 0, len(payload)+len(hookName)+10)
		named := id != 1
		count := n
		if !named {
			count++
		}
		sub = appendU32(sub, count)
		for i := uint32(0); i < n; i++ {
			f, err := sr.u32()
			if err != nil {
				return out[:start], false, nil
			}
			if !named && f >= hook {
				sub = appendU32(sub, hook)
				sub = appendName(sub, hookName)
				named = true
			}
			sub = appendU32(sub, remap(f))
			from := sr.off
			if id == 1 {
				err = sr.skipName()
			} else { // a name map of locals or labels
				var k uint32
				k, err = sr.u32()
				for ; k > 0 && err == nil; k-- {
					if _, err = sr.u32(); err == nil {
						err = sr.skipName()
					}
				}
			}
			if err != nil {
				return out[:start], false, nil
			}
			sub = append(sub, sr.b[from:sr.off]...)
		}
		if !named {
			sub = appendU32(sub, hook)
			sub = appendName(sub, hookName)
		}
		if !sr.eof() {
			return out[:start], false, nil
		}
		out = append(out, id)
		out = appendU32(out, uint32(len(sub)))
		out = append(out, sub...)
	}
	return out, true, nil
}
