package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/wasmeval/wasmeval/sandbox"
)

func ExampleDecodeRequest() {
	req, err := sandbox.DecodeRequest([]byte(`{"cells": [
		{"language": "py", "code": "x = 6 * 7", "title": "compute"},
		{"language": "js", "code": "1 + 1", "timeout": 5}
	]}`))
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range req.Cells {
		fmt.Printf("%s %q timeout=%ds\n", c.Language, c.Code, c.TimeoutSeconds)
	}
	// Output:
	// py "x = 6 * 7" timeout=30s
	// js "1 + 1" timeout=5s
}

func ExampleRequestError() {
	_, err := sandbox.DecodeRequest([]byte(`{"cells": [{"language": "py", "code": "x", "timout": 5}]}`))
	var re *sandbox.RequestError
	if errors.As(err, &re) {
		fmt.Println(re.Path)
		fmt.Println(re.Message)
	}
	_, err = sandbox.DecodeRequest([]byte(`{"cells": [{"language": "py", "code": "x", "timeout": 900}]}`))
	fmt.Println(err)
	// Output:
	// cells[0]
	// unknown field "timout" (did you mean "timeout"?); the fields are language, code, title, timeout, reset, fuel
	// sandbox: invalid request: cells[0].timeout: 900 is out of range; use an integer from 1 to 600 seconds
}

// A session keeps each language's state from cell to cell and from request
// to request; a failing cell stops the request and is data, not an error.
func ExampleSession_Eval() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
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
		{Language: "js", Code: "let n = 6 * 7;\nconsole.log('n is', n);", Title: "compute"},
		{Language: "js", Code: "n + 1"},
	}})
	if err != nil {
		log.Fatal(err) // the host failed
	}
	fmt.Println(res.Content[0].Text)
	fmt.Println("isError:", res.Details.IsError)

	res, err = s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "js", Code: "n.foo.bar"},
		{Language: "js", Code: "'not run'"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range res.Details.Cells {
		fmt.Println(c.Index, c.Status)
	}
	fmt.Println("isError:", res.Details.IsError)
	// Output:
	// [1/2] compute
	// n is 42
	//
	// [2/2] js
	// 43
	// isError: false
	// 0 error
	// 1 pending
	// isError: true
}

// Python works the same way. (This example needs the CPython artifact: run
// make.)
func ExampleSession_Eval_python() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
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
		{Language: "py", Code: "x = 6 * 7\nprint('x is', x)", Title: "compute"},
		{Language: "py", Code: "x + 1"},
	}})
	if err != nil {
		log.Fatal(err) // the host failed; a failing cell is not an error
	}
	fmt.Println(res.Content[0].Text)
	fmt.Println("isError:", res.Details.IsError)
	// [1/2] compute
	// x is 42
	//
	// [2/2] py
	// 43
	// isError: false
}

// Output past 50 KB or 3000 lines is cut to its head and tail; the session
// keeps the full text. (This example needs the CPython artifact: run make.)
func ExampleSession_Output() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	s, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: os.TempDir()})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close(ctx)

	res, err := s.Eval(ctx, sandbox.Request{Cells: []sandbox.Cell{
		{Language: "py", Code: "for i in range(10000): print(i)"},
	}})
	if err != nil {
		log.Fatal(err)
	}
	for _, tr := range res.Details.Meta.Truncated {
		full, err := s.Output(tr.OutputID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("cell %d: %d of %d lines cut; %d bytes kept as %s\n",
			tr.Cell, tr.OmittedLines, tr.Lines, len(full), tr.OutputID)
	}
}
