package jupyter_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/jupyter"
)

// kernelPython is the interpreter the tests start kernels with: Debian's
// python3 with python3-ipykernel (make jupyter-deps).
func kernelPython(t testing.TB) string {
	t.Helper()
	return testenv.JupyterPython(t)
}

func startKernel(t testing.TB) *jupyter.LocalKernel {
	t.Helper()
	py := kernelPython(t)
	root := t.TempDir()
	k, err := jupyter.StartLocal(context.Background(), jupyter.LocalOptions{
		StartOptions: jupyter.StartOptions{Root: root, Python: py, Env: map[string]string{"PATH": "/usr/bin:/bin", "HOME": root}},
	})
	if err != nil {
		t.Fatalf("StartLocal: %v", err)
	}
	t.Cleanup(func() { k.Close(context.Background()) })
	return k
}

type recorder struct {
	mu     sync.Mutex
	types  []string
	stdout strings.Builder
	inputs []string
}

func (r *recorder) IOPub(msgType string, m *jupyter.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.types = append(r.types, msgType)
	if msgType == "stream" {
		var s jupyter.StreamContent
		m.Decode(&s)
		r.stdout.WriteString(s.Text)
	}
}

func (r *recorder) Input(prompt string, password bool) string {
	r.inputs = append(r.inputs, prompt)
	return "typed"
}

func TestExecute(t *testing.T) {
	k := startKernel(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rec := &recorder{}
	reply, err := k.Client().Execute(ctx, "print('hello')\nx = input('name? ')\nprint(x)\n6*7", jupyter.ExecuteOptions{}, rec)
	if err != nil {
		t.Fatal(err)
	}
	if reply.Status != "ok" {
		t.Errorf("status = %q, want ok", reply.Status)
	}
	if got := rec.stdout.String(); got != "hello\ntyped\n" {
		t.Errorf("stdout = %q", got)
	}
	if len(rec.inputs) != 1 || rec.inputs[0] != "name? " {
		t.Errorf("inputs = %q", rec.inputs)
	}
	if !contains(rec.types, "execute_result") {
		t.Errorf("iopub types = %v, want an execute_result", rec.types)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
