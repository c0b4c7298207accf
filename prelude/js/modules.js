// modules.js: the JavaScript half of require() and import. The host reads
// and compiles files inside the session root; these helpers give imports
// their ES module shape (a namespace with a default export) and implement
// re-exports.
(function (host, internal) {
  'use strict';

  // The built-ins as the VM started (inspect.js): a cell that replaces
  // one changes nothing here.
  const P = internal.primordials;
  const defineProperty = (o, key, desc) => P.ObjectDefineProperty(o, key, desc);
  const hasOwn = (o, key) => P.ObjectPrototypeHasOwnProperty(o, key);
  const namespaces = new P.SafeWeakMap();
  // esModules are the exports objects of ES modules (exportLocals marks
  // them): their namespace is the object itself.
  const esModules = new P.SafeWeakSet();

  // namespaceOf is what `import * as ns` sees: an ES module's exports as
  // they are, a CommonJS module's exports as named exports plus default
  // (module.exports itself, even with __esModule set, as Node does).
  function namespaceOf(exports) {
    if (exports !== null && (typeof exports === 'object' || typeof exports === 'function')) {
      if (esModules.has(exports)) return exports;
      const cached = namespaces.get(exports);
      if (cached !== undefined) return cached;
      const ns = P.ObjectCreate(null);
      const keys = P.ObjectKeys(exports);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === 'default') continue;
        defineProperty(ns, key, { enumerable: true, get: () => exports[key] });
      }
      defineProperty(ns, 'default', { enumerable: true, value: exports });
      defineProperty(ns, P.SymbolToStringTag, { value: 'Module' });
      namespaces.set(exports, ns);
      return ns;
    }
    const ns = P.ObjectCreate(null);
    defineProperty(ns, 'default', { enumerable: true, value: exports });
    defineProperty(ns, P.SymbolToStringTag, { value: 'Module' });
    return ns;
  }

  // reexport implements `export * from` (names null) and
  // `export { a as b } from` (names [[from, to], ...]).
  function reexport(exports, ns, names) {
    if (names === null) {
      const keys = P.ObjectKeys(ns);
      for (let i = 0; i < keys.length; i++) {
        const key = keys[i];
        if (key === 'default' || hasOwn(exports, key)) continue;
        defineProperty(exports, key, { enumerable: true, configurable: true, get: () => ns[key] });
      }
      return;
    }
    for (let i = 0; i < names.length; i++) {
      const from = names[i][0];
      const to = names[i][1];
      const get = from === '*' ? () => ns : () => ns[from];
      defineProperty(exports, to, { enumerable: true, configurable: true, get });
    }
  }

  // exportLocals defines live getters for `export` declarations.
  function exportLocals(exports, getters) {
    const names = P.ObjectKeys(getters);
    for (let i = 0; i < names.length; i++) {
      defineProperty(exports, names[i], { enumerable: true, configurable: true, get: getters[names[i]] });
    }
    if (!hasOwn(exports, '__esModule')) {
      defineProperty(exports, '__esModule', { value: true });
    }
    esModules.add(exports);
  }

  // home expands a specifier that starts with ~/ to the session's home
  // (os.homedir(): HOME, the session root by default), as the seed's
  // imports do; a file there still has to be inside the root.
  const home = (specifier) => {
    if (specifier !== '~' && !P.StringPrototypeStartsWith(specifier, '~/')) return specifier;
    let home = internal.builtin('os').homedir();
    while (P.StringPrototypeEndsWith(home, '/')) home = P.StringPrototypeSlice(home, 0, -1);
    return home + P.StringPrototypeSlice(specifier, 1);
  };

  // helpers builds the __wasmeval object that rewritten import and export
  // statements call, bound to one module's directory and exports object;
  // requireFrom loads with the "import" export conditions.
  internal.helpers = function helpers(requireFrom, exports, meta) {
    return P.ObjectFreeze({
      meta,
      import(specifier) {
        return namespaceOf(requireFrom(home(specifier)));
      },
      dynamicImport(specifier) {
        try {
          return P.PromiseResolve(namespaceOf(requireFrom(home(P.String(specifier)))));
        } catch (err) {
          return P.PromiseReject(err);
        }
      },
      reexport,
      exportLocals,
      exports,
    });
  };
})
