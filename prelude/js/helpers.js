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

  function call(request) {
    return host.call(JSON.stringify(request)).then((text) => {
      const r = JSON.parse(text);
      if (r.error) throw new HostCallError(r.error.message);
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
      show_hidden: !!pick(o, 'show_hidden', 'showHidden', false),
    });
  });
  const diff = async((a, b) => call({ op: 'diff', a: textOf(a, 'diff'), b: textOf(b, 'diff') }));

  // output('out-1', ..., {format, query, offset, limit}): reads back cut
  // outputs; see the Python helper.
  const output = async((...ids) => {
    let o = {};
    if (ids.length > 0 && ids[ids.length - 1] !== null && typeof ids[ids.length - 1] === 'object') o = opts(ids.pop(), 'output');
    ids.forEach((id) => {
      if (typeof id !== 'string') throw new TypeError(`output: an id is a string like 'out-1', not ${typeof id}`);
    });
    return call({
      op: 'output', ids, format: o.format || 'text', query: o.query || '',
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
  const budget = () => call({ op: 'budget' });

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

  const agent = async((prompt, o) => {
    o = opts(o, 'agent');
    const agentType = pick(o, 'agent_type', 'agentType', '');
    const name = o.label || agentType || 'agent';
    host.status('agent', `${name}: started`);
    return call({
      op: 'agent', prompt: String(prompt), agent_type: agentType || '', model: o.model || '',
      context: o.context || '', label: o.label || '', schema: o.schema || null,
    }).then((out) => {
      host.status('agent', `${name}: done`);
      return out;
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

  const helpers = {
    read, write, append, tree, diff, output, env, sort, uniq, counter, tool, llm, agent, parallel, pipeline, log, phase, budget,
    HostCallError,
  };
  for (const [name, value] of Object.entries(helpers)) {
    Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
  }
})
