package buffer

import (
	"encoding/base64"
	"reflect"

	"github.com/wasmeval/wasmeval/internal/goja"
)

// wasmeval: Buffer's big allocations are announced before they happen.
//
// Buffer's functions make their results in Go, where no interrupt lands:
// each big one (alloc, from, concat, toString, write, fill) is told to the
// runtime's allocation guard first (goja's ChargeAlloc; see
// internal/goja/FORK.md, item 4), which may refuse it with an error the
// script can catch.

// Bytes a character of a text that is converted to bytes: to UTF-8 (up
// to 3 bytes for a UTF-16 one), through the codec's transformer, copied
// into the result (measured with runtime.MemStats, guard_test.go: 27-30
// bytes a character of UTF-16 text).
const (
	asciiTextBytes = 4
	wideTextBytes  = 32
)

// chargeText is called before the text v is converted to bytes.
func chargeText(r *goja.Runtime, v goja.Value) {
	s, ok := v.(goja.String)
	if !ok {
		return
	}
	switch reflect.ValueOf(v).Kind() {
	case reflect.String: // goja's ASCII text
		r.ChargeAlloc(asciiTextBytes * int64(s.Length()))
	case reflect.Pointer: // a Go string goja has not copied: its bytes
		r.ChargeAlloc(asciiTextBytes * int64(len(v.String())))
	default: // UTF-16
		r.ChargeAlloc(wideTextBytes * int64(s.Length()))
	}
}

// arrayLikeBytes is what Buffer.from takes for each element of an
// array-like beyond its byte: the key it reads it by, and the read.
const arrayLikeBytes = 10

// encodedBytes is about what encoding n bytes as text with codec takes:
// the encoder's bytes and the string made of them (an invalid byte of UTF-8
// text becomes U+FFFD, 3 bytes: 11 bytes a byte of 0xff).
func encodedBytes(codec StringCodec, n int) int64 {
	switch codec.(type) {
	case hexCodec:
		return 4 * int64(n)
	case base64Codec, base64UrlCodec:
		return 2 * int64(base64.StdEncoding.EncodedLen(n))
	}
	return 12 * int64(n)
}
