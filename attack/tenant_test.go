package attack_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/wasmeval/wasmeval/internal/testenv"
	"github.com/wasmeval/wasmeval/sandbox"
)

// Tenant canaries: what alice's sessions hold.
const (
	tenantGlobal = "TENANT-ALICE-GLOBAL-4410"
	tenantFile   = "TENANT-ALICE-FILE-5521"
	tenantOutput = "TENANT-ALICE-OUTPUT-6632"
)

// TestTenants: two owners of one Manager. Bob, through his cells and
// through the API with alice's session id, reaches none of alice's files,
// globals, outputs or sessions; alice's session is intact afterwards.
func TestTenants(t *testing.T) {
	testenv.RequirePython(t)
	ctx := context.Background()
	ws := t.TempDir()
	mgr, err := sandbox.NewManager(sharedSandbox(t), sandbox.ManagerOptions{Workspace: ws, Session: sessionOptions("")})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Close(ctx)
	idA, err := mgr.Create(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	idB, err := mgr.Create(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	evalAs := func(owner, id, lang, code string) (*sandbox.Result, error) {
		return mgr.Eval(ctx, owner, id, sandbox.Request{Cells: []sandbox.Cell{{Language: lang, Code: code, TimeoutSeconds: 10}}})
	}
	// Alice's secrets: globals in both languages, a file, a cut output.
	setup := []struct{ lang, code string }{
		{"py", "secret = '" + tenantGlobal + "'\nopen('alice.txt', 'w').write('" + tenantFile + "')"},
		{"js", "globalThis.secret = '" + tenantGlobal + "'"},
		{"py", "print(('" + tenantOutput + " ' * 10 + '\\n') * 20000)"},
	}
	var outputID string
	for _, s := range setup {
		res, err := evalAs("alice", idA, s.lang, s.code)
		if err != nil || res.Details.IsError {
			t.Fatalf("alice's setup %q: %v %+v", s.code, err, res)
		}
		if len(res.Details.Meta.Truncated) > 0 {
			outputID = res.Details.Meta.Truncated[0].OutputID
		}
	}
	if outputID == "" {
		t.Fatal("alice's long output was not cut, so there is no output id to attack")
	}
	sA, err := mgr.Session("alice", idA)
	if err != nil {
		t.Fatal(err)
	}
	rootA := sA.Root()
	if full, err := sA.Output(outputID); err != nil || !strings.Contains(full, tenantOutput) {
		t.Fatalf("alice cannot read her own output %s: %v", outputID, err)
	}

	t.Run("api", func(t *testing.T) {
		if _, err := evalAs("bob", idA, "py", "print(secret)"); !errors.Is(err, sandbox.ErrNoSession) {
			t.Errorf("bob's Eval in alice's session: %v, want ErrNoSession", err)
		}
		if _, err := mgr.Session("bob", idA); !errors.Is(err, sandbox.ErrNoSession) {
			t.Errorf("bob's Session of alice's id: %v, want ErrNoSession", err)
		}
		if _, err := mgr.Fork(ctx, "bob", idA); !errors.Is(err, sandbox.ErrNoSession) {
			t.Errorf("bob's Fork of alice's session: %v, want ErrNoSession", err)
		}
		if err := mgr.Delete(ctx, "bob", idA); !errors.Is(err, sandbox.ErrNoSession) {
			t.Errorf("bob's Delete of alice's session: %v, want ErrNoSession", err)
		}
		if _, err := evalAs("", idA, "py", "print(secret)"); !errors.Is(err, sandbox.ErrNoSession) {
			t.Errorf("an empty owner's Eval in alice's session: %v, want ErrNoSession", err)
		}
	})

	sB, err := mgr.Session("bob", idB)
	if err != nil {
		t.Fatal(err)
	}
	w := &world{base: ws, root: sB.Root()}
	fill := strings.NewReplacer("{{AROOT}}", rootA, "{{AID}}", idA, "{{BID}}", idB, "{{OUT}}", outputID)
	secrets := []string{tenantGlobal, tenantFile, tenantOutput}
	cases := []attack{
		py("alice's global", `print(secret)`, fail, "NameError"),
		py("alice's file by ..", `print(open('../{{AID}}/alice.txt').read())`, fail, "No such file"),
		py("alice's file by its path", `print(open('{{AROOT}}/alice.txt').read())`, fail, "No such file"),
		py("the workspace lists only bob's root", `import os; print(os.listdir('..'))`, ok, "['{{BID}}']"),
		py("alice's file by the read helper", `print(read('{{AROOT}}/alice.txt'))`, fail, "outside the session root"),
		py("alice's output by its id", `print(output('{{OUT}}'))`, fail, "output('{{OUT}}')"),
		py("a symlink to alice's root", `import os; os.symlink('{{AROOT}}', 'to_alice'); print(open('to_alice/alice.txt').read())`, fail, "Operation not permitted"),
		js("alice's global", `print(typeof secret, globalThis.secret)`, ok, "undefined undefined"),
		js("alice's file by ..", `print(await read('../{{AID}}/alice.txt'))`, fail, "outside the session root"),
		js("alice's file by require", `require('{{AROOT}}/alice.txt')`, fail, "outside the session root"),
		js("alice's output by its id", `print(await output('{{OUT}}'))`, fail, "output('{{OUT}}')"),
	}
	for i := range cases {
		cases[i].code = fill.Replace(cases[i].code)
		for j := range cases[i].want {
			cases[i].want[j] = fill.Replace(cases[i].want[j])
		}
		cases[i].never = secrets
	}
	for _, c := range cases {
		t.Run("bob/"+c.lang+"/"+c.name, func(t *testing.T) { c.check(t, w, sB) })
	}

	// Alice's session is as she left it.
	res, err := evalAs("alice", idA, "py", "print(secret, open('alice.txt').read())")
	if err != nil || res.Details.Cells[0].Output != tenantGlobal+" "+tenantFile+"\n" {
		t.Errorf("alice's session after bob's attempts: %v %+v", err, res)
	}
}
