package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/wasmeval/wasmeval/sandbox"
)

// TypeScript cells ("ts") have their types stripped and run in the
// session's JavaScript state; a failure names the cell.
func ExampleSession_Eval_typescript() {
	ctx := context.Background()
	// Python is disabled: its cells fail, naming what is enabled.
	sb, err := sandbox.New(ctx, sandbox.Options{Languages: []string{"js"}})
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
	defer s.Close(ctx)

	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "ts", Code: "interface Point { x: number; y: number }\nconst p: Point = { x: 3, y: 4 }", Title: "types"},
		{Language: "js", Code: "Math.hypot(p.x, p.y)"},
		{Language: "ts", Code: "const f = (n: number): number => {\n  throw new Error('no ' + n)\n}\nf(p.x)", Title: "fails"},
		{Language: "py", Code: "print('not run')"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "py", Code: "print(1)"}}})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Content[0].Text)
	// Output:
	// [1/4] types
	// (no output)
	//
	// [2/4] js
	// 5
	//
	// [3/4] fails
	// Uncaught Error: no 3
	//     at f (<cell-3>:2:9)
	//     at <cell-3>:4:2
	//
	// [4/4] py
	// (not run)
	//
	// Cell 3 (fails) failed
	// "py" cells are disabled here; the enabled languages are js, ts
	//
	// Cell 1 (py) failed
}
