package jupyter_test

import (
	"context"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/jupyter"
	rtjupyter "github.com/wasmeval/wasmeval/runtimes/jupyter"
	"github.com/wasmeval/wasmeval/runtimes/runtimetest"
)

// testGatewayConformance runs the runtime conformance suite on kernels of
// the external server: the Jupyter backend with Gateway.Start as its
// Starter, so cells, helpers (over the stdin channel), interrupts and
// timeouts cross the websocket. The cases left out are those the local
// backend leaves out, for the same reasons (runtimes/jupyter's
// TestConformance): a kernel is a host process, with the host's clock.
func testGatewayConformance(t *testing.T, s *jupyterServer) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	g, err := jupyter.DialGateway(ctx, s.url, s.token)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := rtjupyter.New(rtjupyter.Config{Start: g.Start, MaxKernels: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close(context.Background()) })
	runtimetest.Run(t, rt, runtimetest.Snippets{
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
		PrintEnv:        "import os\nprint(os.environ['WASMEVAL_TEST_VAR'])",
		PrintHostSecret: "import os\nprint(os.environ.get('WASMEVAL_HOST_SECRET', ''))",
		DisplayJSON:     "display({'a': 1, 'b': [1, 2]})",
		DisplayMarkdown: "class M:\n    def _repr_markdown_(self):\n        return '# Title'\ndisplay(M())",
		PrintRandom:     "import random\nprint(random.random())",
	})
}
