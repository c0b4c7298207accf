package url

import (
	"strings"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// wasmeval: the search parameters' big allocations are announced before
// they happen (see internal/goja/FORK.md, item 4, and ../buffer/guard.go).
// A query of short pairs ('a&a&...') makes a parameter of about 100 bytes
// of each 2 bytes of text, in Go, where no interrupt lands.

const (
	// paramBytes is what parsing takes for each parameter of a query:
	// its piece of the split, the pair's split and its place in the list
	// (which grows by doubling), measured (guard_test.go: 220-240).
	paramBytes = 256
	// keyParamBytes is what a parameter made of an object's property
	// takes: its key (which (*goja.Object).Keys announces too), its value
	// read as text and its place in the list (330 measured).
	keyParamBytes = 384
	// iterParamBytes is what a parameter an iterable gives takes in the
	// list, with its name and value (38 measured); the garbage of the
	// iteration is any loop's.
	iterParamBytes = 64
	// queryByteBytes is for each byte of a query parsed: the unescaped
	// copies of the names and values.
	queryByteBytes = 4
	// encodedByteBytes is for each byte of the names and values encoded
	// (toString, href): an escape makes 3 of a byte, each parameter's
	// text is copied into a builder that grows by doubling, and the
	// result copied again (18 measured, for 'é &').
	encodedByteBytes = 24
)

// chargeParse is called before query is parsed into parameters.
func chargeParse(r *goja.Runtime, query string) {
	r.ChargeAlloc(paramBytes*int64(strings.Count(query, "&")+1) + queryByteBytes*int64(len(query)))
}

// chargeEncode is called before sp is encoded as a query.
func chargeEncode(r *goja.Runtime, sp searchParams) {
	n := int64(len(sp))
	for _, p := range sp {
		n += int64(len(p.name) + len(p.value))
	}
	r.ChargeAlloc(encodedByteBytes * n)
}

// chargeParams is called before n parameters are listed, per bytes each.
func chargeParams(r *goja.Runtime, n int, per int64) {
	r.ChargeAlloc(per * int64(n))
}
