package tape

import (
	"bytes"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// TestReadRefusesABombOfRecords: a tape of many small records, which take
// ten times their lines' bytes in memory as records, is refused once
// their lines and records pass the cap (lowered here to 16 MiB;
// MaxTapeBytes otherwise), not once the lines alone do.
func TestReadRefusesABombOfRecords(t *testing.T) {
	defer func(l int64) { readLimit = l }(readLimit)
	readLimit = 16 << 20
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write([]byte(`{"t":"header","header":{"format":4,"wasmeval":"x","root":"/r","env":{},"options":{}}}` + "\n"))
	zw.Write([]byte(strings.Repeat(`{"t":"clock","clock":"mono","ns":1}`+"\n", 1<<20))) // 1 Mi records: 36 MiB of lines, ~400 MiB of records
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	tp, err := Read(bytes.NewReader(buf.Bytes()))
	if err == nil {
		t.Fatalf("a tape of %d records was read; want it refused past %d MiB", len(tp.Events), readLimit>>20)
	}
	if !strings.Contains(err.Error(), "more than 16 MiB in memory") {
		t.Errorf("the error %q does not name the cap", err)
	}
}
