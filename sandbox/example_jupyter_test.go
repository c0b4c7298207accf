package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Python cells run in a native Jupyter kernel with the jupyter backend:
// numpy and matplotlib work, and the kernel is not a sandbox. The kernel's
// interpreter is found as Python tools find it (VIRTUAL_ENV, the root's
// .venv or venv, python3 on PATH that imports ipykernel).
func ExampleOptions_pythonBackend() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{PythonBackend: sandbox.PythonJupyter})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	dir, err := os.MkdirTemp("", "session")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: dir})
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "import numpy as np\nint(np.arange(10).sum())"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output: 45
}
