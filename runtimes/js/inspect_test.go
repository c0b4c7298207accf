package js_test

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

var update = flag.Bool("update", false, "regenerate golden files (needs node)")

const inspectDir = "../../testdata/js/inspect"

// inspectCases returns the expressions of cases.js.
func inspectCases(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(inspectDir, "cases.js"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "//") {
			continue
		}
		cases = append(cases, line)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// nodeScript prints util.inspect of each case as golden.txt has it.
const nodeScript = `
const util = require('util');
const cases = JSON.parse(require('fs').readFileSync(0, 'utf8'));
let out = '';
for (const c of cases) {
  out += '=== ' + c + '\n' + util.inspect(eval('(' + c + ')')) + '\n';
}
process.stdout.write(out);
`

// TestInspectGolden checks that cell results print as Node's util.inspect
// prints them.
func TestInspectGolden(t *testing.T) {
	cases := inspectCases(t)
	golden := filepath.Join(inspectDir, "golden.txt")
	if *update {
		node, err := exec.LookPath("node")
		if err != nil {
			t.Fatal("-update needs node")
		}
		var stdin bytes.Buffer
		fmt.Fprintf(&stdin, "[")
		for i, c := range cases {
			if i > 0 {
				stdin.WriteString(",")
			}
			fmt.Fprintf(&stdin, "%q", c)
		}
		stdin.WriteString("]")
		cmd := exec.Command(node, "-e", nodeScript)
		cmd.Stdin = &stdin
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v", err)
		}
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, block := range strings.Split(string(data), "=== ")[1:] {
		c, out, _ := strings.Cut(block, "\n")
		want[c] = strings.TrimSuffix(out, "\n")
	}
	s := newSession(t, runtimes.InstanceOptions{})
	for _, c := range cases {
		w, ok := want[c]
		if !ok {
			t.Errorf("%s: not in golden.txt (run with -update)", c)
			continue
		}
		got, _ := s.ok("(" + c + ")")
		if got == "" {
			got = "undefined"
		}
		if got != w {
			t.Errorf("%s\n got:\n%s\nwant:\n%s", c, got, w)
		}
	}
}
