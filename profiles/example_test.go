package profiles_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/wasmeval/wasmeval/profiles"
	"github.com/wasmeval/wasmeval/sandbox"
)

// An evaluate_python call decoded from the asteval tool's JSON and run in
// a session: the write is applied after the code ran, templated over the
// final globals.
func ExampleRunEvaluatePython() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)

	p, err := profiles.DecodeEvaluatePython([]byte(`{
	  "code": "total = 0\nfor value in range(5):\n    total += value\nprint(total)\ntotal",
	  "globals": {"who": "\"Ada\""},
	  "writes": [{"path": "total.txt", "content": "{who}: {total}"}]
	}`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := profiles.RunEvaluatePython(ctx, sess, p, profiles.EvalOptions{})
	if err != nil {
		log.Fatal(err)
	}
	written, _ := os.ReadFile(root + "/total.txt")
	fmt.Printf("value_repr %s, stdout %q, globals %v\n", *res.ValueRepr, res.Stdout, res.Globals)
	fmt.Printf("total.txt: %s\n", written)

	_, err = profiles.DecodeEvaluatePython([]byte(`{"code": "1", "writes": [{"path": "../x", "content": ""}]}`))
	fmt.Println(profiles.Detail(err))
	// Output:
	// value_repr 10, stdout "10\n", globals map[total:10 value:4 who:Ada]
	// total.txt: Ada: 10
	// evaluate_python: writes[0].path: "../x" has a ".." segment; give a path inside the session root without . or ..
}

// A python call (the Jupyter-backed tool's shape) in a session: cells run
// in order, a timeout stops the call, and input() marks the result.
func ExampleRunPython() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)
	env, contexts := profiles.SessionEnv(sess)
	defer contexts.Close(ctx)

	p, err := profiles.DecodePython([]byte(`{"cells": [{"code": "x = 6 * 7", "title": "set"}, {"code": "print(x)"}]}`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := profiles.RunPython(ctx, env, p)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q, isError %v\n", res.Content[0].Text, res.Details.IsError)

	p, _ = profiles.DecodePython([]byte(`{"cells": [{"code": "while True: pass"}], "timeout": 1}`))
	res, _ = profiles.RunPython(ctx, env, p)
	fmt.Printf("cancelled %v: %s", res.Details.Cancelled, res.Details.Cells[0].Output[strings.LastIndex(strings.TrimSpace(res.Details.Cells[0].Output), "\n")+1:])

	p, _ = profiles.DecodePython([]byte(`{"cells": [{"code": "input()"}]}`))
	res, _ = profiles.RunPython(ctx, env, p)
	fmt.Println("stdinRequested", res.Details.StdinRequested)
	// Output:
	// "[1/2] set\n(no output)\n\n[2/2]\n42", isError false
	// cancelled true: Command timed out after 1 seconds
	// stdinRequested true
}

// runCode and a code context of the CodeInterpreter interface: outputs as
// chunks, the last value as JSON.
func ExampleRunCode() {
	ctx := context.Background()
	sb, err := sandbox.New(ctx, sandbox.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer sb.Close(ctx)
	root, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(root)
	sess, err := sb.NewSession(ctx, sandbox.SessionOptions{Root: root})
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close(ctx)
	env, contexts := profiles.SessionEnv(sess)
	defer contexts.Close(ctx)

	res, err := profiles.RunCode(ctx, env, profiles.CodeRunParams{Language: "javascript", Code: "console.log('hi'); ({n: 6 * 7})"})
	if err != nil {
		log.Fatal(err)
	}
	b, _ := json.Marshal(res)
	fmt.Println(string(b))

	created, err := profiles.CreateContext(ctx, env, profiles.CodeContextParams{Language: "python"})
	if err != nil {
		log.Fatal(err)
	}
	profiles.RunInContext(ctx, env, profiles.CodeRunInParams{ContextID: created.ContextID, Code: "x = 20"})
	res, _ = profiles.RunInContext(ctx, env, profiles.CodeRunInParams{ContextID: created.ContextID, Code: "x + 1"})
	b, _ = json.Marshal(res)
	fmt.Println(string(b))
	deleted, _ := profiles.DeleteContext(ctx, env, created.ContextID)
	fmt.Println("deleted", deleted.OK)
	_, err = profiles.RunInContext(ctx, env, profiles.CodeRunInParams{ContextID: created.ContextID, Code: "x"})
	msg, _, _ := strings.Cut(strings.Replace(profiles.Detail(err), created.ContextID, "ID", 1), " (never")
	fmt.Println(msg)
	// Output:
	// {"outputs":[{"type":"stdout","text":"hi\n"},{"type":"result","value":{"n":42}}],"exitCode":0}
	// {"outputs":[{"type":"result","value":21}],"exitCode":0}
	// deleted true
	// code_interpreter: contextId: no such code context "ID"
}
