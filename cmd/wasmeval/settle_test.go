package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/sandbox"
)

// settleSession is a fakeSession with the session's work between cells
// (sandbox.Session.Settle); it logs its evals and settles, each settle
// with the answer lines written by then.
type settleSession struct {
	*fakeSession
	stdout *bytes.Buffer
	log    []string
}

func (s *settleSession) Eval(ctx context.Context, req sandbox.Request) (*sandbox.Result, error) {
	s.log = append(s.log, "eval "+req.Cells[0].Code)
	return s.fakeSession.Eval(ctx, req)
}

func (s *settleSession) Settle() {
	s.log = append(s.log, fmt.Sprintf("settle after %d answers", strings.Count(s.stdout.String(), "\n")))
}

// TestEvalSettlesAfterEachAnswer: eval has the session do its work between
// cells (the checkpoint) once each answer is written, before it reads the
// next line, so that the next cell does not wait for it (issue 15).
func TestEvalSettlesAfterEachAnswer(t *testing.T) {
	var out, errb bytes.Buffer
	s := &settleSession{fakeSession: &fakeSession{}, stdout: &out}
	old := openSession
	openSession = func(context.Context, sandbox.SessionOptions, sandbox.Options) (evalSession, error) { return s, nil }
	t.Cleanup(func() { openSession = old })

	stdin := req("ok one") + "\n\nnot json\n" + req("ok two") + "\n"
	code := doMain(context.Background(), []string{"eval", "--cwd", t.TempDir()}, strings.NewReader(stdin), &out, &errb)
	if code != exitInvalid {
		t.Fatalf("exit %d, want %d; stderr: %s", code, exitInvalid, errb.String())
	}
	want := []string{
		"eval ok one", "settle after 1 answers",
		"settle after 2 answers", // the invalid line's answer
		"eval ok two", "settle after 3 answers",
	}
	if got := strings.Join(s.log, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("evals and settles:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}
