// The Pyodide side of make bench (issue 15's side-by-side figures), run by
// this folder's benchmarks (pyodide_bench_test.go):
//
//   node bench.mjs DIR once CODE   load Pyodide from DIR (the npm package's
//                                  folder), run CODE, print its output and
//                                  then {"load_ns": N}, and exit: the whole
//                                  process, as `wasmeval eval` is timed
//   node bench.mjs DIR serve       load Pyodide, print {"ready": true,
//                                  "load_ns": N}, then answer one JSON line
//                                  per JSON line on stdin:
//     {"cells": [{"code": C}]}     run C once with its output captured, as a
//                                  `wasmeval eval` line: {"output": "...",
//                                  "status": "complete"}
//     {"code": C, "n": K}          run C K times back to back in this
//                                  process: {"ns": elapsed, "cpu_ns":
//                                  the process's CPU time meanwhile}
//   A Python error answers {"error": "..."}.
//
// Every cell is pyodide.runPython in one namespace (the globals), as a
// session's cells share one.
import path from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const [dir, mode, code] = process.argv.slice(2);
if (!dir || (mode !== "once" && mode !== "serve") || (mode === "once" && code === undefined)) {
  process.stderr.write("usage: node bench.mjs PYODIDE_DIR once CODE | node bench.mjs PYODIDE_DIR serve\n");
  process.exit(2);
}

const { loadPyodide } = await import(pathToFileURL(path.join(dir, "pyodide.mjs")).href);
const t0 = process.hrtime.bigint();
const py = await loadPyodide({ indexURL: dir + path.sep });
const loadNs = Number(process.hrtime.bigint() - t0);

if (mode === "once") {
  py.runPython(code); // print goes to node's stdout, Pyodide's default
  process.stdout.write(JSON.stringify({ load_ns: loadNs }) + "\n");
  process.exit(0);
}

let out = "";
py.setStdout({ batched: (s) => { out += s + "\n"; } });
py.setStderr({ batched: (s) => { out += s + "\n"; } });
process.stdout.write(JSON.stringify({ ready: true, load_ns: loadNs }) + "\n");

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on("line", (line) => {
  let answer;
  try {
    const req = JSON.parse(line);
    if (req.n !== undefined) {
      const t = process.hrtime.bigint();
      const c = process.cpuUsage();
      for (let i = 0; i < req.n; i++) py.runPython(req.code);
      const ns = Number(process.hrtime.bigint() - t);
      const cpu = process.cpuUsage(c);
      answer = { ns, cpu_ns: (cpu.user + cpu.system) * 1000 };
      out = "";
    } else {
      out = "";
      py.runPython(req.cells[0].code);
      answer = { output: out, status: "complete" };
    }
  } catch (e) {
    answer = { error: String(e) };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
});
lines.on("close", () => process.exit(0));
