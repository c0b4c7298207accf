package profiles_test

import (
	"context"
	"fmt"
	"log"
	"os"

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
