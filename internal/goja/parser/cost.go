package parser

import "github.com/wasmeval/wasmeval/internal/goja/token"

// wasmeval: the parse of code tells what it will cost as it reads it.
//
// Parsing a program and compiling it (goja.CompileAST) allocate in native
// code, where no interrupt lands, in proportion to the program's tokens
// more than to its bytes: ordinary code takes about 30 bytes of host heap
// a byte, dense code far more (`[1,1,...]` 175, `a,a,...` 210, `x=>x=>...`
// 475, a list of regexp literals 300). WithCostHook lets a sandbox refuse
// code as the parser reads it, before the host has grown: the estimate
// counts each token read for the first time (a token read again after
// the parser backs up is not counted twice) at what it and its part of
// the compiled program take at most.

// Token costs, in bytes of host heap for the parse and the compilation,
// measured with runtime.MemStats around ParseFile and CompileAST for the
// densest shapes of each (cost_test.go checks them), with a margin.
const (
	// tokenCost is an ordinary token's: `a,a,...` took 212 bytes a token
	// once compiled, `[,,,...]` 260, `!!!...` 200.
	tokenCost = 384
	// functionCost is an arrow's or a function's, class's or method's
	// head: a compiled function has a program, a scope and names of its
	// own (`x=>x=>...` took 710 bytes for each `x=>`, 1.5 tokens).
	functionCost = 1536
	// regExpCost is a regexp literal's, with costPerRegExpByte for each
	// byte of its source: goja compiles it when the code is compiled
	// (`/a/,` took about 1200 bytes).
	regExpCost        = 2048
	costPerRegExpByte = 64
	// costPerByte is for each byte of the code, in tokens or between
	// them: a long text, name or number literal took 2-4 bytes a byte.
	costPerByte = 8
	// baseCost is what compiling any code takes (about 40 KiB).
	baseCost = 64 << 10
	// costFrom is the estimate of the first call of the hook; each next
	// one is a quarter more than the last.
	costFrom = 768 << 10
)

type costState struct {
	// read is the offset after the last token counted, total the
	// estimate so far, next where the hook is called again.
	read        int
	total, next int64
	started     bool
}

// WithCostHook is an option to be told, as the parser reads the code, of
// what parsing and compiling the code read so far takes at most, in bytes:
// f is called with the estimate and a quarter more each time the estimate
// has grown past what f was last told (first at 768 KiB). f may panic to
// stop the parse; the panic passes through ParseFile to its caller.
func WithCostHook(f func(bytes int64)) Option {
	return func(opts *options) {
		opts.costHook = f
	}
}

// charge counts the token just read, if it is new.
func (self *_parser) charge() {
	c := &self.cost
	if self.chrOffset <= c.read {
		return
	}
	if !c.started {
		c.started = true
		self.add(baseCost)
	}
	self.add(costPerByte * int64(self.chrOffset-c.read))
	c.read = self.chrOffset
	switch self.token {
	case token.ARROW, token.FUNCTION, token.CLASS:
		self.add(functionCost)
	default:
		self.add(tokenCost)
	}
}

// chargeRegExp counts a regexp literal of n bytes.
func (self *_parser) chargeRegExp(n int) {
	self.add(regExpCost + costPerRegExpByte*int64(n))
}

func (self *_parser) add(n int64) {
	c := &self.cost
	c.total += n
	if c.total >= max(c.next, costFrom) {
		c.next = c.total + c.total/4
		self.opts.costHook(c.next)
	}
}

// Cost returns the estimate WithCostHook gives for src, parsed as a
// script: what parsing and compiling it takes at most, in bytes.
func Cost(src string) int64 {
	p := _newParser("", src, 1, WithDisableSourceMaps, WithCostHook(func(int64) {}))
	_, _ = p.parse()
	return p.cost.total
}
