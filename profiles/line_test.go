package profiles

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// TestEvalRequest: EvalRequest reads the common eval line, and what it
// reads is what DecodeLine and sandbox.DecodeRequest make of the line;
// every other line (another tool's, a "profile" field, an invalid one)
// is left to them.
func TestEvalRequest(t *testing.T) {
	for _, tt := range []struct {
		line string
		read bool
	}{
		{`{"cells":[{"language":"py","code":"x = 1"}]}`, true},
		{`{"cells":[{"language":"js","code":"1","title":"t","timeout":5},{"language":"py","code":"y","reset":true,"fuel":100}]}`, true},
		{`{"cells":[{"code":"x = 1"}]}`, false}, // python's tool
		{`{"profile":"eval","cells":[{"language":"py","code":"x"}]}`, false},
		{`{"code":"1 + 1"}`, false},                         // evaluate_python
		{`{"language":"python","code":"6 * 7"}`, false},     // run_code
		{`{"cells":[{"language":"rb","code":"x"}]}`, false}, // invalid
		{`{"cells":[{"language":"py","code":"x"}],"timeout":3}`, false},
		{`not json`, false},
	} {
		req, ok := EvalRequest([]byte(tt.line))
		if ok != tt.read {
			t.Errorf("EvalRequest(%s): ok %v, want %v", tt.line, ok, tt.read)
			continue
		}
		if !ok {
			continue
		}
		tool, args, err := DecodeLine([]byte(tt.line))
		if err != nil || tool != nil {
			t.Fatalf("DecodeLine(%s) = %v, %v; EvalRequest read it as an eval request", tt.line, tool, err)
		}
		want, err := sandbox.DecodeRequest(args)
		if err != nil {
			t.Fatalf("DecodeRequest(%s): %v; EvalRequest read it", tt.line, err)
		}
		if !reflect.DeepEqual(req, want) {
			t.Errorf("EvalRequest(%s) = %+v; DecodeLine and DecodeRequest: %+v", tt.line, req, want)
		}
	}
}

// TestNoToolClaimsEvalCells: no tool's Detect claims a line of cells
// with languages, which EvalRequest reads as an eval request without
// asking them; a tool that did would make EvalRequest step aside.
func TestNoToolClaimsEvalCells(t *testing.T) {
	m := map[string]json.RawMessage{"cells": json.RawMessage(`[{"language":"js","code":"1","title":"t"},{"language":"py","code":"x"}]`)}
	for _, tool := range tools {
		if tool.Detect != nil && tool.Detect(m) {
			t.Errorf("tool %s claims an eval request's cells", tool.Name)
		}
	}
	if cellsClaimed() {
		t.Error("cellsClaimed: a tool claims an eval request's cells")
	}
}
