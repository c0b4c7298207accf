// Command benchreport turns `go test -bench` output into docs/benchmarks.md:
// one table row per benchmark with its time per op and, where the benchmark
// measured the native counterpart in the same run (native-ns/op), the ratio.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

type row struct {
	pkg, name string
	metrics   map[string]float64
	order     []string
}

func main() {
	rows, env, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchreport:", err)
		os.Exit(1)
	}
	write(os.Stdout, rows, env)
}

func parse(r io.Reader) ([]row, []string, error) {
	var rows []row
	var env []string
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
		case strings.HasPrefix(line, "cpu: ") || strings.HasPrefix(line, "goos: ") || strings.HasPrefix(line, "goarch: "):
			if !contains(env, line) {
				env = append(env, line)
			}
		case strings.HasPrefix(line, "Benchmark"):
			f := strings.Fields(line)
			if len(f) < 4 {
				continue
			}
			rw := row{pkg: pkg, name: f[0], metrics: map[string]float64{}}
			for i := 2; i+1 < len(f); i += 2 {
				v, err := strconv.ParseFloat(f[i], 64)
				if err != nil {
					break
				}
				rw.metrics[f[i+1]] = v
				rw.order = append(rw.order, f[i+1])
			}
			rows = append(rows, rw)
		}
	}
	return rows, env, sc.Err()
}

func contains(s []string, x string) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func dur(ns float64) string {
	return time.Duration(ns).Round(time.Duration(max(1, ns/1000))).String()
}

func write(w io.Writer, rows []row, env []string) {
	fmt.Fprintln(w, "# Benchmarks")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Written by `make bench` (internal/benchreport) from one `go test -bench` run;")
	fmt.Fprintln(w, "native figures (Debian's python3.11, node) were measured in the same run on")
	fmt.Fprintln(w, "the same machine. Ratio = wasmeval time / native time.")
	fmt.Fprintln(w)
	for _, e := range env {
		fmt.Fprintf(w, "- %s\n", e)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| package | benchmark | time/op | native/op | ratio | other |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, r := range rows {
		native, ratio := "", ""
		if v, ok := r.metrics["native-ns/op"]; ok {
			native = dur(v)
		}
		if v, ok := r.metrics["x-native"]; ok {
			ratio = fmt.Sprintf("%.2fx", v)
		}
		var other []string
		for _, k := range r.order {
			switch k {
			case "ns/op", "native-ns/op", "x-native":
				continue
			}
			other = append(other, fmt.Sprintf("%s %s", strconv.FormatFloat(r.metrics[k], 'g', 4, 64), k))
		}
		pkg := strings.TrimPrefix(r.pkg, "github.com/wasmeval/wasmeval/")
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s |\n", pkg, r.name, dur(r.metrics["ns/op"]), native, ratio, strings.Join(other, ", "))
	}
}
