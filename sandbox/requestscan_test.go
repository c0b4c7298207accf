package sandbox

import (
	"reflect"
	"strings"
	"testing"
)

// scanSeeds are requests ScanRequest must read, and ones it must leave to
// the general path (which accepts some and refuses others).
var scanSeeds = []struct {
	in   string
	scan bool // ScanRequest reads it
}{
	{`{"cells":[{"language":"py","code":"x = 1"}]}`, true},
	{" \n\t{ \"cells\" : [ { \"code\" : \"x\" , \"language\" : \"py\" } ] }\r\n ", true},
	{`{"cells":[{"language":"js","code":"1","title":"t","timeout":600,"reset":true},{"language":"py","code":"y","fuel":1000,"reset":false}]}`, true},
	{`{"cells":[{"language":"py","code":"print(\"a\\tb\\n\")\n# \u00e9\/ \u20ac \\u0041"}]}`, true},
	{`{"cells":[{"language":"py","code":"é€😀 raw UTF-8"}]}`, true},
	{`{"cells":[{"l\u0061nguage":"py","code":"x"}]}`, true},
	{`{"cells":[{"language":"py","code":"\u0000"}]}`, true},
	// The general path's: nulls, floats, surrogates, invalid UTF-8.
	{`{"cells":[{"language":"py","code":"x","title":null}]}`, false},
	{`{"cells":[{"language":"py","code":"x","timeout":1.0}]}`, false},
	{`{"cells":[{"language":"py","code":"x","timeout":3e1}]}`, false},
	{`{"cells":[{"language":"py","code":"\ud83d\ude00"}]}`, false},
	{"{\"cells\":[{\"language\":\"py\",\"code\":\"\xff\"}]}", false},
	// Errors, which only the general path words.
	{`{"cells":[{"language":"py","code":"x","code":"y"}]}`, false},
	{`{"cells":[{"language":"py","code":"x"}],"cells":[]}`, false},
	{`{"cells":[{"language":"py","code":"x"}]} {}`, false},
	{`{"cells":[{"language":"py","code":"x"}]`, false},
	{`{"cells":[]}`, false},
	{`{"cells":[{"language":"py"}]}`, false},
	{`{"cells":[{"code":"x"}]}`, false},
	{`{"cells":[{"language":"rb","code":"x"}]}`, false},
	{`{"cells":[{"language":"py","code":"  "}]}`, false},
	{`{"cells":[{"language":"js","code":"x","fuel":5}]}`, false},
	{`{"cells":[{"language":"py","code":"x","timeout":0}]}`, false},
	{`{"cells":[{"language":"py","code":"x","timeout":601}]}`, false},
	{`{"cells":[{"language":"py","code":"x","timeout":030}]}`, false},
	{`{"cells":[{"language":"py","code":"x","timeout":-1}]}`, false},
	{`{"cells":[{"language":"py","code":"x","fuel":0}]}`, false},
	{`{"cells":[{"language":"py","code":"x","fuel":35184372088833}]}`, false},
	{`{"cells":[{"language":"py","code":"x","fuel":99999999999999999999999}]}`, false},
	{`{"cells":[{"language":"py","code":"x","reset":1}]}`, false},
	{`{"cells":[{"language":"py","code":"x","colour":1}]}`, false},
	{`{"cells":[{"language":"py","code":"a` + "\n" + `b"}]}`, false},
	{`{"cells":[{"language":"py","code":"x\q"}]}`, false},
	{`{"cells":[{"language":"py","code":"\u12"}]}`, false},
	{`{"profile":"eval","cells":[{"language":"py","code":"x"}]}`, false},
	{`{"cells":[{"language":"py","code":"x"},]}`, false},
	{`[{"language":"py","code":"x"}]`, false},
	{``, false},
}

// TestScanRequest: ScanRequest reads the common shape and leaves the rest
// to the general path, and what it reads is what the general path makes
// of the same data.
func TestScanRequest(t *testing.T) {
	for _, tt := range scanSeeds {
		got, ok := ScanRequest([]byte(tt.in))
		if ok != tt.scan {
			t.Errorf("ScanRequest(%q): ok %v, want %v", tt.in, ok, tt.scan)
		}
		checkScan(t, []byte(tt.in))
		if ok && len(got.Cells) == 0 {
			t.Errorf("ScanRequest(%q): no cells", tt.in)
		}
	}
	many := `{"cells":[` + strings.Repeat(`{"language":"py","code":"x"},`, MaxCells) + `{"language":"py","code":"x"}]}`
	if _, ok := ScanRequest([]byte(many)); ok {
		t.Errorf("ScanRequest read %d cells, more than MaxCells", MaxCells+1)
	}
	checkScan(t, []byte(many))
}

// checkScan fails t when ScanRequest reads data differently from the
// general path.
func checkScan(t *testing.T, data []byte) {
	t.Helper()
	got, ok := ScanRequest(data)
	want, err := decodeGeneral(data)
	if !ok {
		return
	}
	if err != nil {
		t.Fatalf("ScanRequest read %q, which the general path refuses: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ScanRequest(%q) = %+v; the general path: %+v", data, got, want)
	}
}

func FuzzScanRequest(f *testing.F) {
	for _, tt := range scanSeeds {
		f.Add([]byte(tt.in))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkScan(t, data) })
}

func BenchmarkScanRequest(b *testing.B) {
	data := []byte(`{"cells":[{"language":"py","code":"import math\nprint(math.pi)","title":"pi","timeout":10},{"language":"js","code":"1 + 1"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := ScanRequest(data); !ok {
			b.Fatal("not read")
		}
	}
}
