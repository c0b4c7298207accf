// process.js: the safe subset of Node's process object. env is the
// session's own environment, cwd() the session root, argv is empty, and
// exit() stops the cell by throwing instead of ending the host process.
(function (host, internal) {
  'use strict';

  // The built-ins as the VM started (inspect.js): a cell that replaces
  // one changes nothing here.
  const P = internal.primordials;
  const queueMicrotask = globalThis.queueMicrotask; // timers.js's, whatever a cell puts there

  // exitCodes maps each ProcessExit thrown to its code: the host asks it of
  // every value that ends a cell, which must run none of that value's code
  // (instanceof would call a Proxy's getPrototypeOf trap).
  const exitCodes = new P.SafeWeakMap();
  class ProcessExit extends Error {
    constructor(code) {
      super(`process.exit(${code}) called: the sandbox does not exit, the cell stops here`);
      this.name = 'ProcessExit';
      this.code = code;
      exitCodes.set(this, code);
    }
  }

  const env = P.ObjectAssign({}, host.env);
  const cwd = host.cwd;
  const process = {
    env,
    argv: [],
    execArgv: [],
    argv0: 'wasmeval',
    title: 'wasmeval',
    pid: 1,
    ppid: 0,
    exitCode: undefined,
    version: 'v20.0.0',
    versions: { wasmeval: '1', goja: '1' },
    release: { name: 'wasmeval' },
    cwd() {
      return cwd;
    },
    chdir() {
      throw new P.Error('process.chdir() is not available in the sandbox');
    },
    exit(code) {
      if (code === undefined) code = process.exitCode === undefined ? 0 : process.exitCode;
      throw new ProcessExit(P.Number(code) | 0);
    },
    abort() {
      throw new ProcessExit(134);
    },
    nextTick(callback, ...args) {
      queueMicrotask(() => P.ReflectApply(callback, undefined, args));
    },
    hrtime: Object.assign(function hrtime(previous) {
      const ns = host.monotonicNanos();
      let s = P.MathFloor(ns / 1e9);
      let n = ns % 1e9;
      if (P.ArrayIsArray(previous)) {
        s -= previous[0];
        n -= previous[1];
        if (n < 0) {
          s--;
          n += 1e9;
        }
      }
      return [s, n];
    }, {
      bigint() {
        return P.BigInt(host.monotonicNanos());
      },
    }),
    uptime() {
      return host.monotonicNanos() / 1e9;
    },
    memoryUsage() {
      return { rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
    },
    on() {
      return process;
    },
    once() {
      return process;
    },
    off() {
      return process;
    },
    emitWarning(warning) {
      console.warn(`Warning: ${P.isInstance(warning, P.Error) ? warning.message : warning}`);
    },
    stdout: {
      write(chunk) {
        host.stdout(P.String(chunk));
        return true;
      },
      isTTY: false,
    },
    stderr: {
      write(chunk) {
        host.stderr(P.String(chunk));
        return true;
      },
      isTTY: false,
    },
  };

  internal.exitCode = (value) => exitCodes.get(value);

  Object.defineProperty(globalThis, 'process', {
    value: process, writable: true, configurable: true, enumerable: false,
  });
  const performance = {
    now() {
      return host.monotonicNanos() / 1e6;
    },
    timeOrigin: Date.now(),
  };
  Object.defineProperty(globalThis, 'performance', {
    value: performance, writable: true, configurable: true, enumerable: false,
  });
  Object.defineProperty(globalThis, 'global', {
    value: globalThis, writable: true, configurable: true, enumerable: false,
  });
})
