// modules.js: the JavaScript half of require() and import. The host reads
// and compiles files inside the session root; these helpers give imports
// their ES module shape (a namespace with a default export) and implement
// re-exports.
(function (host, internal) {
  'use strict';

  const namespaces = new WeakMap();
  // esModules are the exports objects of ES modules (exportLocals marks
  // them): their namespace is the object itself.
  const esModules = new WeakSet();

  // namespaceOf is what `import * as ns` sees: an ES module's exports as
  // they are, a CommonJS module's exports as named exports plus default
  // (module.exports itself, even with __esModule set, as Node does).
  function namespaceOf(exports) {
    if (exports !== null && (typeof exports === 'object' || typeof exports === 'function')) {
      if (esModules.has(exports)) return exports;
      const cached = namespaces.get(exports);
      if (cached !== undefined) return cached;
      const ns = Object.create(null);
      for (const key of Object.keys(exports)) {
        if (key === 'default') continue;
        Object.defineProperty(ns, key, { enumerable: true, get: () => exports[key] });
      }
      Object.defineProperty(ns, 'default', { enumerable: true, value: exports });
      Object.defineProperty(ns, Symbol.toStringTag, { value: 'Module' });
      namespaces.set(exports, ns);
      return ns;
    }
    const ns = Object.create(null);
    Object.defineProperty(ns, 'default', { enumerable: true, value: exports });
    Object.defineProperty(ns, Symbol.toStringTag, { value: 'Module' });
    return ns;
  }

  // reexport implements `export * from` (names null) and
  // `export { a as b } from` (names [[from, to], ...]).
  function reexport(exports, ns, names) {
    if (names === null) {
      for (const key of Object.keys(ns)) {
        if (key === 'default' || Object.prototype.hasOwnProperty.call(exports, key)) continue;
        Object.defineProperty(exports, key, { enumerable: true, configurable: true, get: () => ns[key] });
      }
      return;
    }
    for (const [from, to] of names) {
      const get = from === '*' ? () => ns : () => ns[from];
      Object.defineProperty(exports, to, { enumerable: true, configurable: true, get });
    }
  }

  // exportLocals defines live getters for `export` declarations.
  function exportLocals(exports, getters) {
    for (const name of Object.keys(getters)) {
      Object.defineProperty(exports, name, { enumerable: true, configurable: true, get: getters[name] });
    }
    if (!Object.prototype.hasOwnProperty.call(exports, '__esModule')) {
      Object.defineProperty(exports, '__esModule', { value: true });
    }
    esModules.add(exports);
  }

  // home expands a specifier that starts with ~/ to the session's home
  // (os.homedir(): HOME, the session root by default), as the seed's
  // imports do; a file there still has to be inside the root.
  const home = (specifier) => {
    if (specifier !== '~' && !specifier.startsWith('~/')) return specifier;
    return internal.builtin('os').homedir().replace(/\/+$/, '') + specifier.slice(1);
  };

  // helpers builds the __wasmeval object that rewritten import and export
  // statements call, bound to one module's directory and exports object;
  // requireFrom loads with the "import" export conditions.
  internal.helpers = function helpers(requireFrom, exports, meta) {
    return Object.freeze({
      meta,
      import(specifier) {
        return namespaceOf(requireFrom(home(specifier)));
      },
      dynamicImport(specifier) {
        try {
          return Promise.resolve(namespaceOf(requireFrom(home(String(specifier)))));
        } catch (err) {
          return Promise.reject(err);
        }
      },
      reexport,
      exportLocals,
      exports,
    });
  };
})
