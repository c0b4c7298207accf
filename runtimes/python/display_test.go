package python_test

import (
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/runtimes"
)

// TestResultTextIsPprints: a cell's container result shows as
// pprint.pformat(value, width=79, sort_dicts=False) shows it, whether the
// prelude takes repr's quicker way (a short repr on one line) or not:
// recursion, subclasses with and without their own repr, newlines in
// elements, and containers too wide for one line.
func TestResultTextIsPprints(t *testing.T) {
	const values = `import collections, pprint, _wasmeval_prelude as _p
class D(dict): pass
class L(list): pass
class R(list):
    def __repr__(self): return "R!"
rec = [1]; rec.append(rec)
drec = {}; drec['a'] = drec
values = [{}, [], (), set(), frozenset(), {'a': 1}, [1, 2.5, 'x', None, True], (1,), {1, 2, 3},
    frozenset({1}), D(a=1), L([1]), R([1]), collections.OrderedDict(a=1),
    collections.defaultdict(int, a=1), collections.Counter('aab'), rec, drec, {'k': '...'},
    {'a': [1, {'b': (2, 3)}]}, [b'x', 1j, -0.0, float('nan')], {(1, 2): 'v'},
    list(range(26)), list(range(27)), list(range(30)), ['x' * 73], ['x' * 74], ['x' * 80],
    {'a': 'line\nbreak'}, [collections.namedtuple('P', 'x y')(1, 2)], dict(zip('abcdefghij', range(10)))]
bad = [repr(v)[:60] for v in values if _p._repr_text(v) != pprint.pformat(v, width=79, sort_dicts=False)]
print(bad)`
	onEnginesT(t, func(t *testing.T, inst runtimes.Instance) {
		if got := output(t, inst, values); got != "[]\n" {
			t.Fatalf("results shown otherwise than pprint shows them: %s", got)
		}
		for _, c := range []struct{ code, want string }{
			{"{'a': 1}", "{'a': 1}"},
			{"['x' * 75]", "['" + strings.Repeat("x", 75) + "']"}, // 79 columns
			{"['ab ' * 30]", "['ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab ab '\n"},
			{"list(range(27))", "[0,\n 1,\n 2,"},
		} {
			r, o := run(t, inst, c.code)
			if o.Failed || len(r.result) != 1 || !strings.HasPrefix(r.result[0]["text/plain"], c.want) {
				t.Errorf("%s shows %q, want it to start with %q", c.code, r.result, c.want)
			}
		}
	})
}
