// helpers.js: the helpers of DESIGN.md, with the names and argument order
// of the Python ones; where Python takes trailing keyword arguments these
// take a trailing options object, and each returns a promise (host calls)
// or a value (text utilities), so `await` works on all of them. Host calls
// are the JSON requests of the hostcalls package, answered by the same
// Go dispatcher as Python's.
(function (host, internal) {
  'use strict';

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
    return host.call(JSON.stringify(request)).then((text) => {
      const r = JSON.parse(text);
      if (r.error) throw new HostCallError(r.error.message);
      if (full) return r;
      return r.result === undefined ? null : r.result;
    });
  }

  function opts(o, name) {
    if (o === undefined || o === null) return {};
    if (typeof o !== 'object' || Array.isArray(o)) {
      throw new TypeError(`${name}: the options must be an object, not ${o === null ? 'null' : typeof o}`);
    }
    return o;
  }

  function pathOf(p, name) {
    if (typeof p !== 'string') throw new TypeError(`${name}: the path must be a string, not ${typeof p}`);
    return p;
  }

  function textOf(s, name) {
    if (typeof s !== 'string') throw new TypeError(`${name}: the content must be a string, not ${typeof s}`);
    return s;
  }

  // Errors of argument checks become rejections, as an async function's.
  function async(fn) {
    return function (...args) {
      try {
        return fn.apply(this, args);
      } catch (e) {
        return Promise.reject(e);
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
    if (ids.length > 0 && ids[ids.length - 1] !== null && typeof ids[ids.length - 1] === 'object') o = opts(ids.pop(), 'output');
    ids.forEach((id) => {
      if (typeof id !== 'string') throw new TypeError(`output: an id is a string like 'out-1', not ${typeof id}`);
    });
    return call({
      op: 'output', ids, format: o.format || 'raw', query: o.query || '',
      offset: pick(o, 'offset', 'offset', 1), limit: pick(o, 'limit', 'limit', null),
    });
  });

  const env = (key, value) => {
    const e = process.env;
    if (key === undefined || key === null) return Object.assign({}, e);
    if (value === undefined || value === null) return Object.prototype.hasOwnProperty.call(e, key) ? e[key] : null;
    e[key] = String(value);
    return String(value);
  };

  const linesOf = (text) => {
    if (typeof text === 'string') {
      const lines = text.split(/\r\n|\n|\r/);
      if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
      return lines;
    }
    return Array.from(text, String);
  };

  // Python's str ordering: by code point, not UTF-16 unit.
  const cmp = (a, b) => {
    const x = Array.from(a);
    const y = Array.from(b);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
      const d = x[i].codePointAt(0) - y[i].codePointAt(0);
      if (d !== 0) return d;
    }
    return x.length - y.length;
  };

  const sort = (text, o) => {
    o = opts(o, 'sort');
    let lines = linesOf(text);
    if (o.unique) lines = [...new Set(lines)];
    lines.sort(cmp);
    if (o.reverse) lines.reverse();
    return lines.join('\n');
  };

  const uniq = (text, o) => {
    o = opts(o, 'uniq');
    const out = [];
    for (const line of linesOf(text)) {
      if (out.length > 0 && out[out.length - 1][1] === line) out[out.length - 1][0]++;
      else out.push([1, line]);
    }
    if (o.count) return out.map(([n, line]) => `${String(n).padStart(7)} ${line}`).join('\n');
    return out.map(([, line]) => line).join('\n');
  };

  const counter = (items, o) => {
    o = opts(o, 'counter');
    const counts = new Map();
    for (const x of typeof items === 'string' ? linesOf(items) : items) counts.set(x, (counts.get(x) || 0) + 1);
    const pairs = [...counts.entries()];
    // Array.prototype.sort is stable: ties keep their first appearance.
    pairs.sort((a, b) => (o.reverse ? a[1] - b[1] : b[1] - a[1]));
    return o.limit === undefined || o.limit === null ? pairs : pairs.slice(0, o.limit);
  };

  const log = (message) => {
    host.status('log', String(message));
  };
  const phase = (title) => {
    host.status('phase', String(title));
  };
  // budget(): the cell's budgets as one object; budget.total(),
  // budget.spent(), budget.remaining() (Infinity where there is no
  // ceiling) and budget.hard() as the seed names them, each over
  // seconds, fuel and agent_depth. See the Python helper.
  const budget = () => call({ op: 'budget' });
  const dims = (d, inf) => {
    const out = {};
    for (const [k, v] of Object.entries(d)) out[k] = inf && v === null ? Infinity : v;
    return out;
  };
  budget.total = () => budget().then((b) => dims(b.total, false));
  budget.spent = () => budget().then((b) => dims(b.spent, false));
  budget.remaining = () => budget().then((b) => dims(b.remaining, true));
  budget.hard = () => budget().then((b) => !!b.hard);

  const tool = new Proxy({}, {
    get(_, name) {
      if (typeof name !== 'string') return undefined;
      return async((args) => {
        if (args === undefined || args === null) args = {};
        if (typeof args !== 'object' || Array.isArray(args)) {
          throw new TypeError(`tool.${name}: the arguments must be an object, not ${Array.isArray(args) ? 'an array' : typeof args}`);
        }
        return call({ op: 'tool', name, args });
      });
    },
  });

  const llm = async((prompt, o) => {
    o = opts(o, 'llm');
    return call({ op: 'llm', prompt: String(prompt), model: o.model || 'default', system: o.system || '', schema: o.schema || null });
  });

  // agent(prompt, {agentType = 'task', model, context, label, schema}):
  // the answer is kept under the id its "done" status event names
  // ('agent://LABEL-N'), for output().
  const agent = async((prompt, o) => {
    o = opts(o, 'agent');
    const agentType = pick(o, 'agent_type', 'agentType', '') || 'task';
    const name = o.label || agentType;
    host.status('agent', `${name}: started`);
    return call({
      op: 'agent', prompt: String(prompt), agent_type: agentType, model: o.model || '',
      context: o.context || '', label: o.label || '', schema: o.schema || null,
    }, true).then((r) => {
      host.status('agent', `${r.output_id || name}: done`);
      return r.result === undefined ? null : r.result;
    });
  });

  const parallel = async((thunks, o) => {
    o = opts(o, 'parallel');
    const fns = Array.from(thunks);
    fns.forEach((f, i) => {
      if (typeof f !== 'function') throw new TypeError(`parallel: item ${i} is a ${typeof f}, not a function of no arguments`);
    });
    const concurrency = o.concurrency === undefined ? 4 : o.concurrency;
    if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > MAX_CONCURRENCY) {
      throw new RangeError(`parallel: concurrency is ${concurrency}; give 1..${MAX_CONCURRENCY}`);
    }
    const results = new Array(fns.length);
    let next = 0;
    let failed = false;
    return new Promise((resolve, reject) => {
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
          Promise.resolve().then(() => fns[i]()).then((v) => {
            results[i] = v;
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
    if (stages.length > 0 && typeof stages[stages.length - 1] !== 'function') o = opts(stages.pop(), 'pipeline');
    stages.forEach((s) => {
      if (typeof s !== 'function') throw new TypeError(`pipeline: a stage is a ${typeof s}, not a function`);
    });
    let p = Promise.resolve(Array.from(items));
    for (const stage of stages) {
      p = p.then((xs) => parallel(xs.map((x) => () => stage(x)), o));
    }
    return p;
  });

  // display(): a plain object with a status MIME type as a key (the seed's
  // {'application/x-omp-status': {op, ...}}) is a status event, not
  // output; the host turns the bundle into one.
  const STATUS_MIME = ['application/x-wasmeval-status', 'application/x-omp-status'];
  const shownDisplay = globalThis.display;
  const display = typeof shownDisplay !== 'function' ? shownDisplay : function display(...values) {
    for (const value of values) {
      const mime = value !== null && typeof value === 'object' && !Array.isArray(value)
        ? STATUS_MIME.find((k) => Object.prototype.hasOwnProperty.call(value, k)) : undefined;
      if (mime === undefined) {
        shownDisplay(value);
        continue;
      }
      const payload = value[mime];
      host.display({ [mime]: typeof payload === 'string' ? payload : JSON.stringify(payload) });
    }
  };

  const helpers = {
    read, write, append, tree, diff, output, env, sort, uniq, counter, tool, llm, agent, parallel, pipeline, log, phase, budget,
    HostCallError,
  };
  if (typeof shownDisplay === 'function') helpers.display = display;
  for (const [name, value] of Object.entries(helpers)) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }
})
