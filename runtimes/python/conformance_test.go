package python_test

import (
	"testing"

	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// TestConformance runs the suite every runtime passes, with Python snippets.
func TestConformance(t *testing.T) {
	runtimetest.Run(t, runtimeForTest(t), runtimetest.Snippets{
		PrintHello:      "print('hello')",
		WriteStderr:     "import sys\nprint('oops', file=sys.stderr)",
		DefineState:     "x = 41",
		ReadState:       "x + 1",
		LastExpression:  "6 * 7",
		NoResult:        "y = 1",
		Raise:           "raise RuntimeError('boom')",
		SyntaxError:     "def f(:",
		InfiniteLoop:    "while True:\n    pass",
		ReadFile:        "print(open('data.txt').read(), end='')",
		ReadPasswd:      "print(open('/etc/passwd').read())",
		ReadOutside:     "print(open('{{outside}}').read())",
		EscapeSymlink:   "import os\nos.symlink('{{outside}}', 'link.txt')\nprint(open('link.txt').read())",
		PrintEnv:        "import os\nprint(os.environ['WASMEVAL_TEST_VAR'])",
		PrintHostSecret: "import os\nprint(os.environ.get('WASMEVAL_HOST_SECRET', ''))",
		DisplayJSON:     "display({'a': 1, 'b': [1, 2]})",
		DisplayMarkdown: "class M:\n    def _repr_markdown_(self):\n        return '# Title'\ndisplay(M())",
		PrintTime:       "import time\nprint(int(time.time()))",
		PrintRandom:     "import random\nprint(random.random())",
	})
}
