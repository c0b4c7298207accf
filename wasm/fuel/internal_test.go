package fuel

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wasmeval/wasmeval/internal/testenv"
)

func TestLEB(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s64 := []int64{0, 1, -1, 63, 64, -64, -65, 127, 128, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64}
	for range 1000 {
		s64 = append(s64, int64(rng.Uint64())>>rng.IntN(64))
	}
	for _, v := range s64 {
		b := appendS64(nil, v)
		r := &reader{b: b}
		got, err := r.signed(64)
		if err != nil || got != v || !r.eof() {
			t.Fatalf("s64 %d: % x -> %d, %v", v, b, got, err)
		}
		if v == int64(int32(v)) {
			r = &reader{b: b}
			if got, err := r.signed(32); err != nil || got != v {
				t.Fatalf("s32 %d: % x -> %d, %v", v, b, got, err)
			}
		}
		u := uint32(v)
		b = appendU32(nil, u)
		if len(b) != sizeU32(u) {
			t.Fatalf("sizeU32(%d) = %d, encoded %d bytes", u, sizeU32(u), len(b))
		}
		r = &reader{b: b}
		if got, err := r.u32(); err != nil || got != u {
			t.Fatalf("u32 %d: % x -> %d, %v", u, b, got, err)
		}
	}
	// Padded (non-canonical) encodings, as linkers write them, are valid.
	for _, tc := range []struct {
		b    []byte
		bits int
		want int64
	}{
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x00}, 32, 0},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x7f}, 32, -1},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x07}, 32, math.MaxInt32},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x78}, 32, math.MinInt32},
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 33, 1<<32 - 1},
		{[]byte{0x40}, 33, -64},
	} {
		r := &reader{b: tc.b}
		if got, err := r.signed(tc.bits); err != nil || got != tc.want {
			t.Errorf("s%d % x = %d, %v; want %d", tc.bits, tc.b, got, err, tc.want)
		}
	}
	// Out of range or too long.
	for _, tc := range []struct {
		b    []byte
		bits int
	}{
		{[]byte{0xff, 0xff, 0xff, 0xff, 0x0f}, 32},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x70}, 32},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x00}, 32},
		{[]byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02}, 64},
		{[]byte{0x80}, 64},
	} {
		r := &reader{b: tc.b}
		if got, err := r.signed(tc.bits); err == nil {
			t.Errorf("s%d % x = %d, want an error", tc.bits, tc.b, got)
		}
	}
	for _, b := range [][]byte{{0xff, 0xff, 0xff, 0xff, 0x10}, {0x80, 0x80, 0x80, 0x80, 0x80, 0x00}} {
		r := &reader{b: b}
		if got, err := r.u32(); err == nil {
			t.Errorf("u32 % x = %d, want an error", b, got)
		}
	}
}

// TestPythonCensus reports what python.wasm uses (run with -v): opcode
// classes, block types and the distribution of check costs.
func TestPythonCensus(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "python", "dist", "python.wasm.zst"))
	if errors.Is(err, os.ErrNotExist) {
		testenv.RequirePython(t)
	}
	if err != nil {
		t.Fatal(err)
	}
	d, _ := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	defer d.Close()
	bin, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &module{bin: bin, hook: -1}
	if err := m.parseSections(); err != nil {
		t.Fatal(err)
	}
	r := m.reader(m.section(secCode))
	n, _ := r.u32()
	counts := map[string]int{}
	var costs []int64
	var edits []edit
	var in instr
	for i := uint32(0); i < n; i++ {
		size, _ := r.u32()
		body := r.b[r.off : r.off+int(size)]
		r.off += int(size)
		br := &reader{b: body}
		edits, _, err = bodyEdits(&reader{b: body}, edits[:0], bodyOpts{})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range edits {
			costs = append(costs, e.cost)
		}
		// Walk again for the census.
		k, _ := br.u32()
		for ; k > 0; k-- {
			br.u32()
			br.byte()
		}
		for !br.eof() {
			op := br.b[br.off]
			if op >= 0x02 && op <= 0x04 {
				peek := *br
				peek.off++
				if v, _ := peek.signed(33); v >= 0 {
					counts["multi-value block type"]++
				} else if v != -0x40 {
					counts["single-result block type"]++
				}
			}
			if err := br.next(&in); err != nil {
				t.Fatal(err)
			}
			switch {
			case in.op == 0xfc && in.sub <= 7:
				counts["0xfc saturating truncation"]++
			case in.op == 0xfc && (in.sub <= 11):
				counts["0xfc bulk memory"]++
			case in.op == 0xfc:
				counts["0xfc table ops"]++
			case in.op == 0xfd:
				counts["0xfd SIMD"]++
			case in.op == 0xfe:
				counts["0xfe atomics"]++
			case in.op >= 0xc0 && in.op <= 0xc4:
				counts["sign extension"]++
			case in.op >= 0xd0 && in.op <= 0xd2, in.op == 0x25, in.op == 0x26, in.op == 0x1c:
				counts["reference types"]++
			case in.op == 0x12 || in.op == 0x13:
				counts["tail calls"]++
			case in.op == 0x03:
				counts["loop"]++
			case in.op == 0x0e:
				counts["br_table"]++
			case in.op == 0x11:
				counts["call_indirect"]++
			}
			counts["instructions"]++
		}
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i] < costs[j] })
	var sum int64
	for _, c := range costs {
		sum += c
	}
	cc := newCheckCode(1, 42, false)
	var checkBytes int
	for _, c := range costs {
		checkBytes += len(cc.pre) + len(appendS64(nil, c)) + len(cc.post)
	}
	codeSize := m.section(secCode).end - m.section(secCode).start
	t.Logf("%d functions, %d checks (entries and loops): %d bytes, %.1f%% of the code section (%d bytes)",
		n, len(costs), checkBytes, 100*float64(checkBytes)/float64(codeSize), codeSize)
	t.Logf("check cost: min %d, median %d, p90 %d, max %d, mean %.1f",
		costs[0], costs[len(costs)/2], costs[len(costs)*9/10], costs[len(costs)-1], float64(sum)/float64(len(costs)))
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("%-28s %d", k, counts[k])
	}
}
