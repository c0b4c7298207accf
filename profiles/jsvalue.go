package profiles

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wasmeval/wasmeval/internal/goja/ast"
	"github.com/wasmeval/wasmeval/internal/goja/parser"

	"github.com/wasmeval/wasmeval/sandbox"
)

// The real value of a JavaScript run's last expression, for
// code_interpreter's {type: "result", value}.
//
// The runtime shows a cell's last value as inspected text (`{ a: [
// 1, 'x' ] }`, cut at a depth, a length and a string size), which is no
// JSON value. So the run's code is given a last expression statement that
// also keeps its value, `globalThis[Symbol.for("wasmeval.codeValue")] =
// (expr)`: the same value is shown, and a second cell in the same
// interpreter reads it, checks that JSON holds it as it is (null,
// booleans, finite numbers, strings, and arrays and plain objects of
// them) and prints its JSON with a nonce, which Go takes out of that
// cell's output. The text the prefix needs goes right after the
// statement before the last one, so the expression keeps its line and
// column; only when the expression shares a line with what comes before
// it (a one-line cell) do the columns of that line move.

// jsValueSlot is where the rewritten code leaves its last value.
const jsValueSlot = `globalThis[Symbol.for("wasmeval.codeValue")]`

// captureJSValue returns code with its last top-level expression
// statement also storing its value in jsValueSlot; ok is false when code
// has none, or does not parse here (the runtime lowers some syntax, like
// for await, before it parses), and then code is run as it is.
func captureJSValue(code string) (string, bool) {
	const asyncPrefix = "(async () => {\n"
	shift := 0
	var body []ast.Statement
	prg, err := parser.ParseFile(nil, "", code, 0)
	if err == nil {
		body = prg.Body
	} else {
		// Top-level await or return: the runtime runs the cell as the body
		// of an async arrow, and so it parses here.
		prg, err = parser.ParseFile(nil, "", asyncPrefix+code+"\n})", 0)
		if err != nil || len(prg.Body) != 1 {
			return code, false
		}
		es, ok := prg.Body[0].(*ast.ExpressionStatement)
		if !ok {
			return code, false
		}
		arrow, ok := es.Expression.(*ast.ArrowFunctionLiteral)
		if !ok {
			return code, false
		}
		block, ok := arrow.Body.(*ast.BlockStatement)
		if !ok {
			return code, false
		}
		body, shift = block.List, len(asyncPrefix)
	}
	if len(body) == 0 {
		return code, false
	}
	last, ok := body[len(body)-1].(*ast.ExpressionStatement)
	if !ok {
		return code, false
	}
	// goja's positions are where the expression's first and last tokens
	// are, not always past its end (a new expression's ends before its
	// arguments) nor before its parentheses: they only bound the search.
	start := int(last.Expression.Idx0()) - 1 - shift
	end := int(last.Expression.Idx1()) - 1 - shift
	if start < 0 || end > len(code) || start >= end {
		return code, false
	}
	// The prefix goes where the statement before ends, before the line
	// breaks and the parentheses that lead to the expression, so that
	// the expression keeps its line and column; failing that (a line
	// comment ends the line before), at the start of its own line.
	q := start
	for q > 0 && (code[q-1] == '(' || isJSSpace(code[q-1])) {
		q--
	}
	at := []int{q}
	if ls := strings.LastIndexByte(code[:start], '\n') + 1; ls > q {
		at = append(at, ls)
	}
	for _, p := range at {
		if out, ok := rewriteLast(code, p, end, asyncPrefix); ok {
			return out, true
		}
	}
	return code, false
}

// rewriteLast wraps code[p:r] in the slot's assignment, where r is the
// first offset from end on at which the expression is whole (code[p:r]
// parses as an expression) and only semicolons, spaces and comments are
// left.
func rewriteLast(code string, p, end int, asyncPrefix string) (string, bool) {
	for r := end; r <= len(code) && r <= end+4096; r++ {
		if !onlyJunk(code[r:]) || !isJSExpression(code[p:r]) {
			continue
		}
		var b strings.Builder
		b.WriteString(code[:p])
		if p > 0 {
			b.WriteString(";")
		}
		b.WriteString(jsValueSlot + " = (")
		b.WriteString(code[p:r])
		b.WriteString(")")
		b.WriteString(code[r:])
		out := b.String()
		return out, parsesAsCell(out, asyncPrefix)
	}
	return "", false
}

