package sandbox_test

import (
	"testing"
	"time"
)

// BenchmarkParallelAgents: eight agent calls of 100 ms at concurrency 4
// should take about 200 ms per op in either language.
func BenchmarkParallelAgents(b *testing.B) {
	code := map[string]string{
		"py": `parallel([lambda i=i: agent(f"t{i}") for i in range(8)], concurrency=4)`,
		"js": `await parallel([...Array(8).keys()].map((i) => () => agent('t' + i)), {concurrency: 4})`,
	}
	for _, lang := range []string{"py", "js"} {
		b.Run(lang, func(b *testing.B) {
			s, _ := helperSession(b, &countingHost{delay: 100 * time.Millisecond})
			b.ReportAllocs()
			for b.Loop() {
				evalLang(b, s, lang, code[lang])
			}
		})
	}
}
