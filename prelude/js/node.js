// node.js: the built-in modules require('name') and import give (with or
// without the node: scheme), each made on first use: path, util, events,
// fs and fs/promises (on the session root, through the host: see
// runtimes/js/nodefs.go), buffer, url, crypto, os, assert, timers,
// timers/promises, string_decoder, process, util/types and path/posix.
(function (host, internal) {
  'use strict';

  // The built-ins as the VM started (inspect.js): the modules call these,
  // not the built-ins as a cell sees them (issue 9). Where a module hands a
  // cell a Map, an array or an error, it is made of the same built-ins a
  // cell's own would be.
  const P = internal.primordials;
  // The globals the bodies name, as the VM started: a cell that replaces
  // globalThis.Map or Error does not reach them.
  const Array = P.Array, Error = P.Error, TypeError = P.TypeError, RangeError = P.RangeError, Map = P.Map, Set = P.Set;
  const String = P.String, Number = P.Number, Symbol = P.Symbol, Promise = P.Promise, Object = P.Object;
  const cache = new P.SafeMap();
  const factories = {};
  internal.builtin = (name) => {
    let m = cache.get(name);
    if (m === undefined) {
      m = factories[name]();
      cache.set(name, m);
    }
    return m;
  };
  const typeError = (code, msg) => P.ObjectAssign(new P.TypeError(msg), { code });
  const invalidArg = (name, expected, value) => typeError('ERR_INVALID_ARG_TYPE',
    `The "${name}" argument must be ${expected}. Received ${internal.inspect(value)}`);

  // ---- path (POSIX) -----------------------------------------------------
  factories.path = () => {
    const check = (p, name = 'path') => {
      if (typeof p !== 'string') throw invalidArg(name, 'of type string', p);
    };
    // normalizeString is Node's: resolves . and .. in a path without its
    // leading slash.
    function normalizeString(p, allowAboveRoot) {
      let res = '';
      let lastSegmentLength = 0;
      let lastSlash = -1;
      let dots = 0;
      let code = 0;
      for (let i = 0; i <= p.length; ++i) {
        if (i < p.length) code = P.StringPrototypeCharCodeAt(p, i);
        else if (code === 47) break;
        else code = 47;
        if (code === 47) {
          if (lastSlash === i - 1 || dots === 1) {
            // nothing
          } else if (dots === 2) {
            if (res.length < 2 || lastSegmentLength !== 2 || P.StringPrototypeCharCodeAt(res, res.length - 1) !== 46 || P.StringPrototypeCharCodeAt(res, res.length - 2) !== 46) {
              if (res.length > 2) {
                const lastSlashIndex = P.StringPrototypeLastIndexOf(res, '/');
                if (lastSlashIndex === -1) {
                  res = '';
                  lastSegmentLength = 0;
                } else {
                  res = P.StringPrototypeSlice(res, 0, lastSlashIndex);
                  lastSegmentLength = res.length - 1 - P.StringPrototypeLastIndexOf(res, '/');
                }
                lastSlash = i;
                dots = 0;
                continue;
              } else if (res.length !== 0) {
                res = '';
                lastSegmentLength = 0;
                lastSlash = i;
                dots = 0;
                continue;
              }
            }
            if (allowAboveRoot) {
              res += res.length > 0 ? '/..' : '..';
              lastSegmentLength = 2;
            }
          } else {
            if (res.length > 0) res += '/' + P.StringPrototypeSlice(p, lastSlash + 1, i);
            else res = P.StringPrototypeSlice(p, lastSlash + 1, i);
            lastSegmentLength = i - lastSlash - 1;
          }
          lastSlash = i;
          dots = 0;
        } else if (code === 46 && dots !== -1) {
          ++dots;
        } else {
          dots = -1;
        }
      }
      return res;
    }
    const path = {
      sep: '/',
      delimiter: ':',
      resolve(...args) {
        let resolved = '';
        let absolute = false;
        for (let i = args.length - 1; i >= -1 && !absolute; i--) {
          const p = i >= 0 ? args[i] : process.cwd();
          check(p, `paths[${i}]`);
          if (p.length === 0) continue;
          resolved = `${p}/${resolved}`;
          absolute = P.StringPrototypeCharCodeAt(p, 0) === 47;
        }
        resolved = normalizeString(resolved, !absolute);
        if (absolute) return `/${resolved}`;
        return resolved.length > 0 ? resolved : '.';
      },
      normalize(p) {
        check(p);
        if (p.length === 0) return '.';
        const absolute = P.StringPrototypeCharCodeAt(p, 0) === 47;
        const trailing = P.StringPrototypeCharCodeAt(p, p.length - 1) === 47;
        let out = normalizeString(p, !absolute);
        if (out.length === 0) {
          if (absolute) return '/';
          return trailing ? './' : '.';
        }
        if (trailing) out += '/';
        return absolute ? `/${out}` : out;
      },
      isAbsolute(p) {
        check(p);
        return p.length > 0 && P.StringPrototypeCharCodeAt(p, 0) === 47;
      },
      join(...args) {
        if (args.length === 0) return '.';
        const parts = [];
        for (let i = 0; i < args.length; i++) {
          const a = args[i];
          check(a);
          if (a.length > 0) P.arrayPush(parts, a);
        }
        if (parts.length === 0) return '.';
        return path.normalize(P.ArrayPrototypeJoin(parts, '/'));
      },
      relative(from, to) {
        check(from, 'from');
        check(to, 'to');
        if (from === to) return '';
        from = path.resolve(from);
        to = path.resolve(to);
        if (from === to) return '';
        const f = from === '/' ? [] : P.StringPrototypeSplit(P.StringPrototypeSlice(from, 1), '/');
        const t = to === '/' ? [] : P.StringPrototypeSplit(P.StringPrototypeSlice(to, 1), '/');
        let i = 0;
        while (i < f.length && i < t.length && f[i] === t[i]) i++;
        const out = [];
        for (let j = i; j < f.length; j++) P.arrayPush(out, '..');
        for (let j = i; j < t.length; j++) P.arrayPush(out, t[j]);
        return P.ArrayPrototypeJoin(out, '/');
      },
      toNamespacedPath(p) {
        return p;
      },
      dirname(p) {
        check(p);
        if (p.length === 0) return '.';
        const hasRoot = P.StringPrototypeCharCodeAt(p, 0) === 47;
        let end = -1;
        let matchedSlash = true;
        for (let i = p.length - 1; i >= 1; --i) {
          if (P.StringPrototypeCharCodeAt(p, i) === 47) {
            if (!matchedSlash) {
              end = i;
              break;
            }
          } else {
            matchedSlash = false;
          }
        }
        if (end === -1) return hasRoot ? '/' : '.';
        if (hasRoot && end === 1) return '//';
        return P.StringPrototypeSlice(p, 0, end);
      },
      basename(p, suffix) {
        check(p);
        if (suffix !== undefined) check(suffix, 'suffix');
        let end = p.length;
        while (end > 1 && P.StringPrototypeCharCodeAt(p, end - 1) === 47) end--;
        const trimmed = P.StringPrototypeSlice(p, 0, end);
        const base = P.StringPrototypeSlice(trimmed, P.StringPrototypeLastIndexOf(trimmed, '/') + 1);
        if (suffix !== undefined && suffix.length > 0 && base !== suffix && P.StringPrototypeEndsWith(base, suffix)) {
          return P.StringPrototypeSlice(base, 0, base.length - suffix.length);
        }
        return base;
      },
      extname(p) {
        check(p);
        const base = path.basename(p);
        const dot = P.StringPrototypeLastIndexOf(base, '.');
        if (dot <= 0 || base === '..') return '';
        return P.StringPrototypeSlice(base, dot);
      },
      parse(p) {
        check(p);
        const root = P.StringPrototypeCharCodeAt(p, 0) === 47 ? '/' : '';
        if (p === '') return { root: '', dir: '', base: '', ext: '', name: '' };
        const base = path.basename(p);
        const ext = path.extname(p);
        let dir = path.dirname(p);
        if (dir === '.' && !P.StringPrototypeStartsWith(p, '.') && !P.StringPrototypeIncludes(p, '/')) dir = '';
        return { root, dir, base, ext, name: ext ? P.StringPrototypeSlice(base, 0, base.length - ext.length) : base };
      },
      format(obj) {
        if (obj === null || typeof obj !== 'object') throw invalidArg('pathObject', 'of type object', obj);
        const dir = obj.dir || obj.root;
        const base = obj.base || `${obj.name || ''}${obj.ext ? (obj.ext[0] === '.' ? '' : '.') + obj.ext : ''}`;
        if (!dir) return base;
        return dir === obj.root ? `${dir}${base}` : `${dir}/${base}`;
      },
      matchesGlob: undefined,
    };
    delete path.matchesGlob;
    path.posix = path;
    path.win32 = undefined;
    return path;
  };
  factories['path/posix'] = () => internal.builtin('path');

  // ---- util -------------------------------------------------------------
  factories['util/types'] = () => {
    const tag = (v) => P.ObjectPrototypeToString(v).slice(8, -1);
    const is = (t) => (v) => v !== null && typeof v === 'object' && tag(v) === t;
    return {
      isDate: (v) => P.isInstance(v, P.Date),
      isRegExp: (v) => P.isInstance(v, P.RegExp),
      isMap: (v) => P.isInstance(v, P.Map),
      isSet: (v) => P.isInstance(v, P.Set),
      isWeakMap: (v) => P.isInstance(v, P.WeakMap),
      isWeakSet: (v) => P.isInstance(v, P.WeakSet),
      isPromise: (v) => P.isInstance(v, P.Promise),
      isNativeError: (v) => P.isInstance(v, P.Error),
      isArrayBuffer: (v) => P.isInstance(v, P.ArrayBuffer),
      isAnyArrayBuffer: (v) => P.isInstance(v, P.ArrayBuffer),
      isSharedArrayBuffer: () => false,
      isArrayBufferView: (v) => P.ArrayBufferIsView(v),
      isTypedArray: (v) => P.ArrayBufferIsView(v) && !(P.isInstance(v, P.DataView)),
      isUint8Array: is('Uint8Array'),
      isDataView: (v) => P.isInstance(v, P.DataView),
      isAsyncFunction: (v) => typeof v === 'function' && tag(v) === 'AsyncFunction',
      isGeneratorFunction: (v) => typeof v === 'function' && /^(Async)?GeneratorFunction$/.test(tag(v)),
      isGeneratorObject: is('Generator'),
      isBoxedPrimitive: (v) => P.isInstance(v, P.Number) || P.isInstance(v, P.String) || P.isInstance(v, P.Boolean),
      isProxy: () => false,
      isSymbolObject: is('Symbol'),
      isBigIntObject: is('BigInt'),
    };
  };
  factories.util = () => {
    const { inspect, format } = internal;
    const kCustomPromisify = P.SymbolFor('nodejs.util.promisify.custom');
    function promisify(fn) {
      if (typeof fn !== 'function') throw invalidArg('original', 'of type function', fn);
      if (fn[kCustomPromisify]) return fn[kCustomPromisify];
      function promisified(...args) {
        return new P.Promise((resolve, reject) => {
          P.arrayPush(args, (err, ...values) => {
            if (err) reject(err);
            else resolve(values.length > 1 ? values : values[0]);
          });
          P.ReflectApply(fn, this, args);
        });
      }
      P.ObjectSetPrototypeOf(promisified, P.ObjectGetPrototypeOf(fn));
      return P.ObjectDefineProperties(promisified, P.ObjectGetOwnPropertyDescriptors(fn));
    }
    promisify.custom = kCustomPromisify;
    function callbackify(fn) {
      if (typeof fn !== 'function') throw invalidArg('original', 'of type function', fn);
      return function (...args) {
        const cb = args.pop();
        if (typeof cb !== 'function') throw invalidArg('last argument', 'of type function', cb);
        P.FunctionPrototypeApply(fn, this, args).then((v) => queueMicrotask(() => cb(null, v)), (e) => queueMicrotask(() => cb(e || new Error('Promise was rejected with a falsy value'))));
      };
    }
    function inherits(ctor, superCtor) {
      P.ObjectDefineProperty(ctor, 'super_', { value: superCtor, writable: true, configurable: true });
      P.ObjectSetPrototypeOf(ctor.prototype, superCtor.prototype);
    }
    const warned = new Set();
    function deprecate(fn, msg, code) {
      return function (...args) {
        if (!warned.has(msg)) {
          warned.add(msg);
          process.emitWarning(`${code ? `[${code}] ` : ''}DeprecationWarning: ${msg}`);
        }
        return new.target ? P.ReflectConstruct(fn, args, new.target) : P.FunctionPrototypeApply(fn, this, args);
      };
    }
    function isDeepStrictEqual(a, b) {
      return internal.builtin('assert').deepEqualValues(a, b, true);
    }
    return {
      format,
      formatWithOptions: (opts, ...args) => format(...args),
      inspect,
      promisify,
      callbackify,
      inherits,
      deprecate,
      isDeepStrictEqual,
      isArray: Array.isArray,
      types: internal.builtin('util/types'),
      TextEncoder,
      TextDecoder,
      stripVTControlCharacters: (s) => String(s).replace(/\u001b\[[0-9;]*[A-Za-z]/g, ''),
      toUSVString: (s) => String(s).replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd'),
      debuglog: () => () => {},
      aborted: (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    };
  };

  // ---- events -----------------------------------------------------------
  factories.events = () => {
    const kCapture = Symbol('kCapture');
    class EventEmitter {
      constructor() {
        P.FunctionPrototypeCall(EventEmitter.init, this);
      }
      static init() {
        if (this._events === undefined || this._events === P.ObjectGetPrototypeOf(this)._events) {
          this._events = P.ObjectCreate(null);
          this._eventsCount = 0;
        }
        this._maxListeners = this._maxListeners || undefined;
      }
      setMaxListeners(n) {
        this._maxListeners = n;
        return this;
      }
      getMaxListeners() {
        return this._maxListeners === undefined ? EventEmitter.defaultMaxListeners : this._maxListeners;
      }
      emit(type, ...args) {
        const events = this._events;
        if (type === 'error' && (events === undefined || events.error === undefined)) {
          const er = args[0];
          if (P.isInstance(er, P.Error)) throw er;
          const err = new Error(`Unhandled error. (${internal.inspect(er)})`);
          err.code = 'ERR_UNHANDLED_ERROR';
          err.context = er;
          throw err;
        }
        if (events === undefined) return false;
        const handler = events[type];
        if (handler === undefined) return false;
        if (typeof handler === 'function') {
          P.FunctionPrototypeApply(handler, this, args);
        } else {
          const fns = P.arraySlice(handler);
          for (let i = 0; i < fns.length; i++) P.FunctionPrototypeApply(fns[i], this, args);
        }
        return true;
      }
      #add(type, listener, prepend) {
        if (typeof listener !== 'function') throw invalidArg('listener', 'of type function', listener);
        if (this._events === undefined) P.FunctionPrototypeCall(EventEmitter.init, this);
        const events = this._events;
        if (events.newListener !== undefined) this.emit('newListener', type, listener.listener ? listener.listener : listener);
        const existing = events[type];
        if (existing === undefined) {
          events[type] = listener;
          this._eventsCount++;
        } else if (typeof existing === 'function') {
          events[type] = prepend ? [listener, existing] : [existing, listener];
        } else if (prepend) {
          P.arrayUnshift(existing, listener);
        } else {
          P.arrayPush(existing, listener);
        }
        return this;
      }
      addListener(type, listener) {
        return this.#add(type, listener, false);
      }
      on(type, listener) {
        return this.#add(type, listener, false);
      }
      prependListener(type, listener) {
        return this.#add(type, listener, true);
      }
      #wrapOnce(type, listener) {
        const self = this;
        function wrapper(...args) {
          self.removeListener(type, wrapper);
          return P.FunctionPrototypeApply(listener, self, args);
        }
        wrapper.listener = listener;
        return wrapper;
      }
      once(type, listener) {
        if (typeof listener !== 'function') throw invalidArg('listener', 'of type function', listener);
        return this.#add(type, this.#wrapOnce(type, listener), false);
      }
      prependOnceListener(type, listener) {
        if (typeof listener !== 'function') throw invalidArg('listener', 'of type function', listener);
        return this.#add(type, this.#wrapOnce(type, listener), true);
      }
      removeListener(type, listener) {
        const events = this._events;
        if (events === undefined) return this;
        const list = events[type];
        if (list === undefined) return this;
        if (list === listener || list.listener === listener) {
          delete events[type];
          this._eventsCount--;
          if (events.removeListener !== undefined) this.emit('removeListener', type, list.listener || listener);
        } else if (typeof list !== 'function') {
          let i = list.length - 1;
          while (i >= 0 && list[i] !== listener && list[i].listener !== listener) i--;
          if (i < 0) return this;
          P.arraySplice(list, i, 1);
          if (list.length === 1) events[type] = list[0];
          if (events.removeListener !== undefined) this.emit('removeListener', type, listener);
        }
        return this;
      }
      off(type, listener) {
        return this.removeListener(type, listener);
      }
      removeAllListeners(type) {
        if (this._events === undefined) return this;
        if (type === undefined) {
          this._events = P.ObjectCreate(null);
          this._eventsCount = 0;
        } else if (this._events[type] !== undefined) {
          delete this._events[type];
          this._eventsCount--;
        }
        return this;
      }
      listeners(type) {
        const l = this._events && this._events[type];
        if (l === undefined) return [];
        return typeof l === 'function' ? [l.listener || l] : P.arrayMap(l, (x) => x.listener || x);
      }
      rawListeners(type) {
        const l = this._events && this._events[type];
        if (l === undefined) return [];
        return typeof l === 'function' ? [l] : P.arraySlice(l);
      }
      listenerCount(type) {
        const l = this._events && this._events[type];
        if (l === undefined) return 0;
        return typeof l === 'function' ? 1 : l.length;
      }
      eventNames() {
        return this._events ? P.ReflectOwnKeys(this._events) : [];
      }
    }
    EventEmitter.prototype._events = undefined;
    EventEmitter.prototype._eventsCount = 0;
    EventEmitter.prototype._maxListeners = undefined;
    EventEmitter.defaultMaxListeners = 10;
    EventEmitter.captureRejections = false;
    EventEmitter[kCapture] = false;
    EventEmitter.errorMonitor = Symbol('events.errorMonitor');
    EventEmitter.EventEmitter = EventEmitter;
    EventEmitter.once = (emitter, name, options = {}) => new Promise((resolve, reject) => {
      const signal = options.signal;
      if (signal && signal.aborted) {
        reject(signal.reason);
        return;
      }
      if (typeof emitter.addEventListener === 'function') {
        emitter.addEventListener(name, (...args) => resolve(args), { once: true });
        return;
      }
      const onError = (err) => {
        emitter.removeListener(name, onValue);
        reject(err);
      };
      const onValue = (...args) => {
        if (name !== 'error') emitter.removeListener('error', onError);
        resolve(args);
      };
      emitter.once(name, onValue);
      if (name !== 'error') emitter.once('error', onError);
    });
    EventEmitter.on = undefined;
    delete EventEmitter.on;
    EventEmitter.listenerCount = (emitter, type) => emitter.listenerCount(type);
    EventEmitter.getEventListeners = (emitter, type) => emitter.listeners(type);
    EventEmitter.setMaxListeners = () => {};
    EventEmitter.EventTarget = EventTarget;
    EventEmitter.Event = Event;
    return EventEmitter;
  };

  // ---- fs ---------------------------------------------------------------
  factories.fs = () => {
    const { Buffer } = internal.buffer();
    const constants = {
      F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1, COPYFILE_EXCL: 1, COPYFILE_FICLONE: 2, COPYFILE_FICLONE_FORCE: 4,
      O_RDONLY: 0, O_WRONLY: 1, O_RDWR: 2, O_CREAT: 64, O_EXCL: 128, O_TRUNC: 512, O_APPEND: 1024,
      S_IFMT: 0o170000, S_IFREG: 0o100000, S_IFDIR: 0o040000, S_IFLNK: 0o120000, S_IFIFO: 0o010000,
      S_IFSOCK: 0o140000, S_IFCHR: 0o020000, S_IFBLK: 0o060000,
    };
    // pathOf accepts Node's path forms: a string, a Buffer or a file: URL.
    const pathOf = (p, name = 'path') => {
      if (typeof p === 'string') return p;
      if (P.isInstance(p, P.Uint8Array)) return Buffer.from(p.buffer, p.byteOffset, p.byteLength).toString();
      if (p !== null && typeof p === 'object' && typeof p.href === 'string' && p.protocol !== undefined) {
        if (p.protocol !== 'file:') throw typeError('ERR_INVALID_URL_SCHEME', 'The URL must be of scheme file');
        return decodeURIComponent(p.pathname);
      }
      throw invalidArg(name, 'of type string or an instance of Buffer or URL', p);
    };
    const optionsOf = (o, dflt) => (typeof o === 'string' ? P.ObjectAssign({}, dflt, { encoding: o }) : P.ObjectAssign({}, dflt, o || {}));
    const decode = (ab, encoding) => {
      const b = Buffer.from(ab);
      return encoding && encoding !== 'buffer' ? b.toString(encoding) : b;
    };
    const dataOf = (data, encoding) => {
      if (typeof data === 'string') {
        if (!encoding || encoding === 'utf8' || encoding === 'utf-8') return data;
        return Buffer.from(data, encoding);
      }
      if (P.ArrayBufferIsView(data)) return data;
      throw invalidArg('data', 'of type string or an instance of Buffer, TypedArray, or DataView', data);
    };
    const modeOf = (m) => (m === undefined || m === null ? 0 : typeof m === 'string' ? parseInt(m, 8) : Number(m));

    class Stats {
      constructor(a) {
        // By index: destructuring would call the array iterator, which a cell can replace.
        this.dev = a[0], this.ino = a[1], this.mode = a[2], this.nlink = a[3];
        this.size = a[4], this.atimeMs = a[5], this.mtimeMs = a[6], this.ctimeMs = a[7];
        this.uid = 0;
        this.gid = 0;
        this.rdev = 0;
        this.blksize = 4096;
        this.blocks = P.MathCeil(this.size / 512);
        this.birthtimeMs = this.ctimeMs;
        this.atime = new Date(this.atimeMs);
        this.mtime = new Date(this.mtimeMs);
        this.ctime = new Date(this.ctimeMs);
        this.birthtime = new Date(this.birthtimeMs);
      }
      isFile() {
        return (this.mode & constants.S_IFMT) === constants.S_IFREG;
      }
      isDirectory() {
        return (this.mode & constants.S_IFMT) === constants.S_IFDIR;
      }
      isSymbolicLink() {
        return (this.mode & constants.S_IFMT) === constants.S_IFLNK;
      }
      isFIFO() {
        return (this.mode & constants.S_IFMT) === constants.S_IFIFO;
      }
      isSocket() {
        return (this.mode & constants.S_IFMT) === constants.S_IFSOCK;
      }
      isCharacterDevice() {
        return (this.mode & constants.S_IFMT) === constants.S_IFCHR;
      }
      isBlockDevice() {
        return (this.mode & constants.S_IFMT) === constants.S_IFBLK;
      }
    }
    const direntTypes = { f: constants.S_IFREG, d: constants.S_IFDIR, l: constants.S_IFLNK, p: constants.S_IFIFO, s: constants.S_IFSOCK, c: constants.S_IFCHR, b: constants.S_IFBLK, '?': 0 };
    class Dirent {
      constructor(name, type, parentPath) {
        this.name = name;
        this.parentPath = parentPath;
        this.path = parentPath;
        P.ObjectDefineProperty(this, '_mode', { value: direntTypes[type] });
      }
      isFile() {
        return this._mode === constants.S_IFREG;
      }
      isDirectory() {
        return this._mode === constants.S_IFDIR;
      }
      isSymbolicLink() {
        return this._mode === constants.S_IFLNK;
      }
      isFIFO() {
        return this._mode === constants.S_IFIFO;
      }
      isSocket() {
        return this._mode === constants.S_IFSOCK;
      }
      isCharacterDevice() {
        return this._mode === constants.S_IFCHR;
      }
      isBlockDevice() {
        return this._mode === constants.S_IFBLK;
      }
    }
    const path = internal.builtin('path');

    const fs = {
      constants,
      Stats,
      Dirent,
      readFileSync(p, options) {
        const o = optionsOf(options, { encoding: null, flag: 'r' });
        if (typeof p === 'number') return decode(readFd(p), o.encoding);
        return decode(host.fsReadFile(pathOf(p)), o.encoding);
      },
      writeFileSync(p, data, options) {
        const o = optionsOf(options, { encoding: 'utf8', flag: 'w', mode: 0o666 });
        if (typeof p === 'number') {
          fs.writeSync(p, typeof data === 'string' ? Buffer.from(data, o.encoding) : data);
          return;
        }
        host.fsWriteFile(pathOf(p), dataOf(data, o.encoding), o.flag, modeOf(o.mode));
      },
      appendFileSync(p, data, options) {
        const o = optionsOf(options, { encoding: 'utf8', flag: 'a', mode: 0o666 });
        host.fsWriteFile(pathOf(p), dataOf(data, o.encoding), o.flag, modeOf(o.mode));
      },
      existsSync(p) {
        try {
          return host.fsStat(pathOf(p), true, false) !== null;
        } catch (e) {
          return false;
        }
      },
      accessSync(p, mode = constants.F_OK) {
        const st = host.fsStat(pathOf(p), true, true);
        if ((mode & constants.W_OK) && !(st[2] & 0o222)) {
          throw P.ObjectAssign(new Error(`EACCES: permission denied, access '${pathOf(p)}'`), { errno: -13, code: 'EACCES', syscall: 'access', path: pathOf(p) });
        }
      },
      statSync(p, options) {
        const o = optionsOf(options, { throwIfNoEntry: true });
        const a = host.fsStat(pathOf(p), true, o.throwIfNoEntry !== false);
        return a === null ? undefined : new Stats(a);
      },
      lstatSync(p, options) {
        const o = optionsOf(options, { throwIfNoEntry: true });
        const a = host.fsStat(pathOf(p), false, o.throwIfNoEntry !== false);
        return a === null ? undefined : new Stats(a);
      },
      readdirSync(p, options) {
        const o = optionsOf(options, { encoding: 'utf8', withFileTypes: false, recursive: false });
        const dir = pathOf(p);
        const out = [];
        const walk = (d, prefix) => {
          const a = host.fsReaddir(d);
          for (let i = 0; i < a.length; i += 2) {
            const name = a[i];
            const type = a[i + 1];
            const parent = prefix === '' ? dir : path.join(dir, prefix);
            if (o.withFileTypes) P.arrayPush(out, new Dirent(name, type, parent));
            else P.arrayPush(out, prefix === '' ? name : path.join(prefix, name));
            if (o.recursive && type === 'd') walk(path.join(d, name), prefix === '' ? name : path.join(prefix, name));
          }
        };
        walk(dir, '');
        if (o.encoding === 'buffer' && !o.withFileTypes) return out.map((n) => Buffer.from(n));
        return out;
      },
      mkdirSync(p, options) {
        const o = typeof options === 'number' || typeof options === 'string' ? { mode: options } : P.ObjectAssign({ recursive: false }, options || {});
        const made = host.fsMkdir(pathOf(p), !!o.recursive, modeOf(o.mode));
        return o.recursive ? made : undefined;
      },
      mkdtempSync(prefix) {
        const chars = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
        const b = new Uint8Array(6);
        for (let tries = 0; ; tries++) {
          host.randomFill(b);
          const p = pathOf(prefix, 'prefix') + P.ArrayFrom(b, (x) => chars[x % chars.length]).join('');
          try {
            host.fsMkdir(p, false, 0o700);
            return p;
          } catch (e) {
            if (e.code !== 'EEXIST' || tries > 100) throw e;
          }
        }
      },
      rmdirSync(p, options) {
        if (options && options.recursive) return host.fsRm(pathOf(p), true, false);
        host.fsRmdir(pathOf(p));
      },
      rmSync(p, options) {
        const o = P.ObjectAssign({ recursive: false, force: false }, options || {});
        host.fsRm(pathOf(p), !!o.recursive, !!o.force);
      },
      unlinkSync(p) {
        host.fsUnlink(pathOf(p));
      },
      renameSync(from, to) {
        host.fsRename(pathOf(from, 'oldPath'), pathOf(to, 'newPath'));
      },
      copyFileSync(src, dst, mode = 0) {
        host.fsCopyFile(pathOf(src, 'src'), pathOf(dst, 'dest'), (mode & constants.COPYFILE_EXCL) !== 0);
      },
      cpSync(src, dst, options = {}) {
        const s = pathOf(src, 'src');
        const d = pathOf(dst, 'dest');
        const st = fs.statSync(s);
        if (!st.isDirectory()) return fs.copyFileSync(s, d, options.errorOnExist && options.force === false ? constants.COPYFILE_EXCL : 0);
        if (!options.recursive) {
          throw P.ObjectAssign(new Error(`Recursive option is required to copy a directory: ${s}`), { code: 'ERR_FS_EISDIR' });
        }
        fs.mkdirSync(d, { recursive: true });
        for (const e of fs.readdirSync(s, { withFileTypes: true })) {
          fs.cpSync(path.join(s, e.name), path.join(d, e.name), options);
        }
      },
      readlinkSync(p) {
        return host.fsReadlink(pathOf(p));
      },
      symlinkSync(target, p) {
        host.fsSymlink(pathOf(target, 'target'), pathOf(p));
      },
      linkSync(existing, p) {
        host.fsLink(pathOf(existing, 'existingPath'), pathOf(p, 'newPath'));
      },
      realpathSync(p) {
        // Links are followed one component at a time, from the root (a
        // path outside it fails in fsStat).
        const root = process.cwd();
        const split = (abs) => {
          const rel = path.relative(root, abs);
          return rel === '' ? [] : rel.startsWith('..') ? null : rel.split('/');
        };
        let parts = split(path.resolve(pathOf(p)));
        if (parts === null) host.fsStat(path.resolve(pathOf(p)), false, true);
        let out = root;
        for (let i = 0, hops = 0; i < parts.length; i++) {
          const next = path.join(out, parts[i]);
          const st = host.fsStat(next, false, true);
          if ((st[2] & constants.S_IFMT) === constants.S_IFLNK) {
            if (++hops > 40) throw P.ObjectAssign(new Error(`ELOOP: too many symbolic links encountered, realpath '${p}'`), { code: 'ELOOP', errno: -40, syscall: 'realpath', path: p });
            const target = path.resolve(out, host.fsReadlink(next));
            const rest = parts.slice(i + 1);
            parts = split(target);
            if (parts === null) host.fsStat(target, false, true);
            parts = parts.concat(rest);
            out = root;
            i = -1;
            continue;
          }
          out = next;
        }
        return out;
      },
      chmodSync(p, mode) {
        host.fsChmod(pathOf(p), modeOf(mode));
      },
      utimesSync(p, atime, mtime) {
        const ms = (t) => (P.isInstance(t, P.Date) ? t.getTime() : typeof t === 'string' ? Number(t) * 1000 : t * 1000);
        host.fsUtimes(pathOf(p), ms(atime), ms(mtime));
      },
      truncateSync(p, len = 0) {
        host.fsTruncate(pathOf(p), len);
      },
      openSync(p, flags = 'r', mode) {
        return host.fsOpen(pathOf(p), typeof flags === 'number' ? numericFlags(flags) : String(flags), modeOf(mode));
      },
      closeSync(fd) {
        host.fsClose(fd);
      },
      readSync(fd, buffer, offset, length, position) {
        if (offset !== null && typeof offset === 'object') ({ offset = 0, length = buffer.byteLength - offset, position = null } = offset);
        if (offset === undefined) offset = 0;
        if (length === undefined) length = buffer.byteLength - offset;
        return host.fsRead(fd, buffer, offset, length, position === null || position === undefined ? -1 : Number(position));
      },
      writeSync(fd, buffer, offset, length, position) {
        if (typeof buffer === 'string') {
          // writeSync(fd, string, position, encoding)
          const b = Buffer.from(buffer, typeof length === 'string' ? length : 'utf8');
          return host.fsWrite(fd, b, 0, b.length, offset === null || offset === undefined ? -1 : Number(offset));
        }
        if (offset !== null && typeof offset === 'object') ({ offset = 0, length = buffer.byteLength - offset, position = null } = offset);
        if (offset === undefined) offset = 0;
        if (length === undefined) length = buffer.byteLength - offset;
        return host.fsWrite(fd, buffer, offset, length, position === null || position === undefined ? -1 : Number(position));
      },
      fstatSync(fd) {
        return new Stats(host.fsFstat(fd));
      },
      fsyncSync() {},
      fdatasyncSync() {},
      // Streams read and write through a descriptor, a chunk per turn.
      createReadStream(p, options) {
        const o = optionsOf(options, { flags: 'r', encoding: null, start: 0, end: Infinity, highWaterMark: 64 * 1024 });
        const { Readable } = internal.builtin('stream');
        const fd = o.fd !== undefined ? o.fd : fs.openSync(p, o.flags, o.mode);
        let pos = o.start || 0;
        const stream = new Readable({
          highWaterMark: o.highWaterMark,
          encoding: o.encoding || undefined,
          read(n) {
            try {
              const want = P.MathMin(n, o.end + 1 - pos);
              if (want <= 0) {
                this.push(null);
                return;
              }
              const buf = Buffer.alloc(want);
              const got = host.fsRead(fd, buf, 0, want, pos);
              pos += got;
              this.push(got === 0 ? null : buf.subarray(0, got));
            } catch (e) {
              this.destroy(e);
            }
          },
          destroy(err, cb) {
            try {
              if (o.autoClose !== false) host.fsClose(fd);
            } catch (e) {
              err = err || e;
            }
            cb(err);
          },
        });
        stream.on('end', () => stream.destroy());
        stream.path = typeof p === 'string' ? p : undefined;
        stream.fd = fd;
        return stream;
      },
      createWriteStream(p, options) {
        const o = optionsOf(options, { flags: 'w', encoding: 'utf8' });
        const { Writable } = internal.builtin('stream');
        const fd = o.fd !== undefined ? o.fd : fs.openSync(p, o.flags, o.mode);
        let bytesWritten = 0;
        const stream = new Writable({
          write(chunk, encoding, cb) {
            try {
              const b = typeof chunk === 'string' ? Buffer.from(chunk, encoding) : chunk;
              bytesWritten += host.fsWrite(fd, b, 0, b.length, -1);
              cb();
            } catch (e) {
              cb(e);
            }
          },
          final(cb) {
            try {
              if (o.autoClose !== false) host.fsClose(fd);
              cb();
            } catch (e) {
              cb(e);
            }
          },
        });
        P.ObjectDefineProperty(stream, 'bytesWritten', { get: () => bytesWritten });
        stream.path = typeof p === 'string' ? p : undefined;
        stream.fd = fd;
        stream.close = (cb) => stream.end(cb);
        return stream;
      },
      watch() {
        throw P.ObjectAssign(new Error('fs.watch is not available in the sandbox'), { code: 'ERR_NOT_AVAILABLE' });
      },
    };
    function numericFlags(n) {
      const acc = n & 3;
      if (n & constants.O_APPEND) return (acc === 2 ? 'a+' : 'a') + (n & constants.O_EXCL ? 'x' : '');
      if (n & constants.O_TRUNC || n & constants.O_CREAT) return (acc === 2 ? 'w+' : 'w') + (n & constants.O_EXCL ? 'x' : '');
      return acc === 0 ? 'r' : 'r+';
    }
    function readFd(fd) {
      const chunks = [];
      const buf = Buffer.alloc(64 * 1024);
      for (;;) {
        const n = host.fsRead(fd, buf, 0, buf.length, -1);
        if (n === 0) break;
        P.arrayPush(chunks, Buffer.from(buf.subarray(0, n)));
      }
      return Buffer.concat(chunks);
    }

    // Callback and promise forms of the sync functions: the work is done
    // at once (the host's file calls are quick), the result delivered
    // asynchronously, as Node does.
    const names = ['readFile', 'writeFile', 'appendFile', 'access', 'stat', 'lstat', 'readdir', 'mkdir', 'mkdtemp', 'rmdir', 'rm', 'unlink',
      'rename', 'copyFile', 'cp', 'readlink', 'symlink', 'link', 'realpath', 'chmod', 'utimes', 'truncate', 'open', 'close', 'read', 'write', 'fstat', 'fsync'];
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      const sync = fs[name + 'Sync'];
      fs[name] = function (...args) {
        const cb = args[args.length - 1];
        args.length = P.MathMax(args.length - 1, 0);
        if (typeof cb !== 'function') throw invalidArg('cb', 'of type function', cb);
        let result;
        let error = null;
        try {
          result = P.ReflectApply(sync, undefined, args);
        } catch (e) {
          error = e;
        }
        queueMicrotask(() => (error ? cb(error) : name === 'read' || name === 'write' ? cb(null, result, args[1]) : cb(null, result)));
      };
    }
    fs.exists = (p, cb) => queueMicrotask(() => cb(fs.existsSync(p)));
    const promises = {};
    const notPromised = ['open', 'close', 'read', 'write', 'fstat', 'fsync'];
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (P.ArrayPrototypeIncludes(notPromised, name)) continue;
      const sync = fs[name + 'Sync'];
      promises[name] = (...args) => {
        try {
          return P.PromiseResolve(P.ReflectApply(sync, undefined, args));
        } catch (e) {
          return P.PromiseReject(e);
        }
      };
    }
    promises.constants = constants;
    // FileHandle, the promise API's open file.
    class FileHandle {
      constructor(fd) {
        this.fd = fd;
      }
      async readFile(options) {
        return fs.readFileSync(this.fd, options);
      }
      async writeFile(data, options) {
        const o = optionsOf(options, { encoding: 'utf8' });
        fs.writeSync(this.fd, typeof data === 'string' ? Buffer.from(data, o.encoding) : data);
      }
      async appendFile(data, options) {
        return this.writeFile(data, options);
      }
      async read(buffer, offset, length, position) {
        const bytesRead = fs.readSync(this.fd, buffer, offset, length, position);
        return { bytesRead, buffer };
      }
      async write(buffer, ...rest) {
        const bytesWritten = fs.writeSync(this.fd, buffer, ...rest);
        return { bytesWritten, buffer };
      }
      async stat() {
        return fs.fstatSync(this.fd);
      }
      async close() {
        fs.closeSync(this.fd);
      }
      async sync() {}
    }
    promises.open = (...args) => {
      try {
        return P.PromiseResolve(new FileHandle(fs.openSync(...args)));
      } catch (e) {
        return P.PromiseReject(e);
      }
    };
    fs.promises = promises;
    return fs;
  };
  factories['fs/promises'] = () => internal.builtin('fs').promises;

  // ---- buffer, url, string_decoder --------------------------------------
  factories.buffer = () => internal.buffer();
  factories.url = () => {
    const m = internal.url();
    const out = P.ObjectAssign({}, m);
    out.fileURLToPath = (u) => {
      const url = typeof u === 'string' ? new m.URL(u) : u;
      if (url.protocol !== 'file:') throw typeError('ERR_INVALID_URL_SCHEME', 'The URL must be of scheme file');
      return decodeURIComponent(url.pathname);
    };
    out.pathToFileURL = (p) => {
      const abs = internal.builtin('path').resolve(p);
      return new m.URL('file://' + abs.split('/').map(encodeURIComponent).join('/'));
    };
    out.format = (u) => (u instanceof m.URL ? u.href : typeof u === 'string' ? u : new m.URL(`${u.protocol || 'http:'}//${u.host || u.hostname || ''}${u.pathname || ''}${u.search || ''}${u.hash || ''}`).href);
    // url.parse, the legacy API: the WHATWG parse, in the old shape.
    out.parse = (s, parseQuery) => {
      const u = new m.URL(s);
      const query = u.search.slice(1);
      return {
        protocol: u.protocol, slashes: true, auth: u.username ? (u.password ? `${u.username}:${u.password}` : u.username) : null,
        host: u.host, port: u.port || null, hostname: u.hostname, hash: u.hash || null, search: u.search || null,
        query: parseQuery ? P.ObjectFromEntries(u.searchParams) : query || null, pathname: u.pathname,
        path: u.pathname + u.search, href: u.href,
      };
    };
    out.resolve = (from, to) => new m.URL(to, new m.URL(from, 'resolve://')).href.replace(/^resolve:\/\/\/?/, from.startsWith('/') ? '/' : '');
    return out;
  };
  factories.string_decoder = () => {
    class StringDecoder {
      constructor(encoding = 'utf8') {
        this.encoding = P.StringPrototypeReplace(String(encoding).toLowerCase(), '-', '');
        this.decoder = this.encoding === 'utf8' ? new TextDecoder('utf-8') : null;
      }
      write(buf) {
        if (typeof buf === 'string') return buf;
        if (this.decoder) return this.decoder.decode(buf, { stream: true });
        return internal.buffer().Buffer.from(buf).toString(this.encoding);
      }
      end(buf) {
        let s = buf === undefined ? '' : this.write(buf);
        if (this.decoder) s += this.decoder.decode();
        return s;
      }
    }
    return { StringDecoder };
  };

  // ---- crypto -----------------------------------------------------------
  factories.crypto = () => {
    const { Buffer } = internal.buffer();
    const web = internal.crypto;
    const toBytes = (data, encoding) => (typeof data === 'string' ? Buffer.from(data, encoding || 'utf8') : data);
    const output = (ab, encoding) => {
      const b = Buffer.from(ab);
      return encoding ? b.toString(encoding) : b;
    };
    class Hash {
      #alg;
      #parts = [];
      #done = false;
      constructor(alg, key) {
        this.#alg = String(alg);
        if (key !== undefined) this.key = toBytes(key);
        host.digest(this.#alg, []); // throws for an unknown algorithm
      }
      update(data, encoding) {
        if (this.#done) throw P.ObjectAssign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
        const b = toBytes(data, encoding);
        if (!P.ArrayBufferIsView(b)) throw invalidArg('data', 'of type string or an instance of Buffer, TypedArray, or DataView', data);
        P.arrayPush(this.#parts, b);
        return this;
      }
      digest(encoding) {
        if (this.#done) throw P.ObjectAssign(new Error('Digest already called'), { code: 'ERR_CRYPTO_HASH_FINALIZED' });
        this.#done = true;
        const ab = this.key !== undefined ? host.hmac(this.#alg, this.key, this.#parts) : host.digest(this.#alg, this.#parts);
        return output(ab, encoding);
      }
      copy() {
        const h = new Hash(this.#alg, this.key);
        for (const p of this.#parts) h.update(p);
        return h;
      }
    }
    const randomBytes = (n, cb) => {
      const b = Buffer.alloc(n);
      host.randomFill(b);
      if (typeof cb === 'function') {
        queueMicrotask(() => cb(null, b));
        return undefined;
      }
      return b;
    };
    const randomFillSync = (buf, offset = 0, size) => {
      const view = new Uint8Array(buf.buffer || buf, (buf.byteOffset || 0) + offset, size === undefined ? (buf.byteLength - offset) : size);
      host.randomFill(view);
      return buf;
    };
    const randomInt = (min, max, cb) => {
      if (max === undefined || typeof max === 'function') {
        cb = max;
        max = min;
        min = 0;
      }
      const range = max - min;
      if (!P.NumberIsSafeInteger(min) || !P.NumberIsSafeInteger(max) || range <= 0 || range > 2 ** 48) {
        throw P.ObjectAssign(new RangeError(`The value of "max" is out of range. It must be greater than the value of "min" (${min}). Received ${max}`), { code: 'ERR_OUT_OF_RANGE' });
      }
      const b = new Uint8Array(6);
      const limit = 2 ** 48 - (2 ** 48 % range);
      let x;
      do {
        host.randomFill(b);
        x = b.reduce((acc, v) => acc * 256 + v, 0);
      } while (x >= limit);
      const r = min + (x % range);
      if (typeof cb === 'function') {
        queueMicrotask(() => cb(null, r));
        return undefined;
      }
      return r;
    };
    const timingSafeEqual = (a, b) => {
      if (a.byteLength !== b.byteLength) throw P.ObjectAssign(new RangeError('Input buffers must have the same byte length'), { code: 'ERR_CRYPTO_TIMING_SAFE_EQUAL_LENGTH' });
      let d = 0;
      for (let i = 0; i < a.length; i++) d |= a[i] ^ b[i];
      return d === 0;
    };
    return {
      createHash: (alg) => new Hash(alg),
      createHmac: (alg, key) => new Hash(alg, key),
      hash: (alg, data, encoding = 'hex') => new Hash(alg).update(data).digest(encoding),
      getHashes: () => ['md5', 'sha1', 'sha224', 'sha256', 'sha384', 'sha512'],
      randomBytes,
      randomFillSync,
      randomFill: (buf, ...rest) => {
        const cb = rest.pop();
        randomFillSync(buf, ...rest);
        queueMicrotask(() => cb(null, buf));
      },
      randomInt,
      randomUUID: web.randomUUID,
      getRandomValues: web.getRandomValues,
      timingSafeEqual,
      webcrypto: web,
      subtle: web.subtle,
    };
  };

  // ---- os, assert, timers, process --------------------------------------
  factories.os = () => ({
    EOL: '\n',
    platform: () => 'linux',
    type: () => 'Linux',
    arch: () => process.arch,
    release: () => '',
    hostname: () => 'sandbox',
    // As Node's: HOME when set (the session root by default), else the
    // root.
    homedir: () => (typeof process.env.HOME === 'string' && process.env.HOME !== '' ? process.env.HOME : process.cwd()),
    tmpdir: () => process.cwd(),
    endianness: () => 'LE',
    cpus: () => [],
    availableParallelism: () => 1,
    totalmem: () => host.memoryLimitBytes,
    freemem: () => host.memoryLimitBytes,
    uptime: () => process.uptime(),
    loadavg: () => [0, 0, 0],
    networkInterfaces: () => ({}),
    userInfo: () => ({ uid: 0, gid: 0, username: 'sandbox', homedir: process.cwd(), shell: null }),
    constants: { signals: {}, errno: {} },
    devNull: '/dev/null',
  });
  factories.assert = () => {
    const { inspect } = internal;
    class AssertionError extends Error {
      constructor(options) {
        super(options.message);
        this.name = 'AssertionError';
        this.code = 'ERR_ASSERTION';
        this.actual = options.actual;
        this.expected = options.expected;
        this.operator = options.operator;
        this.generatedMessage = !options.userMessage;
      }
    }
    const fail = (actual, expected, message, operator, dflt) => {
      if (P.isInstance(message, P.Error)) throw message;
      throw new AssertionError({ message: message !== undefined ? message : dflt(), actual, expected, operator, userMessage: message !== undefined });
    };
    function deepEqualValues(a, b, strict, seen = new P.SafeMap()) {
      if (strict ? P.ObjectIs(a, b) : a == b || (a !== a && b !== b)) return true; // eslint-disable-line eqeqeq
      if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
      if (strict && P.ObjectGetPrototypeOf(a) !== P.ObjectGetPrototypeOf(b)) return false;
      const tag = P.ObjectPrototypeToString(a);
      if (tag !== P.ObjectPrototypeToString(b)) return false;
      if (seen.get(a) === b) return true;
      seen.set(a, b);
      if (P.isInstance(a, P.Date)) return a.getTime() === b.getTime();
      if (P.isInstance(a, P.RegExp)) return String(a) === String(b);
      if (P.ArrayBufferIsView(a)) {
        if (a.length !== b.length) return false;
        for (let i = 0; i < a.length; i++) if (!P.ObjectIs(a[i], b[i])) return false;
        return true;
      }
      if (P.isInstance(a, P.Map)) {
        if (!P.isInstance(b, P.Map) || P.MapPrototypeGetSize(a) !== P.MapPrototypeGetSize(b)) return false;
        // SafeMap's copies of Map's methods: a cell can replace Map's.
        const { has, get } = P.SafeMap.prototype;
        const entries = P.mapEntries(a);
        for (let i = 0; i < entries.length; i++) {
          const k = entries[i][0], v = entries[i][1];
          if (!P.FunctionPrototypeCall(has, b, k) || !deepEqualValues(v, P.FunctionPrototypeCall(get, b, k), strict, seen)) return false;
        }
        return true;
      }
      if (P.isInstance(a, P.Set)) {
        if (!P.isInstance(b, P.Set) || P.SetPrototypeGetSize(a) !== P.SetPrototypeGetSize(b)) return false;
        const { has } = P.SafeSet.prototype;
        const values = P.setValues(a);
        for (let i = 0; i < values.length; i++) if (!P.FunctionPrototypeCall(has, b, values[i])) return false;
        return true;
      }
      if (P.isInstance(a, P.Error) && (a.message !== b.message || a.name !== b.name)) return false;
      const ka = P.ObjectKeys(a);
      const kb = P.ObjectKeys(b);
      if (ka.length !== kb.length) return false;
      for (let i = 0; i < ka.length; i++) {
        const k = ka[i];
        if (!P.ObjectPrototypeHasOwnProperty(b, k) || !deepEqualValues(a[k], b[k], strict, seen)) return false;
      }
      return true;
    }
    const assert = (value, message) => assert.ok(value, message);
    P.ObjectAssign(assert, {
      AssertionError,
      deepEqualValues,
      ok(value, message) {
        if (!value) fail(value, true, message, '==', () => `The expression evaluated to a falsy value:\n\n  assert.ok(${inspect(value)})\n`);
      },
      equal(a, b, message) {
        if (!(a == b || (a !== a && b !== b))) fail(a, b, message, '==', () => `${inspect(a)} == ${inspect(b)}`); // eslint-disable-line eqeqeq
      },
      notEqual(a, b, message) {
        if (a == b) fail(a, b, message, '!=', () => `${inspect(a)} != ${inspect(b)}`); // eslint-disable-line eqeqeq
      },
      strictEqual(a, b, message) {
        if (!P.ObjectIs(a, b)) fail(a, b, message, 'strictEqual', () => `Expected values to be strictly equal:\n\n${inspect(a)} !== ${inspect(b)}\n`);
      },
      notStrictEqual(a, b, message) {
        if (P.ObjectIs(a, b)) fail(a, b, message, 'notStrictEqual', () => `Expected "actual" to be strictly unequal to: ${inspect(b)}`);
      },
      deepEqual(a, b, message) {
        if (!deepEqualValues(a, b, false)) fail(a, b, message, 'deepEqual', () => `Expected values to be loosely deep-equal:\n\n${inspect(a)}\n\nshould loosely deep-equal\n\n${inspect(b)}`);
      },
      deepStrictEqual(a, b, message) {
        if (!deepEqualValues(a, b, true)) fail(a, b, message, 'deepStrictEqual', () => `Expected values to be strictly deep-equal:\n${inspect(a)}\n\nshould equal\n\n${inspect(b)}`);
      },
      notDeepStrictEqual(a, b, message) {
        if (deepEqualValues(a, b, true)) fail(a, b, message, 'notDeepStrictEqual', () => `Expected "actual" not to be strictly deep-equal to: ${inspect(b)}`);
      },
      fail(message = 'Failed') {
        fail(undefined, undefined, message, 'fail', () => message);
      },
      throws(fn, expected, message) {
        try {
          fn();
        } catch (e) {
          checkThrown(e, expected, message);
          return;
        }
        fail(undefined, expected, typeof expected === 'string' ? expected : message, 'throws', () => 'Missing expected exception.');
      },
      async rejects(p, expected, message) {
        try {
          await (typeof p === 'function' ? p() : p);
        } catch (e) {
          checkThrown(e, expected, message);
          return;
        }
        fail(undefined, expected, message, 'rejects', () => 'Missing expected rejection.');
      },
      doesNotThrow(fn, message) {
        try {
          fn();
        } catch (e) {
          fail(e, undefined, message, 'doesNotThrow', () => `Got unwanted exception.\nActual message: "${e && e.message}"`);
        }
      },
      match(s, re, message) {
        if (!re.test(s)) fail(s, re, message, 'match', () => `The input did not match the regular expression ${re}. Input:\n\n${inspect(s)}\n`);
      },
    });
    function checkThrown(e, expected, message) {
      if (expected === undefined || typeof expected === 'string') return;
      if (typeof expected === 'function') {
        if (expected.prototype !== undefined && e instanceof expected) return;
        if (Error.isPrototypeOf(expected) || expected === Error) fail(e, expected, message, 'throws', () => `The error is expected to be an instance of "${expected.name}". Received "${e && e.name}"`);
        if (expected(e) === true) return;
        fail(e, expected, message, 'throws', () => 'The validation function is expected to return "true".');
      }
      if (P.isInstance(expected, P.RegExp)) {
        if (expected.test(String(e))) return;
        fail(e, expected, message, 'throws', () => `The input did not match the regular expression ${expected}. Input:\n\n${inspect(String(e))}\n`);
      }
      for (const k of P.ObjectKeys(expected)) {
        const want = expected[k];
        const got = e[k];
        if (P.isInstance(want, P.RegExp) ? !want.test(got) : !deepEqualValues(got, want, true)) {
          fail(e, expected, message, 'throws', () => `Expected values to be strictly deep-equal: ${k}: ${inspect(got)} !== ${inspect(want)}`);
        }
      }
    }
    assert.strict = assert;
    return assert;
  };
  factories.timers = () => ({ setTimeout, clearTimeout, setInterval, clearInterval, setImmediate, clearImmediate });
  factories['timers/promises'] = () => ({
    setTimeout: (ms, value, options = {}) => new Promise((resolve, reject) => {
      const signal = options && options.signal;
      if (signal && signal.aborted) {
        reject(signal.reason);
        return;
      }
      const t = setTimeout(() => resolve(value), ms);
      if (signal) signal.addEventListener('abort', () => {
        clearTimeout(t);
        reject(signal.reason);
      }, { once: true });
    }),
    setImmediate: (value) => new Promise((resolve) => setImmediate(() => resolve(value))),
    scheduler: { wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)), yield: () => new Promise((resolve) => setImmediate(resolve)) },
  });
  factories.process = () => process;

  // eventIterator is an async iterator of the values emitter emits as
  // event, done at end, failed at 'error' (goja has no async generators).
  function eventIterator(emitter, event, end) {
    const queue = [];
    let done = false;
    let error = null;
    let waiting = null;
    const settle = () => {
      if (waiting === null) return;
      const w = waiting;
      if (queue.length > 0) {
        waiting = null;
        w.resolve({ value: queue.shift(), done: false });
      } else if (error !== null) {
        waiting = null;
        w.reject(error);
      } else if (done) {
        waiting = null;
        w.resolve({ value: undefined, done: true });
      }
    };
    emitter.on(event, (v) => {
      P.arrayPush(queue, v);
      settle();
    });
    emitter.once(end, () => {
      done = true;
      settle();
    });
    emitter.once('error', (e) => {
      error = e;
      settle();
    });
    return {
      next() {
        return new Promise((resolve, reject) => {
          waiting = { resolve, reject };
          settle();
        });
      },
      return() {
        done = true;
        queue.length = 0;
        if (typeof emitter.destroy === 'function') emitter.destroy();
        else if (typeof emitter.close === 'function') emitter.close();
        return P.PromiseResolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  // ---- stream, stream/promises, readline --------------------------------
  // A compact stream: Readable (push or pull with _read, flowing with
  // 'data' or pulled with read(), async iteration, Readable.from), Writable
  // (_write, _final, 'finish'), Duplex, Transform, PassThrough, pipe,
  // pipeline and finished. Enough for packages that build on it and for
  // reading a file line by line; no backpressure beyond a high-water mark.
  factories.stream = () => {
    const EventEmitter = internal.builtin('events');
    const { Buffer } = internal.buffer();
    const tick = (fn) => queueMicrotask(fn);
    class Stream extends EventEmitter {
      pipe(dest, options = {}) {
        this.on('data', (chunk) => {
          if (dest.write(chunk) === false && typeof this.pause === 'function') {
            this.pause();
            dest.once('drain', () => this.resume());
          }
        });
        if (options.end !== false) this.on('end', () => dest.end());
        dest.emit('pipe', this);
        return dest;
      }
    }
    function initReadable(self, opts) {
      self._readableState = {
        buffer: [], ended: false, endEmitted: false, flowing: null, scheduled: false, reading: false,
        objectMode: !!(opts.objectMode || opts.readableObjectMode), decoder: null,
        highWaterMark: opts.highWaterMark !== undefined ? opts.highWaterMark : opts.objectMode ? 16 : 16384, length: 0,
      };
      if (opts.encoding) self.setEncoding(opts.encoding);
      if (typeof opts.read === 'function') self._read = opts.read;
      if (typeof opts.destroy === 'function') self._destroy = opts.destroy;
      self.readable = true;
      self.destroyed = false;
    }
    class Readable extends Stream {
      constructor(opts = {}) {
        super();
        initReadable(this, opts);
      }
      _read() {}
      push(chunk, encoding) {
        const st = this._readableState;
        if (chunk === null) {
          st.ended = true;
          this.#schedule();
          return false;
        }
        if (!st.objectMode && typeof chunk === 'string') chunk = Buffer.from(chunk, encoding);
        else if (!st.objectMode && P.isInstance(chunk, P.Uint8Array) && !(chunk instanceof Buffer)) chunk = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        P.arrayPush(st.buffer, chunk);
        st.length += st.objectMode ? 1 : chunk.length;
        st.reading = false;
        this.#schedule();
        return st.length < st.highWaterMark;
      }
      unshift(chunk) {
        const st = this._readableState;
        P.arrayUnshift(st.buffer, chunk);
        st.length += st.objectMode ? 1 : chunk.length;
      }
      #take() {
        const st = this._readableState;
        const chunk = st.buffer.shift();
        st.length -= st.objectMode ? 1 : chunk.length;
        return st.decoder ? st.decoder.write(chunk) : chunk;
      }
      #pull() {
        const st = this._readableState;
        if (!st.ended && !st.reading && st.length < st.highWaterMark && !this.destroyed) {
          st.reading = true;
          try {
            this._read(st.highWaterMark);
          } catch (e) {
            this.destroy(e);
          }
        }
      }
      #schedule() {
        const st = this._readableState;
        if (st.scheduled) return;
        st.scheduled = true;
        tick(() => {
          st.scheduled = false;
          this.#flow();
        });
      }
      #flow() {
        const st = this._readableState;
        if (this.destroyed) return;
        if (st.flowing) {
          while (st.flowing && st.buffer.length > 0) this.emit('data', this.#take());
        } else if (st.buffer.length > 0 || st.ended) {
          this.emit('readable');
        }
        if (st.ended && st.buffer.length === 0) {
          if (!st.endEmitted && (st.flowing || this.listenerCount('readable') > 0 || st.flowing === false || st.consumed)) {
            st.endEmitted = true;
            this.readable = false;
            if (st.decoder) {
              const rest = st.decoder.end();
              if (rest && st.flowing) this.emit('data', rest);
            }
            this.emit('end');
            tick(() => this.emit('close'));
          }
          return;
        }
        if (st.flowing) this.#pull();
      }
      read() {
        const st = this._readableState;
        st.consumed = true;
        if (st.buffer.length === 0) {
          this.#pull();
          if (st.ended) this.#schedule();
          return null;
        }
        const chunk = this.#take();
        if (st.buffer.length === 0) this.#pull();
        if (st.ended && st.buffer.length === 0) this.#schedule();
        return chunk;
      }
      on(event, listener) {
        super.on(event, listener);
        const st = this._readableState;
        if (event === 'data' && st.flowing !== false) this.resume();
        if (event === 'readable' || event === 'end') {
          this.#pull();
          this.#schedule();
        }
        return this;
      }
      resume() {
        const st = this._readableState;
        st.flowing = true;
        this.#pull();
        this.#schedule();
        return this;
      }
      pause() {
        this._readableState.flowing = false;
        return this;
      }
      isPaused() {
        return this._readableState.flowing === false;
      }
      setEncoding(encoding) {
        const { StringDecoder } = internal.builtin('string_decoder');
        this._readableState.decoder = new StringDecoder(encoding);
        return this;
      }
      destroy(err) {
        if (this.destroyed) return this;
        this.destroyed = true;
        const done = (e) => {
          if (e) this.emit('error', e);
          this.emit('close');
        };
        if (typeof this._destroy === 'function') this._destroy(err || null, (e) => tick(() => done(e)));
        else tick(() => done(err));
        return this;
      }
      [Symbol.asyncIterator]() {
        return eventIterator(this, 'data', 'end');
      }
      toArray() {
        return new Promise((resolve, reject) => {
          const out = [];
          this.on('data', (c) => P.arrayPush(out, c));
          this.once('end', () => resolve(out));
          this.once('error', reject);
        });
      }
      static from(iterable, opts = {}) {
        if (typeof iterable === 'string' || P.isInstance(iterable, P.Uint8Array)) iterable = [iterable];
        const it = iterable[Symbol.asyncIterator] ? iterable[Symbol.asyncIterator]() : iterable[Symbol.iterator]();
        return new Readable(P.ObjectAssign({ objectMode: true }, opts, {
          read() {
            P.PromiseResolve(it.next()).then((r) => this.push(r.done ? null : r.value), (e) => this.destroy(e));
          },
        }));
      }
    }
    function initWritable(self, opts) {
      self._writableState = { queue: [], writing: false, ending: false, finished: false, objectMode: !!(opts.objectMode || opts.writableObjectMode), endCallbacks: [] };
      if (typeof opts.write === 'function') self._write = opts.write;
      if (typeof opts.writev === 'function' && !opts.write) self._write = (c, e, cb) => P.FunctionPrototypeCall(opts.writev, self, [{ chunk: c, encoding: e }], cb);
      if (typeof opts.final === 'function') self._final = opts.final;
      self.writable = true;
    }
    const writableMethods = {
      write(chunk, encoding, cb) {
        if (typeof encoding === 'function') {
          cb = encoding;
          encoding = 'utf8';
        }
        const st = this._writableState;
        if (st.ending) {
          const err = P.ObjectAssign(new Error('write after end'), { code: 'ERR_STREAM_WRITE_AFTER_END' });
          tick(() => (cb ? cb(err) : this.emit('error', err)));
          return false;
        }
        if (!st.objectMode && typeof chunk === 'string') chunk = Buffer.from(chunk, encoding || 'utf8');
        P.arrayPush(st.queue, [chunk, encoding || 'buffer', cb]);
        this._drainQueue();
        return true;
      },
      _drainQueue() {
        const st = this._writableState;
        if (st.writing) return;
        const next = st.queue.shift();
        if (next === undefined) {
          if (st.ending && !st.finished) this._finish();
          return;
        }
        st.writing = true;
        const [chunk, encoding, cb] = next;
        let called = false;
        const done = (err) => {
          if (called) return;
          called = true;
          tick(() => {
            st.writing = false;
            if (cb) cb(err || null);
            if (err) {
              this.emit('error', err);
              return;
            }
            if (st.queue.length === 0 && !st.ending) this.emit('drain');
            this._drainQueue();
          });
        };
        try {
          this._write(chunk, encoding, done);
        } catch (e) {
          done(e);
        }
      },
      _finish() {
        const st = this._writableState;
        st.finished = true;
        const end = (err) => tick(() => {
          if (err) {
            this.emit('error', err);
            return;
          }
          this.writable = false;
          this.emit('finish');
          for (const cb of st.endCallbacks) cb();
          if (!(this instanceof Readable)) tick(() => this.emit('close'));
        });
        if (typeof this._final === 'function') this._final(end);
        else end();
      },
      end(chunk, encoding, cb) {
        if (typeof chunk === 'function') {
          cb = chunk;
          chunk = undefined;
        } else if (typeof encoding === 'function') {
          cb = encoding;
          encoding = undefined;
        }
        if (chunk !== undefined && chunk !== null) this.write(chunk, encoding);
        const st = this._writableState;
        if (cb) P.arrayPush(st.endCallbacks, cb);
        if (!st.ending) {
          st.ending = true;
          this._drainQueue();
        }
        return this;
      },
      cork() {},
      uncork() {},
      setDefaultEncoding() {
        return this;
      },
    };
    class Writable extends Stream {
      constructor(opts = {}) {
        super();
        initWritable(this, opts);
        this.destroyed = false;
      }
      _write(chunk, encoding, cb) {
        cb(P.ObjectAssign(new Error('The _write() method is not implemented'), { code: 'ERR_METHOD_NOT_IMPLEMENTED' }));
      }
      destroy(err) {
        if (this.destroyed) return this;
        this.destroyed = true;
        tick(() => {
          if (err) this.emit('error', err);
          this.emit('close');
        });
        return this;
      }
    }
    P.ObjectAssign(Writable.prototype, writableMethods);
    class Duplex extends Readable {
      constructor(opts = {}) {
        super(opts);
        initWritable(this, opts);
        if (opts.allowHalfOpen === false) this.once('end', () => this.end());
      }
      _write(chunk, encoding, cb) {
        cb(P.ObjectAssign(new Error('The _write() method is not implemented'), { code: 'ERR_METHOD_NOT_IMPLEMENTED' }));
      }
    }
    for (const [k, v] of P.ObjectEntries(writableMethods)) Duplex.prototype[k] = v;
    class Transform extends Duplex {
      constructor(opts = {}) {
        super(opts);
        if (typeof opts.transform === 'function') this._transform = opts.transform;
        if (typeof opts.flush === 'function') this._flush = opts.flush;
      }
      _transform(chunk, encoding, cb) {
        cb(P.ObjectAssign(new Error('The _transform() method is not implemented'), { code: 'ERR_METHOD_NOT_IMPLEMENTED' }));
      }
      _write(chunk, encoding, cb) {
        this._transform(chunk, encoding, (err, data) => {
          if (data !== undefined && data !== null) this.push(data);
          cb(err);
        });
      }
      _final(cb) {
        const done = (err, data) => {
          if (data !== undefined && data !== null) this.push(data);
          this.push(null);
          cb(err);
        };
        if (typeof this._flush === 'function') this._flush(done);
        else done();
      }
    }
    class PassThrough extends Transform {
      _transform(chunk, encoding, cb) {
        cb(null, chunk);
      }
    }
    function finished(stream, opts, cb) {
      if (typeof opts === 'function') cb = opts;
      let called = false;
      const done = (err) => {
        if (!called) {
          called = true;
          cb(err || null);
        }
      };
      stream.once('error', done);
      if (stream._writableState && !(stream instanceof Readable && !stream._writableState)) stream.once('finish', () => done());
      if (stream._readableState) stream.once('end', () => done());
      stream.once('close', () => done());
      return () => {};
    }
    function pipeline(...streams) {
      const cb = typeof streams[streams.length - 1] === 'function' ? streams.pop() : () => {};
      if (P.ArrayIsArray(streams[0])) streams = streams[0];
      streams = streams.map((s, i) => (i === 0 && !(s instanceof Stream) && s !== null && typeof s === 'object' ? Readable.from(s) : s));
      let failed = false;
      const fail = (err) => {
        if (failed) return;
        failed = true;
        for (const s of streams) if (typeof s.destroy === 'function') s.destroy();
        cb(err);
      };
      for (let i = 0; i < streams.length - 1; i++) streams[i].pipe(streams[i + 1]);
      for (const s of streams) s.on('error', fail);
      const last = streams[streams.length - 1];
      finished(last, (err) => (err ? fail(err) : failed || cb(null)));
      return last;
    }
    const promises = {
      pipeline: (...streams) => new Promise((resolve, reject) => pipeline(...streams, (err) => (err ? reject(err) : resolve()))),
      finished: (stream, opts) => new Promise((resolve, reject) => finished(stream, opts, (err) => (err ? reject(err) : resolve()))),
    };
    Stream.Stream = Stream;
    P.ObjectAssign(Stream, { Readable, Writable, Duplex, Transform, PassThrough, pipeline, finished, promises });
    return Stream;
  };
  factories['stream/promises'] = () => internal.builtin('stream').promises;
  factories.readline = () => {
    const EventEmitter = internal.builtin('events');
    class Interface extends EventEmitter {
      constructor(input, crlfDelay) {
        super();
        this.closed = false;
        let rest = '';
        const { StringDecoder } = internal.builtin('string_decoder');
        const decoder = new StringDecoder('utf8');
        const emitLines = (text) => {
          rest += text;
          const lines = rest.split(/\r?\n/);
          rest = lines.pop();
          for (const line of lines) this.emit('line', line);
        };
        if (!input || typeof input.on !== 'function') {
          throw P.ObjectAssign(new TypeError('readline.createInterface: the sandbox has no stdin; give a stream as input (e.g. fs.createReadStream(path))'), { code: 'ERR_INVALID_ARG_TYPE' });
        }
        input.on('data', (chunk) => emitLines(typeof chunk === 'string' ? chunk : decoder.write(chunk)));
        input.on('end', () => {
          emitLines(decoder.end());
          if (rest !== '') this.emit('line', rest);
          rest = '';
          this.close();
        });
        input.on('error', (e) => this.emit('error', e));
      }
      close() {
        if (this.closed) return;
        this.closed = true;
        this.emit('close');
      }
      question(query, cb) {
        throw P.ObjectAssign(new Error('readline: the sandbox has no terminal to ask on'), { code: 'ERR_NOT_AVAILABLE' });
      }
      setPrompt() {}
      prompt() {}
      write() {}
      pause() {
        return this;
      }
      resume() {
        return this;
      }
      [Symbol.asyncIterator]() {
        return eventIterator(this, 'line', 'close');
      }
    }
    const createInterface = (input, output, completer, terminal) => {
      const opts = input !== null && typeof input === 'object' && 'input' in input ? input : { input };
      return new Interface(opts.input, opts.crlfDelay);
    };
    return { createInterface, Interface };
  };
  factories.module = () => {
    const builtinModules = P.ArrayFrom(host.builtinModules);
    const isBuiltin = (name) => builtinModules.includes(String(name).replace(/^node:/, ''));
    function Module() {}
    P.ObjectAssign(Module, { createRequire: (filename) => host.createRequire(String(filename && filename.href !== undefined ? filename.href : filename)), builtinModules, isBuiltin });
    Module.Module = Module;
    return Module;
  };
  // zlib: the sync, callback and promise forms of gzip, deflate and their
  // inverses (no streams, no brotli).
  factories.zlib = () => {
    const { Buffer } = internal.buffer();
    const out = {
      constants: { Z_NO_COMPRESSION: 0, Z_BEST_SPEED: 1, Z_BEST_COMPRESSION: 9, Z_DEFAULT_COMPRESSION: -1 },
    };
    for (const op of ['gzip', 'gunzip', 'deflate', 'inflate', 'deflateRaw', 'inflateRaw', 'unzip']) {
      const sync = (data, options = {}) => {
        const input = typeof data === 'string' ? Buffer.from(data) : P.isInstance(data, P.ArrayBuffer) ? new Uint8Array(data) : data;
        const level = options && options.level !== undefined ? options.level : -1;
        return Buffer.from(host.zlib(op, input, level));
      };
      out[op + 'Sync'] = sync;
      out[op] = (data, options, cb) => {
        if (typeof options === 'function') {
          cb = options;
          options = {};
        }
        let result;
        let error = null;
        try {
          result = sync(data, options);
        } catch (e) {
          error = e;
        }
        queueMicrotask(() => (error ? cb(error) : cb(null, result)));
      };
    }
    for (const name of ['createGzip', 'createGunzip', 'createDeflate', 'createInflate', 'brotliCompressSync', 'brotliDecompressSync']) {
      out[name] = () => {
        throw P.ObjectAssign(new Error(`zlib.${name} is not available in the sandbox; use the sync or callback forms of gzip, gunzip, deflate and inflate`), { code: 'ERR_NOT_AVAILABLE' });
      };
    }
    return out;
  };
  // tty: the sandbox's output is never a terminal.
  factories.tty = () => {
    class ReadStream {
      constructor() {
        this.isTTY = false;
      }
    }
    class WriteStream {
      constructor() {
        this.isTTY = false;
        this.columns = 80;
        this.rows = 24;
      }
      getColorDepth() {
        return 1;
      }
      hasColors() {
        return false;
      }
    }
    return { isatty: () => false, ReadStream, WriteStream };
  };
  // querystring, the legacy API: a=1&b=2 and back.
  factories.querystring = () => {
    const escape = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
    const unescape = (s) => {
      try {
        return decodeURIComponent(s);
      } catch (e) {
        return s;
      }
    };
    const value = (v) => (typeof v === 'string' ? v : typeof v === 'number' && P.NumberIsFinite(v) ? String(v) : typeof v === 'boolean' || typeof v === 'bigint' ? String(v) : '');
    function stringify(obj, sep = '&', eq = '=') {
      if (obj === null || typeof obj !== 'object') return '';
      return P.ObjectKeys(obj).map((k) => {
        const v = obj[k];
        if (P.ArrayIsArray(v)) return v.map((x) => escape(k) + eq + escape(value(x))).join(sep);
        return escape(k) + eq + escape(value(v));
      }).join(sep);
    }
    function parse(str, sep = '&', eq = '=', options = {}) {
      const out = P.ObjectCreate(null);
      if (typeof str !== 'string' || str.length === 0) return out;
      let parts = str.split(sep);
      const max = options && options.maxKeys !== undefined ? options.maxKeys : 1000;
      if (max > 0) parts = parts.slice(0, max);
      for (const part of parts) {
        if (part === '') continue;
        const i = part.indexOf(eq);
        const k = unescape((i >= 0 ? part.slice(0, i) : part).replace(/\+/g, ' '));
        const v = i >= 0 ? unescape(part.slice(i + eq.length).replace(/\+/g, ' ')) : '';
        if (!(k in out)) out[k] = v;
        else if (P.ArrayIsArray(out[k])) P.arrayPush(out[k], v);
        else out[k] = [out[k], v];
      }
      return out;
    }
    return { parse, stringify, decode: parse, encode: stringify, escape, unescape };
  };

  // ---- Bun ---------------------------------------------------------------
  // The seed tool's VM has the Bun global; agents reach for Bun.file() and
  // Bun.write() to read and write files. This is the part that fits the
  // sandbox: files through fs (the session root, its rules and quota),
  // Bun.env (process.env), sleep, nanoseconds, inspect, deepEquals,
  // escapeHTML. Processes do not exist here: spawn, spawnSync and $ throw,
  // saying to use tool.<name>().
  const makeBun = () => {
    const fs = internal.builtin('fs');
    const util = internal.builtin('util');
    const { Buffer } = internal.buffer();
    const noProcesses = (name) => () => {
      const err = new Error(`Bun.${name}: there are no processes in the sandbox; use tool.<name>() to call one of the session's tools (e.g. bash), which runs outside it`);
      err.code = 'ERR_NO_PROCESSES';
      throw err;
    };
    const types = {
      txt: 'text/plain;charset=utf-8', md: 'text/markdown;charset=utf-8', html: 'text/html;charset=utf-8', htm: 'text/html;charset=utf-8',
      css: 'text/css;charset=utf-8', csv: 'text/csv;charset=utf-8', js: 'text/javascript;charset=utf-8', mjs: 'text/javascript;charset=utf-8',
      cjs: 'text/javascript;charset=utf-8', ts: 'text/javascript;charset=utf-8', json: 'application/json;charset=utf-8',
      xml: 'application/xml', svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg', gif: 'image/gif',
      webp: 'image/webp', pdf: 'application/pdf', zip: 'application/zip', wasm: 'application/wasm', yaml: 'text/yaml;charset=utf-8',
      yml: 'text/yaml;charset=utf-8', py: 'text/x-python;charset=utf-8',
    };
    const typeOf = (p) => {
      const m = /\.([^./]+)$/.exec(p);
      return (m && types[m[1].toLowerCase()]) || 'application/octet-stream';
    };
    // bytesOf reads data as Bun.write takes it.
    const bytesOf = async (data) => {
      if (typeof data === 'string' || P.ArrayBufferIsView(data)) return data;
      if (P.isInstance(data, P.ArrayBuffer)) return new Uint8Array(data);
      if (data instanceof BunFile) return data.bytes();
      if (data instanceof Blob || data instanceof Response || data instanceof Request) return new Uint8Array(await data.arrayBuffer());
      if (P.ArrayIsArray(data)) return new Uint8Array(await new Blob(data).arrayBuffer());
      throw invalidArg('data', 'a string, Blob, BunFile, Response, ArrayBuffer or TypedArray', data);
    };
    class BunFile {
      #path;
      #type;
      constructor(path, options = {}) {
        if (typeof path === 'number') throw new TypeError('Bun.file: file descriptors are not available in the sandbox; give a path');
        if (path instanceof URL) path = decodeURIComponent(path.pathname);
        this.#path = String(path);
        this.#type = options && options.type !== undefined ? String(options.type) : typeOf(this.#path);
      }
      get name() {
        return this.#path;
      }
      get type() {
        return this.#type;
      }
      // size is 0 for a file that does not exist, as Bun's.
      get size() {
        try {
          return fs.statSync(this.#path).size;
        } catch {
          return 0;
        }
      }
      get lastModified() {
        try {
          return fs.statSync(this.#path).mtimeMs;
        } catch {
          return 0;
        }
      }
      async exists() {
        try {
          return fs.statSync(this.#path).isFile();
        } catch {
          return false;
        }
      }
      async bytes() {
        const b = await fs.promises.readFile(this.#path);
        return new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
      }
      async arrayBuffer() {
        const b = await this.bytes();
        return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength);
      }
      async text() {
        return fs.promises.readFile(this.#path, 'utf8');
      }
      async json() {
        return P.JSONParse(await this.text());
      }
      async blob() {
        return new Blob([await this.bytes()], { type: this.#type });
      }
      write(data) {
        return bun.write(this, data);
      }
      async delete() {
        await fs.promises.unlink(this.#path);
      }
      unlink() {
        return this.delete();
      }
      slice() {
        throw new Error('BunFile.slice is not available in the sandbox; read the bytes with await file.bytes() and slice them');
      }
      stream() {
        throw new Error('BunFile.stream is not available in the sandbox (there are no ReadableStreams); read it with await file.text() or file.bytes()');
      }
      writer() {
        throw new Error('BunFile.writer is not available in the sandbox; use await Bun.write(path, data), or append()');
      }
      get [Symbol.toStringTag]() {
        return 'BunFile';
      }
    }
    const bun = {
      version: '1.1.0',
      revision: 'wasmeval',
      env: process.env,
      argv: process.argv,
      main: undefined,
      file: (path, options) => new BunFile(path, options),
      async write(dest, data) {
        const path = dest instanceof BunFile ? dest.name : dest instanceof URL ? decodeURIComponent(dest.pathname) : typeof dest === 'string' ? dest : null;
        if (path === null) throw invalidArg('destination', 'a path string, URL or BunFile', dest);
        const bytes = await bytesOf(data);
        const paths = internal.builtin('path');
        await fs.promises.mkdir(paths.dirname(paths.resolve(path)), { recursive: true });
        await fs.promises.writeFile(path, bytes);
        return typeof bytes === 'string' ? Buffer.byteLength(bytes) : bytes.byteLength;
      },
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, P.isInstance(ms, P.Date) ? ms - P.DateNow() : ms)),
      nanoseconds: () => P.MathRound(performance.now() * 1e6),
      inspect: (value, options) => util.inspect(value, options),
      deepEquals(a, b, strict) {
        if (strict) return util.isDeepStrictEqual(a, b);
        try {
          internal.builtin('assert').deepEqual(a, b);
          return true;
        } catch {
          return false;
        }
      },
      escapeHTML: (s) => String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#x27;' })[c]),
      which: () => null,
      spawn: noProcesses('spawn'),
      spawnSync: noProcesses('spawnSync'),
      $: noProcesses('$'),
    };
    P.ObjectDefineProperty(bun, 'BunFile', { value: BunFile });
    return bun;
  };
  P.ObjectDefineProperty(globalThis, 'Bun', {
    configurable: true,
    enumerable: false,
    get() {
      const bun = makeBun();
      P.ObjectDefineProperty(globalThis, 'Bun', { value: bun, writable: true, configurable: true, enumerable: false });
      return bun;
    },
    set(value) {
      P.ObjectDefineProperty(globalThis, 'Bun', { value, writable: true, configurable: true, enumerable: false });
    },
  });

  // fs is a global too, as in the seed tool's VM: made on first use.
  P.ObjectDefineProperty(globalThis, 'fs', {
    configurable: true,
    enumerable: false,
    get() {
      const fs = internal.builtin('fs');
      P.ObjectDefineProperty(globalThis, 'fs', { value: fs, writable: true, configurable: true, enumerable: false });
      return fs;
    },
    set(value) {
      P.ObjectDefineProperty(globalThis, 'fs', { value, writable: true, configurable: true, enumerable: false });
    },
  });
})