// onlyJunk reports whether s holds no statement: only semicolons, spaces
// and comments.
func onlyJunk(s string) bool {
	if strings.TrimSpace(s) == "" {
		return true
	}
	prg, err := parser.ParseFile(nil, "", s, 0)
	if err != nil {
		return false
	}
	for _, st := range prg.Body {
		if _, empty := st.(*ast.EmptyStatement); !empty {
			return false
		}
	}
	return true
}

// isJSExpression reports whether s is one expression (await allowed).
func isJSExpression(s string) bool {
	prg, err := parser.ParseFile(nil, "", "(async () => (\n"+s+"\n))", 0)
	return err == nil && len(prg.Body) == 1
}

func isJSSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// parsesAsCell reports whether code parses as a script or as the body of
// an async arrow.
func parsesAsCell(code, asyncPrefix string) bool {
	if _, err := parser.ParseFile(nil, "", code, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(nil, "", asyncPrefix+code+"\n})", 0)
	return err == nil
}

// jsValueCell is the cell that reads jsValueSlot back; %[1]q is the nonce,
// %[2]d the longest JSON.
const jsValueCell = `(() => {
  const key = Symbol.for("wasmeval.codeValue");
  const g = globalThis;
  const say = g.print;
  if (!Object.prototype.hasOwnProperty.call(g, key)) { say(%[1]q + " none"); return; }
  const v = g[key];
  delete g[key];
  let budget = 1000000;
  const plain = (x, depth) => {
    if (--budget < 0 || depth > 100) return false;
    if (x === null || typeof x === "string" || typeof x === "boolean") return true;
    if (typeof x === "number") return Number.isFinite(x);
    if (typeof x !== "object") return false;
    const proto = Object.getPrototypeOf(x);
    if (Array.isArray(x)) {
      if (proto !== Array.prototype) return false;
      for (let i = 0; i < x.length; i++) if (!(i in x) || !plain(x[i], depth + 1)) return false;
      return true;
    }
    if (proto !== Object.prototype && proto !== null) return false;
    if (Object.getOwnPropertySymbols(x).length > 0) return false;
    for (const k of Object.keys(x)) {
      const d = Object.getOwnPropertyDescriptor(x, k);
      if (!d || !("value" in d) || !plain(d.value, depth + 1)) return false;
    }
    return true;
  };
  let s = null;
  try {
    if (plain(v, 0)) {
      s = JSON.stringify(v);
      if (typeof s !== "string" || s.length > %[2]d) s = null;
    }
  } catch (e) {
    s = null;
  }
  say(%[1]q + (s === null ? " repr" : " json " + s));
})()`

// jsRealValue reads the value the rewritten run left in jsValueSlot: its
// JSON, or ok true with nil when JSON cannot hold it as it is (the repr is
// the result then); ok false when it could not be read (the interpreter's
// print was replaced, say).
func jsRealValue(ctx context.Context, eval func(context.Context, sandbox.Request) (*sandbox.Result, error)) (v json.RawMessage, ok bool) {
	var nonce [12]byte
	rand.Read(nonce[:])
	n := "wasmeval-value-" + hex.EncodeToString(nonce[:])
	var mu sync.Mutex
	var out strings.Builder
	vctx := sandbox.WithEventFunc(context.WithoutCancel(ctx), func(ev sandbox.Event) {
		if ev.Kind == sandbox.EventStdout {
			mu.Lock()
			if out.Len() < 2*MaxResultJSONBytes {
				out.WriteString(ev.Text)
			}
			mu.Unlock()
		}
	})
	vctx, cancel := context.WithTimeout(vctx, 10*time.Second)
	defer cancel()
	code := fmt.Sprintf(jsValueCell, n, MaxResultJSONBytes)
	res, err := eval(vctx, sandbox.Request{Cells: []sandbox.Cell{{Language: "js", Code: code, Title: "result value", TimeoutSeconds: 10}}})
	if err != nil || res.Details.Cells[0].Status != sandbox.StatusComplete {
		return nil, false
	}
	mu.Lock()
	defer mu.Unlock()
	for _, line := range strings.Split(out.String(), "\n") {
		rest, found := strings.CutPrefix(line, n+" ")
		if !found {
			continue
		}
		switch {
		case rest == "repr":
			return nil, true
		case strings.HasPrefix(rest, "json "):
			if j := json.RawMessage(rest[len("json "):]); json.Valid(j) {
				return j, true
			}
		}
		return nil, false
	}
	return nil, false
}
