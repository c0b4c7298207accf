// helpers.js: the helpers of DESIGN.md, with the names and argument order
// of the Python ones; where Python takes trailing keyword arguments these
// take a trailing options object, and each returns a promise (host calls)
// or a value (text utilities), so `await` works on all of them. Host calls
// are the JSON requests of the hostcalls package, answered by the same
// Go dispatcher as Python's.
(function (host, internal) {
  'use strict';

  // The built-ins as the VM started (inspect.js): a cell that replaces
  // one changes nothing here. Promises are made with P.PromiseResolve,
  // new P.Promise and P.PromisePrototypeThen.
  const P = internal.primordials;
  const then = (p, onFulfilled, onRejected) => P.PromisePrototypeThen(p, onFulfilled, onRejected);
  const hasOwn = (o, key) => P.ObjectPrototypeHasOwnProperty(o, key);
  const isArray = P.ArrayIsArray;
  // listOf is Array.from(items), by index for an array (not through its
  // iterator, which a cell can replace).
  const listOf = (items) => {
    if (!isArray(items)) return P.ArrayFrom(items);
    const list = new P.Array(items.length);
    for (let i = 0; i < items.length; i++) P.arraySet(list, i, items[i]);
    return list;
  };
  // jsonParse is JSON.parse as the host guards it (runtimes/js/js.go), which
  // it puts in place after the prelude has run, before any cell: the first
  // call of internal.helpers is the host's, at that point, and takes it.
  let jsonParse = P.JSONParse;
  const moduleHelpers = internal.helpers;
  let settled = false;
  internal.helpers = function helpers(...args) {
    if (!settled) {
      settled = true;
      jsonParse = P.FunctionPrototypeBind(JSON.parse, JSON);
    }
    return P.ReflectApply(moduleHelpers, undefined, args);
  };

  const MAX_CONCURRENCY = 16;

  class HostCallError extends Error {
    constructor(message) {
      super(message);
      this.name = 'HostCallError';
    }
  }

  // call makes one host call; with full, it resolves to the whole
  // response (result and extras such as output_id).
  function call(request, full) {
    return then(host.call(P.JSONStringify(request)), (text) => {
      const r = jsonParse(text);
      if (r.error) throw new HostCallError(r.error.message);
      if (full) return r;
      return r.result === undefined ? null : r.result;
    });
  }

  function opts(o, name) {
    if (o === undefined || o === null) return {};
    if (typeof o !== 'object' || isArray(o)) {
      throw new P.TypeError(`${name}: the options must be an object, not ${o === null ? 'null' : typeof o}`);
    }
    return o;
  }

  function pathOf(p, name) {
    if (typeof p !== 'string') throw new P.TypeError(`${name}: the path must be a string, not ${typeof p}`);
    return p;
  }

  function textOf(s, name) {
    if (typeof s !== 'string') throw new P.TypeError(`${name}: the content must be a string, not ${typeof s}`);
    return s;
  }

  // Errors of argument checks become rejections, as an async function's.
  function async(fn) {
    return function (...args) {
      try {
        return P.ReflectApply(fn, this, args);
      } catch (e) {
        return P.PromiseReject(e);
      }
    };
  }

  const pick = (o, snake, camel, dflt) => (o[snake] !== undefined ? o[snake] : o[camel] !== undefined ? o[camel] : dflt);

  const read = async((path, o) => {
    o = opts(o, 'read');
    return call({ op: 'read', path: pathOf(path, 'read'), offset: pick(o, 'offset', 'offset', 1), limit: pick(o, 'limit', 'limit', null) });
  });
  const write = async((path, content) => call({ op: 'write', path: pathOf(path, 'write'), content: textOf(content, 'write') }));
  const append = async((path, content) => call({ op: 'append', path: pathOf(path, 'append'), content: textOf(content, 'append') }));
  const tree = async((path = '.', o) => {
    if (path !== null && typeof path === 'object') {
      o = path;
      path = '.';
    }
    o = opts(o, 'tree');
    return call({
      op: 'tree', path: pathOf(path, 'tree'), max_depth: pick(o, 'max_depth', 'maxDepth', 3),
      show_hidden: !!(o.hidden !== undefined ? o.hidden : pick(o, 'show_hidden', 'showHidden', false)),
    });
  });
  // diff(a, b): the unified diff from file a to file b ('a/…'/'b/…'
  // headers); diff(textA, textB, {text: true}) compares two texts.
  const diff = async((a, b, o) => {
    o = opts(o, 'diff');
    if (o.text) return call({ op: 'diff', a: textOf(a, 'diff'), b: textOf(b, 'diff') });
    return call({ op: 'diff', files: true, a: pathOf(a, 'diff'), b: pathOf(b, 'diff') });
  });

  // output('out-1', 'agent://task-1', ..., {format, query, offset, limit}):
  // reads back cut outputs and agent answers; format 'raw' (the default)
  // gives the text, 'json' {id, lines, text}, several ids a list of them
  // ('text' joins several under headers). See the Python helper.
  const output = async((...ids) => {
    let o = {};
    if (ids.length > 0 && ids[ids.length - 1] !== null && typeof ids[ids.length - 1] === 'object') o = opts(P.ArrayPrototypePop(ids), 'output');
    for (let i = 0; i < ids.length; i++) {
      if (typeof ids[i] !== 'string') throw new P.TypeError(`output: an id is a string like 'out-1', not ${typeof ids[i]}`);
    }
    return call({
      op: 'output', ids, format: o.format || 'raw', query: o.query || '',
      offset: pick(o, 'offset', 'offset', 1), limit: pick(o, 'limit', 'limit', null),
    });
  });

  const env = (key, value) => {
    const e = process.env;
    if (key === undefined || key === null) return P.ObjectAssign({}, e);
    if (value === undefined || value === null) return hasOwn(e, key) ? e[key] : null;
    e[key] = P.String(value);
    return P.String(value);
  };

  const linesOf = (text) => {
    if (typeof text === 'string') {
      const lines = P.StringPrototypeSplit(P.StringPrototypeReplaceAll(P.StringPrototypeReplaceAll(text, '\r\n', '\n'), '\r', '\n'), '\n');
      if (lines.length > 0 && lines[lines.length - 1] === '') P.ArrayPrototypePop(lines);
      return lines;
    }
    return P.ArrayFrom(text, P.String);
  };

  // Python's str ordering: by code point, not UTF-16 unit.
  const cmp = (a, b) => {
    const x = P.ArrayFrom(a);
    const y = P.ArrayFrom(b);
    for (let i = 0; i < P.MathMin(x.length, y.length); i++) {
      const d = P.StringPrototypeCodePointAt(x[i], 0) - P.StringPrototypeCodePointAt(y[i], 0);
      if (d !== 0) return d;
    }
    return x.length - y.length;
  };

  const sort = (text, o) => {
    o = opts(o, 'sort');
    let lines = linesOf(text);
    if (o.unique) {
      const seen = new P.SafeSet();
      for (let i = 0; i < lines.length; i++) seen.add(lines[i]);
      lines = P.setValues(seen);
    }
    P.ArrayPrototypeSort(lines, cmp);
    if (o.reverse) P.ArrayPrototypeReverse(lines);
    return P.ArrayPrototypeJoin(lines, '\n');
  };

  const uniq = (text, o) => {
    o = opts(o, 'uniq');
    const out = [];
    const lines = linesOf(text);
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i];
      if (out.length > 0 && out[out.length - 1][1] === line) out[out.length - 1][0]++;
      else P.arrayPush(out, [1, line]);
    }
    if (o.count) return P.ArrayPrototypeJoin(P.arrayMap(out, (e) => `${P.StringPrototypePadStart(P.String(e[0]), 7)} ${e[1]}`), '\n');
    return P.ArrayPrototypeJoin(P.arrayMap(out, (e) => e[1]), '\n');
  };

  const counter = (items, o) => {
    o = opts(o, 'counter');
    const counts = new P.SafeMap();
    // A string's lines, else any iterable's items.
    const list = typeof items === 'string' ? linesOf(items) : listOf(items);
    for (let i = 0; i < list.length; i++) counts.set(list[i], (counts.get(list[i]) || 0) + 1);
    const pairs = P.mapEntries(counts);
    // Array.prototype.sort is stable: ties keep their first appearance.
    P.ArrayPrototypeSort(pairs, (a, b) => (o.reverse ? a[1] - b[1] : b[1] - a[1]));
    return o.limit === undefined || o.limit === null ? pairs : P.arraySlice(pairs, 0, o.limit);
  };

  const log = (message) => {
    host.status('log', P.String(message));
  };
  const phase = (title) => {
    host.status('phase', P.String(title));
  };
  // budget(): the cell's budgets as one object; budget.total(),
  // budget.spent(), budget.remaining() (Infinity where there is no
  // ceiling) and budget.hard() as the seed names them, each over
  // seconds, fuel and agent_depth. See the Python helper.
  const budget = () => call({ op: 'budget' });
  const dims = (d, inf) => {
    const out = {};
    const keys = P.ObjectKeys(d);
    for (let i = 0; i < keys.length; i++) out[keys[i]] = inf && d[keys[i]] === null ? Infinity : d[keys[i]];
    return out;
  };
  budget.total = () => then(budget(), (b) => dims(b.total, false));
  budget.spent = () => then(budget(), (b) => dims(b.spent, false));
  budget.remaining = () => then(budget(), (b) => dims(b.remaining, true));
  budget.hard = () => then(budget(), (b) => !!b.hard);

  const tool = new P.Proxy({}, {
    get(_, name) {
      if (typeof name !== 'string') return undefined;
      return async((args) => {
        if (args === undefined || args === null) args = {};
        if (typeof args !== 'object' || isArray(args)) {
          throw new P.TypeError(`tool.${name}: the arguments must be an object, not ${isArray(args) ? 'an array' : typeof args}`);
        }
        return call({ op: 'tool', name, args });
      });
    },
  });

  const llm = async((prompt, o) => {
    o = opts(o, 'llm');
    return call({ op: 'llm', prompt: P.String(prompt), model: o.model || 'default', system: o.system || '', schema: o.schema || null });
  });

  // agent(prompt, {agentType = 'task', model, context, label, schema}):
  // the answer is kept under the id its "done" status event names
  // ('agent://LABEL-N'), for output().
  const agent = async((prompt, o) => {
    o = opts(o, 'agent');
    const agentType = pick(o, 'agent_type', 'agentType', '') || 'task';
    const name = o.label || agentType;
    host.status('agent', `${name}: started`);
    return then(call({
      op: 'agent', prompt: P.String(prompt), agent_type: agentType, model: o.model || '',
      context: o.context || '', label: o.label || '', schema: o.schema || null,
    }, true), (r) => {
      host.status('agent', `${r.output_id || name}: done`);
      return r.result === undefined ? null : r.result;
    });
  });

  const parallel = async((thunks, o) => {
    o = opts(o, 'parallel');
    const fns = listOf(thunks);
    for (let i = 0; i < fns.length; i++) {
      if (typeof fns[i] !== 'function') throw new P.TypeError(`parallel: item ${i} is a ${typeof fns[i]}, not a function of no arguments`);
    }
    const concurrency = o.concurrency === undefined ? 4 : o.concurrency;
    if (!P.NumberIsInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
      throw new P.RangeError(`parallel: concurrency is ${concurrency}; give 1..${MAX_CONCURRENCY}`);
    }
    const results = new P.Array(fns.length);
    let next = 0;
    let failed = false;
    return new P.Promise((resolve, reject) => {
      let running = 0;
      const launch = () => {
        if (failed) return;
        if (next === fns.length && running === 0) {
          resolve(results);
          return;
        }
        while (running < concurrency && next < fns.length) {
          const i = next++;
          running++;
          then(then(P.PromiseResolve(), () => fns[i]()), (v) => {
            P.arraySet(results, i, v);
            running--;
            launch();
          }, (e) => {
            failed = true;
            reject(e);
          });
        }
      };
      launch();
    });
  });

  const pipeline = async((items, ...stages) => {
    let o = {};
    if (stages.length > 0 && typeof stages[stages.length - 1] !== 'function') o = opts(P.ArrayPrototypePop(stages), 'pipeline');
    for (let i = 0; i < stages.length; i++) {
      if (typeof stages[i] !== 'function') throw new P.TypeError(`pipeline: a stage is a ${typeof stages[i]}, not a function`);
    }
    let p = P.PromiseResolve(listOf(items));
    for (let i = 0; i < stages.length; i++) {
      const stage = stages[i];
      p = then(p, (xs) => parallel(P.arrayMap(xs, (x) => () => stage(x)), o));
    }
    return p;
  });

  // display(): a plain object with a status MIME type as a key (the seed's
  // {'application/x-omp-status': {op, ...}}) is a status event, not
  // output; the host turns the bundle into one.
  const STATUS_MIME = ['application/x-wasmeval-status', 'application/x-omp-status'];
  const shownDisplay = globalThis.display;
  const display = typeof shownDisplay !== 'function' ? shownDisplay : function display(...values) {
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      const mime = value !== null && typeof value === 'object' && !isArray(value)
        ? P.ArrayPrototypeFind(STATUS_MIME, (k) => hasOwn(value, k)) : undefined;
      if (mime === undefined) {
        shownDisplay(value);
        continue;
      }
      const payload = value[mime];
      host.display({ [mime]: typeof payload === 'string' ? payload : P.JSONStringify(payload) });
    }
  };

  const helpers = {
    read, write, append, tree, diff, output, env, sort, uniq, counter, tool, llm, agent, parallel, pipeline, log, phase, budget,
    HostCallError,
  };
  if (typeof shownDisplay === 'function') helpers.display = display;
  const names = P.ObjectKeys(helpers);
  for (let i = 0; i < names.length; i++) {
    P.ObjectDefineProperty(globalThis, names[i], { value: helpers[names[i]], writable: true, configurable: true, enumerable: false });
  }
})
