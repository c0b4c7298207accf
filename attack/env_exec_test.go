package attack_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// TestEnv: the guest's environment is the session's own: no host variable
// outside the allowlist (a canary, the LLM key), HOME and PWD the root.
func TestEnv(t *testing.T) {
	run(t, []attack{
		py("os.environ has no canary", `import os
print(sorted(os.environ))
print(any('CANARY' in k or 'CANARY' in v for k, v in os.environ.items()))`, ok, "False"),
		py("the LLM key variable is unset", `import os; print(os.environ.get('WASMEVAL_LLM_API_KEY'), env('WASMEVAL_LLM_API_KEY'))`, ok, "None None"),
		py("getenv of the canary", `import os; print(os.getenv('WASMEVAL_ATTACK_' + 'CANARY'))`, ok, "None"),
		py("HOME and PWD are the root", `import os; print(os.environ['HOME'] == os.environ['PWD'] == os.getcwd() == '{{ROOT}}')`, ok, "True"),
		py("expanduser stays in the root", `import os; print(os.path.expanduser('~') == '{{ROOT}}')`, ok, "True"),
		{name: "putenv does not reach the host", lang: "py", code: `import os; os.environ['WASMEVAL_ATTACK_SET'] = 'x'; print('set')`, status: ok, want: []string{"set"},
			host: func(t *testing.T, w *world) {
				if v, set := os.LookupEnv("WASMEVAL_ATTACK_SET"); set {
					t.Errorf("the guest set WASMEVAL_ATTACK_SET=%q on the host", v)
				}
			}},
		py("sys.argv and executable are the guest's", `import sys; print(sys.argv, sys.executable, sys.prefix)`, ok, "[''] /usr/local/bin/python3.11 /usr/local"),
		js("process.env has no canary", `print(Object.entries(process.env).some(([k, v]) => k.includes('CANARY') || v.includes('CANARY')))`, ok, "false"),
		js("the LLM key variable is unset", `print(process.env.WASMEVAL_LLM_API_KEY, env('WASMEVAL_LLM_API_KEY'))`, ok, "undefined null"),
		js("HOME and PWD are the root", `print(process.env.HOME === process.cwd() && process.env.PWD === '{{ROOT}}')`, ok, "true"),
		js("process.argv holds nothing of the host", `print(JSON.stringify([process.argv, process.execArgv, process.pid]))`, ok, `[[],[],1]`),
	})
}

// TestExec: no process, native code, socket or host object is within a
// cell's reach.
func TestExec(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte(canaryFile))
	}))
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	run(t, []attack{
		py("os.system", `import os; os.system('id')`, fail, "has no attribute 'system'"),
		py("os.popen", `import os; print(os.popen('id').read())`, fail, "does not support processes"),
		py("subprocess", `import subprocess; subprocess.run(['id'])`, fail, "does not support processes"),
		py("os.fork", `import os; os.fork()`, fail, "has no attribute 'fork'"),
		py("os.execv", `import os; os.execv('/bin/sh', ['sh'])`, fail, "has no attribute 'execv'"),
		py("os.posix_spawn", `import os; os.posix_spawn('/bin/sh', ['sh'], {})`, fail, "has no attribute 'posix_spawn'"),
		py("os.kill of the host", `import os; os.kill(1, 9)`, fail, "has no attribute 'kill'"),
		py("ctypes", `import ctypes`, fail, "No module named"),
		py("_posixsubprocess", `import _posixsubprocess`, fail, "No module named"),
		py("_ctypes", `import _ctypes`, fail, "No module named"),
		py("threads", `import threading; threading.Thread(target=print).start()`, fail, "can't start new thread"),
		py("multiprocessing", `import multiprocessing; multiprocessing.Process(target=print).start()`, fail, "No module named"),
		py("socket to loopback", `import socket; s = socket.socket(); s.connect(('127.0.0.1', `+port+`))`, fail, "Not supported"),
		py("urllib to loopback", `import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:`+port+`/').read())`, fail, "AttributeError"),
		py("the host-call ABI has no exec op", `import _wasmeval, json
cid = _wasmeval.call_start(json.dumps({'op': 'exec', 'cmd': 'id'}))
print(_wasmeval.call_wait())`, ok, "unknown op"),
		js("require child_process", `require('child_process')`, fail, "Cannot find module 'child_process'"),
		js("fs reaches only the root", `require('fs').readFileSync('/etc/passwd', 'utf8')`, fail, "EACCES", "outside the session root"),
		js("fetch to loopback", `await fetch('http://127.0.0.1:`+port+`/')`, fail, "no network in the sandbox; use tool.<name>()"),
		js("import child_process", `await import('child_process')`, fail, "Cannot find module"),
		js("process.binding", `process.binding('spawn_sync')`, fail, "TypeError"),
		js("process.dlopen", `process.dlopen({}, '/lib/x.so')`, fail, "TypeError"),
		js("Function constructor reaches only the guest's global", `const g = Function('return this')();
print(g === globalThis, typeof g.require, typeof g.Deno, typeof g.WebAssembly, typeof g.XMLHttpRequest)`, ok, "true function undefined undefined undefined"),
		js("constructor chains reach no host", `const F = (() => {}).constructor.constructor;
const p = F('return process')();
print(typeof p.binding, typeof p.dlopen, typeof p.mainModule, typeof p.kill)`, ok, "undefined undefined undefined undefined"),
		js("no host object among the globals", `const seen = new Set(), bad = [];
function walk(o, path, depth) {
  if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o) || depth > 3) return;
  seen.add(o);
  for (const k of Reflect.ownKeys(o)) {
    let v;
    try { v = o[k]; } catch (e) { continue; }
    const name = path + '.' + String(k);
    if (/^(Call|Eval|Close|Root|Session|Host|Dispatcher|FS|Exec|Command|Run)$/.test(String(k))) bad.push(name);
    walk(v, name, depth + 1);
  }
}
walk(globalThis, 'globalThis', 0);
print('host-like', JSON.stringify(bad))`, ok, "host-like []"),
		js("process.exit ends only the cell", `process.exit(3)`, fail, "process.exit(3) called"),
		js("process.abort ends only the cell", `process.abort()`, fail, "process.exit(134) called"),
	})
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests from cells", n)
	}
}
