// console.js: console, print and display. Text goes to the cell's stdout or
// stderr through the host; display() sends MIME bundles.
(function (host, internal) {
  'use strict';

  const { format, inspect } = internal;
  let groupIndent = '';
  const counts = new Map();
  const timers = new Map();

  function indent(text) {
    if (groupIndent === '') return text;
    return groupIndent + text.replaceAll('\n', '\n' + groupIndent);
  }

  function out(...args) {
    host.stdout(indent(format(...args)) + '\n');
  }

  function err(...args) {
    host.stderr(indent(format(...args)) + '\n');
  }

  const console = {
    log: out,
    info: out,
    debug: out,
    warn: err,
    error: err,
    trace(...args) {
      const stack = internal.cleanStack(new Error().stack).split('\n').slice(1).join('\n');
      err(`Trace${args.length > 0 ? ': ' + format(...args) : ''}${stack ? '\n' + stack : ''}`);
    },
    dir(value, options) {
      host.stdout(indent(inspect(value, Object.assign({ customInspect: false }, options))) + '\n');
    },
    dirxml: out,
    assert(condition, ...args) {
      if (!condition) {
        args[0] = `Assertion failed${args.length === 0 ? '' : `: ${args[0]}`}`;
        err(...args);
      }
    },
    count(label = 'default') {
      label = `${label}`;
      const n = (counts.get(label) || 0) + 1;
      counts.set(label, n);
      out(`${label}: ${n}`);
    },
    countReset(label = 'default') {
      counts.delete(`${label}`);
    },
    group(...label) {
      if (label.length > 0) out(...label);
      groupIndent += '  ';
    },
    groupEnd() {
      groupIndent = groupIndent.slice(0, -2);
    },
    time(label = 'default') {
      timers.set(`${label}`, Date.now());
    },
    timeLog(label = 'default', ...data) {
      const start = timers.get(`${label}`);
      if (start === undefined) {
        err(`Warning: No such label '${label}' for console.timeLog()`);
        return;
      }
      out(`${label}: ${Date.now() - start}ms`, ...data);
    },
    timeEnd(label = 'default') {
      const start = timers.get(`${label}`);
      if (start === undefined) {
        err(`Warning: No such label '${label}' for console.timeEnd()`);
        return;
      }
      timers.delete(`${label}`);
      out(`${label}: ${Date.now() - start}ms`);
    },
    table(data) {
      out(data);
    },
  };
  console.groupCollapsed = console.group;

  const isPlain = (v) => {
    if (Array.isArray(v)) return true;
    if (typeof v !== 'object' || v === null) return false;
    const proto = Object.getPrototypeOf(v);
    return proto === Object.prototype || proto === null;
  };

  // bundleOf maps one display() argument to its MIME bundle.
  function bundleOf(value) {
    if (typeof value === 'string') return { 'text/plain': value };
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      if (value.type === 'image' && typeof value.data === 'string') {
        return { [typeof value.mimeType === 'string' ? value.mimeType : 'image/png']: value.data };
      }
      if (value.type === 'markdown' && typeof value.text === 'string') {
        return { 'text/markdown': value.text };
      }
      if (value.type === 'html' && typeof value.html === 'string') {
        return { 'text/html': value.html };
      }
    }
    if (isPlain(value)) {
      let json;
      try {
        json = JSON.stringify(value);
      } catch (e) {
        json = undefined;
      }
      if (typeof json === 'string') return { 'application/json': json };
    }
    return { 'text/plain': inspect(value) };
  }

  function display(...values) {
    for (const value of values) host.display(bundleOf(value));
  }

  const define = (name, value) => Object.defineProperty(globalThis, name, {
    value, writable: true, configurable: true, enumerable: false,
  });
  define('console', console);
  define('print', function print(...args) {
    out(...args);
  });
  define('display', display);
})
