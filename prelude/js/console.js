// console.js: console, print and display. Text goes to the cell's stdout or
// stderr through the host; display() sends MIME bundles.
(function (host, internal) {
  'use strict';

  // The built-ins as the VM started (inspect.js): a cell that replaces
  // one changes nothing here.
  const P = internal.primordials;
  const { format, inspect } = internal;
  let groupIndent = '';
  const counts = new P.SafeMap();
  const timers = new P.SafeMap();

  function indent(text) {
    if (groupIndent === '') return text;
    return groupIndent + P.StringPrototypeReplaceAll(text, '\n', '\n' + groupIndent);
  }

  function out(...args) {
    host.stdout(indent(P.ReflectApply(format, undefined, args)) + '\n');
  }

  function err(...args) {
    host.stderr(indent(P.ReflectApply(format, undefined, args)) + '\n');
  }

  const console = {
    log: out,
    info: out,
    debug: out,
    warn: err,
    error: err,
    trace(...args) {
      const lines = P.StringPrototypeSplit(internal.cleanStack(new P.Error().stack), '\n');
      const stack = P.ArrayPrototypeJoin(P.arraySlice(lines, 1), '\n');
      err(`Trace${args.length > 0 ? ': ' + P.ReflectApply(format, undefined, args) : ''}${stack ? '\n' + stack : ''}`);
    },
    dir(value, options) {
      host.stdout(indent(inspect(value, P.ObjectAssign({ customInspect: false }, options))) + '\n');
    },
    dirxml: out,
    assert(condition, ...args) {
      if (!condition) {
        P.arraySet(args, 0, `Assertion failed${args.length === 0 ? '' : `: ${args[0]}`}`);
        P.ReflectApply(err, undefined, args);
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
      if (label.length > 0) P.ReflectApply(out, undefined, label);
      groupIndent += '  ';
    },
    groupEnd() {
      groupIndent = P.StringPrototypeSlice(groupIndent, 0, -2);
    },
    time(label = 'default') {
      timers.set(`${label}`, P.DateNow());
    },
    timeLog(label = 'default', ...data) {
      const start = timers.get(`${label}`);
      if (start === undefined) {
        err(`Warning: No such label '${label}' for console.timeLog()`);
        return;
      }
      const args = [`${label}: ${P.DateNow() - start}ms`];
      for (let i = 0; i < data.length; i++) P.arrayPush(args, data[i]);
      P.ReflectApply(out, undefined, args);
    },
    timeEnd(label = 'default') {
      const start = timers.get(`${label}`);
      if (start === undefined) {
        err(`Warning: No such label '${label}' for console.timeEnd()`);
        return;
      }
      timers.delete(`${label}`);
      out(`${label}: ${P.DateNow() - start}ms`);
    },
    table(data) {
      out(data);
    },
  };
  console.groupCollapsed = console.group;

  const ObjectPrototype = Object.prototype;
  const isPlain = (v) => {
    if (P.ArrayIsArray(v)) return true;
    if (typeof v !== 'object' || v === null) return false;
    const proto = P.ObjectGetPrototypeOf(v);
    return proto === ObjectPrototype || proto === null;
  };

  // bundleOf maps one display() argument to its MIME bundle.
  function bundleOf(value) {
    if (typeof value === 'string') return { 'text/plain': value };
    if (value !== null && typeof value === 'object' && !P.ArrayIsArray(value)) {
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
        json = P.JSONStringify(value);
      } catch (e) {
        json = undefined;
      }
      if (typeof json === 'string') return { 'application/json': json };
    }
    return { 'text/plain': inspect(value) };
  }

  function display(...values) {
    for (let i = 0; i < values.length; i++) host.display(bundleOf(values[i]));
  }

  const define = (name, value) => P.ObjectDefineProperty(globalThis, name, {
    value, writable: true, configurable: true, enumerable: false,
  });
  define('console', console);
  define('print', function print(...args) {
    P.ReflectApply(out, undefined, args);
  });
  define('display', display);
})
