// web.js: the Web and Node globals an agent's code reaches for: Buffer,
// URL, URLSearchParams, TextEncoder, TextDecoder, atob, btoa,
// structuredClone, Event, EventTarget, AbortController, AbortSignal,
// DOMException, crypto, Blob, File, Headers, Request, Response and fetch
// (which has no network to reach: it rejects and names tool.<name>()).
// Buffer and URL are goja_nodejs's, made on first use (runtimes/js/node.go).
// Randomness comes from the session's source, so a seeded session replays.
(function (host, internal) {
  'use strict';
  // The built-ins as the VM started (inspect.js): the bodies below call
  // these, not the built-ins as a cell sees them (issue 9).
  const P = internal.primordials;
  // Math and Number's statics are P's: the size checks below (toLength,
  // want) must not call a cell's replacement (issue 9: `Math.trunc = () =>
  // 0` let Buffer.from({ length: 2 ** 28 }) past a 128 MiB cap, natively,
  // for 50 s). guards.js does the same.
  const Number = P.Number, numberIsFinite = P.NumberIsFinite;
  // The other globals the bodies name, as the VM started: a cell that
  // replaces globalThis.Map or Error does not reach them.
  const Array = P.Array, Error = P.Error, TypeError = P.TypeError, RangeError = P.RangeError, Map = P.Map, Set = P.Set;
  const String = P.String, Symbol = P.Symbol, Promise = P.Promise, Object = P.Object;
  // The native functions the wrappers below call go through this apply, not
  // their .call: a cell that replaced Function.prototype.call was handed
  // Buffer's unguarded alloc.
  const apply = Reflect.apply;

  // goja has no Symbol.asyncIterator; it is the registered symbol that
  // esbuild's helpers for lowered `for await` loops and async generators
  // look for when it is missing (runtimes/js/lower.go), so both agree.
  if (typeof Symbol.asyncIterator !== 'symbol') {
    P.ObjectDefineProperty(Symbol, 'asyncIterator', { value: P.SymbolFor('Symbol.asyncIterator') });
  }
  // The helpers esbuild puts at the top of a lowered cell are var
  // declarations, which would be enumerable globals of the session; made
  // here first, non-enumerable, they stay out of P.ObjectKeys(globalThis).
  for (const name of ['__knownSymbol', '__typeError', '__await', '__asyncGenerator', '__yieldStar', '__forAwait']) {
    P.ObjectDefineProperty(globalThis, name, { value: undefined, writable: true, configurable: true, enumerable: false });
  }

  // Built-ins of recent JavaScript that goja lacks and agents' code uses:
  // Object.groupBy, Map.groupBy, Promise.withResolvers, Array.fromAsync,
  // and WeakRef / FinalizationRegistry (goja has no weak references: a
  // WeakRef holds its target, and a registry never calls back, which is
  // what a program may see when nothing is collected).
  const defineMethod = (obj, name, fn) => {
    if (typeof obj[name] !== 'function') {
      P.ObjectDefineProperty(obj, name, { value: fn, writable: true, configurable: true, enumerable: false });
    }
  };
  defineMethod(Object, 'groupBy', function groupBy(items, callback) {
    const out = P.ObjectCreate(null);
    let i = 0;
    for (const item of items) {
      const key = callback(item, i++);
      const k = typeof key === 'symbol' ? key : String(key);
      if (k in out) P.arrayPush(out[k], item);
      else out[k] = [item];
    }
    return out;
  });
  defineMethod(Map, 'groupBy', function groupBy(items, callback) {
    const out = new Map();
    let i = 0;
    for (const item of items) {
      const key = callback(item, i++);
      const list = out.get(key);
      if (list) P.arrayPush(list, item);
      else out.set(key, [item]);
    }
    return out;
  });
  defineMethod(Promise, 'withResolvers', function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  });
  defineMethod(Array, 'fromAsync', function fromAsync(items, mapFn, thisArg) {
    if (mapFn !== undefined && typeof mapFn !== 'function') {
      return P.PromiseReject(new TypeError('Array.fromAsync: the mapping function is not a function'));
    }
    const map = (v, i) => (mapFn === undefined ? v : P.FunctionPrototypeCall(mapFn, thisArg, v, i));
    const out = [];
    if (items !== null && items !== undefined && typeof items[Symbol.asyncIterator] === 'function') {
      const it = items[Symbol.asyncIterator]();
      const step = () => P.PromiseResolve(it.next()).then((r) => {
        if (r.done) return out;
        return P.PromiseResolve(map(r.value, out.length)).then((v) => {
          P.arrayPush(out, v);
          return step();
        });
      });
      return step();
    }
    if (items === null || items === undefined) {
      return P.PromiseReject(new TypeError('Array.fromAsync: the input is not iterable'));
    }
    const list = typeof items[Symbol.iterator] === 'function' ? P.ArrayFrom(items) : P.ArrayFrom({ length: items.length }, (_, i) => items[i]);
    const step = (i) => (i >= list.length ? P.PromiseResolve(out) : P.PromiseResolve(list[i]).then((v) => map(v, i)).then((v) => {
      P.arrayPush(out, v);
      return step(i + 1);
    }));
    return step(0);
  });
  if (typeof globalThis.WeakRef !== 'function') {
    class WeakRef {
      #target;
      constructor(target) {
        if (target === null || (typeof target !== 'object' && typeof target !== 'function' && typeof target !== 'symbol')) {
          throw new TypeError('WeakRef: invalid target');
        }
        this.#target = target;
      }
      deref() {
        return this.#target;
      }
      get [Symbol.toStringTag]() {
        return 'WeakRef';
      }
    }
    class FinalizationRegistry {
      constructor(callback) {
        if (typeof callback !== 'function') throw new TypeError('FinalizationRegistry: the cleanup callback is not a function');
      }
      register() {}
      unregister() {
        return false;
      }
      get [Symbol.toStringTag]() {
        return 'FinalizationRegistry';
      }
    }
    P.ObjectDefineProperty(globalThis, 'WeakRef', { value: WeakRef, writable: true, configurable: true, enumerable: false });
    P.ObjectDefineProperty(globalThis, 'FinalizationRegistry', { value: FinalizationRegistry, writable: true, configurable: true, enumerable: false });
  }

  const define = (name, value) => P.ObjectDefineProperty(globalThis, name, {
    value, writable: true, configurable: true, enumerable: false,
  });
  // lazy defines a global made on first use.
  const lazy = (name, make) => P.ObjectDefineProperty(globalThis, name, {
    configurable: true,
    enumerable: false,
    get() {
      const v = make();
      define(name, v);
      return v;
    },
    set(v) {
      define(name, v);
    },
  });
  const maxBytes = host.memoryLimitBytes;
  const reserveFrom = 1 << 20;
  const want = (n) => {
    if (n > maxBytes) throw new RangeError('Array buffer allocation failed');
    if (n >= reserveFrom) host.reserve(n);
  };
  const toLength = (n) => {
    n = P.MathTrunc(Number(n));
    return numberIsFinite(n) && n > 0 ? n : 0;
  };
  const typeError = (code, msg) => P.ObjectAssign(new TypeError(msg), { code });
  const isView = (v) => P.ArrayBufferIsView(v);
  const bytesOf = (v) => {
    if (P.isInstance(v, P.ArrayBuffer)) return new Uint8Array(v);
    if (isView(v)) return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
    return null;
  };

  // ---- DOMException -----------------------------------------------------
  const domCodes = {
    IndexSizeError: 1, NotFoundError: 8, NotSupportedError: 9, InvalidStateError: 11, SyntaxError: 12,
    InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19, AbortError: 20,
    URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23, DataCloneError: 25, InvalidCharacterError: 5,
  };
  class DOMException extends Error {
    constructor(message = '', options = 'Error') {
      super(String(message));
      const name = options !== null && typeof options === 'object' ? String(options.name || 'Error') : String(options);
      P.ObjectDefineProperty(this, 'name', { value: name, writable: true, configurable: true, enumerable: false });
      if (options !== null && typeof options === 'object' && 'cause' in options) {
        P.ObjectDefineProperty(this, 'cause', { value: options.cause, writable: true, configurable: true });
      }
    }
    get code() {
      return domCodes[this.name] || 0;
    }
  }
  define('DOMException', DOMException);

  // ---- Buffer, URL ------------------------------------------------------
  let bufferModule;
  // internal.buffer is the buffer module's exports, made once.
  internal.buffer = () => {
    if (bufferModule !== undefined) return bufferModule;
    const exports = host.goModule('buffer');
    extendBuffer(exports.Buffer);
    exports.kMaxLength = maxBytes;
    exports.constants = { MAX_LENGTH: maxBytes, MAX_STRING_LENGTH: host.maxStringLength };
    exports.Blob = Blob;
    exports.File = File;
    exports.atob = globalThis.atob;
    exports.btoa = globalThis.btoa;
    exports.isUtf8 = (input) => {
      try {
        host.utf8Decode(input, true, true);
        return true;
      } catch (e) {
        return false;
      }
    };
    bufferModule = exports;
    return exports;
  };
  let urlModule;
  internal.url = () => {
    if (urlModule === undefined) {
      urlModule = host.goModule('url');
      extendURL(urlModule.URL, urlModule.URLSearchParams);
    }
    return urlModule;
  };
  lazy('Buffer', () => internal.buffer().Buffer);
  lazy('URL', () => internal.url().URL);
  lazy('URLSearchParams', () => internal.url().URLSearchParams);

  const customInspect = P.SymbolFor('nodejs.util.inspect.custom');
  const hidden = (obj, key, value) => P.ObjectDefineProperty(obj, key, { value, writable: true, configurable: true, enumerable: false });
  // extendURL gives goja_nodejs's classes their names, Node's rendering
  // and the statics it lacks.
  function extendURL(URL, URLSearchParams) {
    P.ObjectDefineProperty(URL, 'name', { value: 'URL', configurable: true });
    P.ObjectDefineProperty(URLSearchParams, 'name', { value: 'URLSearchParams', configurable: true });
    hidden(URL, 'canParse', (input, base) => {
      try {
        new URL(input, base); // eslint-disable-line no-new
        return true;
      } catch (e) {
        return false;
      }
    });
    hidden(URL, 'parse', (input, base) => {
      try {
        return new URL(input, base);
      } catch (e) {
        return null;
      }
    });
    // goja_nodejs calls forEach's callback with (name, value); the
    // standard's order is (value, name).
    hidden(URLSearchParams.prototype, 'forEach', function forEach(callback, thisArg) {
      if (typeof callback !== 'function') throw typeError('ERR_INVALID_ARG_TYPE', 'The "callback" argument must be of type function');
      for (const [name, value] of this.entries()) P.FunctionPrototypeCall(callback, thisArg, value, name, this);
    });
    const keys = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname', 'search', 'searchParams', 'hash'];
    hidden(URL.prototype, customInspect, function (depth, options) {
      const o = {};
      for (const k of keys) o[k] = this[k];
      return 'URL ' + internal.inspect(o, options);
    });
    hidden(URLSearchParams.prototype, customInspect, function () {
      const parts = [];
      this.forEach((v, k) => P.arrayPush(parts, `${internal.inspect(k)} => ${internal.inspect(v)}`));
      return parts.length === 0 ? 'URLSearchParams {}' : `URLSearchParams { ${parts.join(', ')} }`;
    });
    hidden(URL.prototype, Symbol.toStringTag, 'URL');
    hidden(URLSearchParams.prototype, Symbol.toStringTag, 'URLSearchParams');
  }
  // Encodings goja_nodejs's Buffer lacks, done by the host.
  const hostEncodings = new P.SafeSet(['latin1', 'binary', 'ascii', 'utf16le', 'ucs2', 'base64url']);
  const encodingOf = (e) => {
    if (typeof e !== 'string') return e;
    const l = e.toLowerCase();
    return l === 'ucs-2' ? 'ucs2' : l === 'utf-16le' ? 'utf16le' : l;
  };
  function extendBuffer(Buffer) {
    // indexIterator is an array's [Symbol.iterator] that goes by index, for
    // lists handed to native code that reads them with for...of.
    function indexIterator() {
      const list = this;
      let i = 0;
      return { next: () => (i < list.length ? { value: list[i++], done: false } : { value: undefined, done: true }) };
    }
    const rawFrom = Buffer.from;
    const from = function (value, enc, ...rest) {
      if (typeof value === 'string') {
        enc = encodingOf(enc);
        if (hostEncodings.has(enc)) return apply(rawFrom, this, [host.encodeText(value, enc)]);
        if (enc !== undefined && enc !== 'utf8' && enc !== 'utf-8' && enc !== 'hex' && enc !== 'base64') {
          throw typeError('ERR_UNKNOWN_ENCODING', `Unknown encoding: ${enc}`);
        }
      }
      if (P.ArrayIsArray(value)) {
        // The native from reads a list with the array iterator, which a
        // cell can replace: it gets the bytes by index instead.
        const bytes = new P.Uint8Array(value.length);
        for (let i = 0; i < value.length; i++) bytes[i] = value[i];
        value = bytes;
      }
      P.arrayUnshift(rest, value, enc);
      return apply(rawFrom, this, rest);
    };
    const toString = Buffer.prototype.toString;
    P.ObjectDefineProperty(Buffer.prototype, 'toString', {
      value: function toString_(enc, start, end) {
        enc = encodingOf(enc);
        // The text is made in native code: at most two bytes per byte.
        const from = start === undefined ? 0 : P.MathMax(0, P.MathTrunc(start) || 0);
        const to = end === undefined ? this.length : P.MathMin(this.length, P.MathTrunc(end) || 0);
        const n = 2 * P.MathMax(0, to - from);
        if (n > maxBytes) {
          throw P.ObjectAssign(new RangeError(`Cannot create a string longer than ${P.MathFloor(maxBytes / 2)} characters (the session's memory limit): ` +
            'convert the buffer in parts (buf.subarray(start, end).toString())'), { code: 'ERR_STRING_TOO_LONG' });
        }
        if (n >= reserveFrom) host.reserve(n);
        if (hostEncodings.has(enc)) return host.decodeText(this.subarray(start, end), enc);
        return apply(toString, this, [enc, start, end]);
      },
      writable: true,
      configurable: true,
    });
    const alloc = Buffer.alloc;
    const concat = Buffer.concat;
    const proto = Buffer.prototype;
    const statics = {
      from(value, ...rest) {
        if (typeof value === 'string') want(value.length * 3);
        else if (isView(value)) want(value.byteLength);
        else if (value !== null && typeof value === 'object' && !(P.isInstance(value, P.ArrayBuffer)) && !isView(value)) {
          want(toLength(value.length));
        }
        P.arrayUnshift(rest, value);
        return apply(from, this, rest);
      },
      alloc(size, ...rest) {
        if (typeof size !== 'number') throw typeError('ERR_INVALID_ARG_TYPE', `The "size" argument must be of type number. Received ${internal.inspect(size)}`);
        if (size < 0 || size > maxBytes || !P.NumberIsFinite(size)) {
          throw P.ObjectAssign(new RangeError(`The value of "size" is out of range. It must be >= 0 && <= ${maxBytes}. Received ${size}`), { code: 'ERR_OUT_OF_RANGE' });
        }
        want(size);
        P.arrayUnshift(rest, size);
        return apply(alloc, this, rest);
      },
      allocUnsafe(size) {
        return Buffer.alloc(size);
      },
      allocUnsafeSlow(size) {
        return Buffer.alloc(size);
      },
      concat(list, totalLength) {
        if (!P.ArrayIsArray(list)) throw typeError('ERR_INVALID_ARG_TYPE', 'The "list" argument must be an instance of Array');
        let n = 0;
        for (let i = 0; i < list.length; i++) n += list[i] && list[i].length ? list[i].length : 0;
        want(totalLength === undefined ? n : toLength(totalLength));
        for (let i = 0; i < list.length; i++) {
          if (!isView(list[i])) {
            throw typeError('ERR_INVALID_ARG_TYPE', `The "list[${i}]" argument must be an instance of Buffer or Uint8Array.`);
          }
        }
        // The native concat reads the list with for...of: it gets a copy
        // whose own iterator goes by index, not the array iterator, which
        // a cell can replace.
        const copy = P.arraySlice(list);
        P.ObjectDefineProperty(copy, P.SymbolIterator, { value: indexIterator });
        return apply(concat, this, totalLength === undefined ? [copy] : [copy, totalLength]);
      },
      isBuffer(b) {
        return b instanceof Buffer;
      },
      isEncoding(enc) {
        return typeof enc === 'string' && ['utf8', 'utf-8', 'hex', 'base64', 'base64url', 'ascii', 'latin1', 'binary', 'ucs2', 'ucs-2', 'utf16le', 'utf-16le']
          .includes(enc.toLowerCase());
      },
      byteLength(value, encoding) {
        if (typeof value !== 'string') {
          if (P.isInstance(value, P.ArrayBuffer) || isView(value)) return value.byteLength;
          throw typeError('ERR_INVALID_ARG_TYPE', 'The "string" argument must be of type string or an instance of Buffer or ArrayBuffer.');
        }
        return Buffer.from(value, encoding).length;
      },
      compare(a, b) {
        return compareBytes(a, b);
      },
    };
    const staticKeys = P.ObjectKeys(statics);
    for (let i = 0; i < staticKeys.length; i++) {
      P.ObjectDefineProperty(Buffer, staticKeys[i], { value: statics[staticKeys[i]], writable: true, configurable: true, enumerable: false });
    }
    const methods = {
      slice(start, end) {
        return this.subarray(start, end);
      },
      toJSON() {
        const data = [];
        for (let i = 0; i < this.length; i++) P.arrayPush(data, this[i]);
        return { type: 'Buffer', data };
      },
      compare(target, ...range) {
        const [ts = 0, te = target.length, ss = 0, se = this.length] = range;
        return compareBytes(this.subarray(ss, se), target.subarray(ts, te));
      },
      copy(target, targetStart = 0, sourceStart = 0, sourceEnd = this.length) {
        const src = this.subarray(sourceStart, sourceEnd);
        const n = P.MathMax(0, P.MathMin(src.length, target.length - targetStart));
        target.set(n === src.length ? src : src.subarray(0, n), targetStart);
        return n;
      },
      indexOf(value, byteOffset = 0, encoding) {
        return indexOfBytes(this, value, byteOffset, encoding);
      },
      includes(value, byteOffset = 0, encoding) {
        return indexOfBytes(this, value, byteOffset, encoding) !== -1;
      },
      [customInspect]() {
        const max = 50;
        let s = '';
        for (let i = 0; i < P.MathMin(this.length, max); i++) s += ' ' + (this[i] < 16 ? '0' : '') + this[i].toString(16);
        if (this.length > max) s += ` ... ${this.length - max} more byte${this.length - max > 1 ? 's' : ''}`;
        return `<Buffer${s}>`;
      },
    };
    const methodKeys = P.ReflectOwnKeys(methods);
    for (let i = 0; i < methodKeys.length; i++) {
      P.ObjectDefineProperty(proto, methodKeys[i], { value: methods[methodKeys[i]], writable: true, configurable: true, enumerable: false });
    }
    const slicers = ['latin1Slice', 'hexSlice', 'utf8Slice', 'base64Slice', 'asciiSlice'];
    for (let i = 0; i < slicers.length; i++) {
      const name = slicers[i];
      const enc = P.StringPrototypeSlice(name, 0, -5);
      P.ObjectDefineProperty(proto, name, {
        value(start, end) {
          return this.toString(enc, start, end);
        },
        writable: true,
        configurable: true,
      });
    }
    function compareBytes(a, b) {
      const n = P.MathMin(a.length, b.length);
      for (let i = 0; i < n; i++) {
        if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
      }
      return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
    }
    function indexOfBytes(buf, value, offset, encoding) {
      if (typeof offset === 'string') {
        encoding = offset;
        offset = 0;
      }
      if (offset < 0) offset = P.MathMax(0, buf.length + offset);
      if (typeof value === 'number') return P.TypedArrayPrototypeIndexOf(buf, value & 255, offset);
      const needle = typeof value === 'string' ? Buffer.from(value, encoding) : value;
      if (needle.length === 0) return P.MathMin(offset, buf.length);
      outer: for (let i = offset; i <= buf.length - needle.length; i++) {
        for (let j = 0; j < needle.length; j++) {
          if (buf[i + j] !== needle[j]) continue outer;
        }
        return i;
      }
      return -1;
    }
  }

  // ---- TextEncoder, TextDecoder, atob, btoa -----------------------------
  class TextEncoder {
    get encoding() {
      return 'utf-8';
    }
    encode(input = '') {
      return new Uint8Array(host.utf8Encode(String(input)));
    }
    encodeInto(source, destination) {
      const bytes = this.encode(source);
      let n = P.MathMin(bytes.length, destination.length);
      // Only whole characters: back off a cut sequence.
      if (n < bytes.length) while (n > 0 && (bytes[n] & 0xc0) === 0x80) n--;
      destination.set(bytes.subarray(0, n));
      const read = host.utf8Decode(bytes.subarray(0, n), false, true).length;
      return { read, written: n };
    }
  }
  const utf8Labels = ['utf-8', 'utf8', 'unicode-1-1-utf-8'];
  const otherLabels = { 'utf-16le': 'utf16le', 'utf-16': 'utf16le', latin1: 'latin1', 'iso-8859-1': 'latin1', ascii: 'latin1', 'us-ascii': 'latin1', 'windows-1252': 'latin1' };
  class TextDecoder {
    #encoding;
    #fatal;
    #ignoreBOM;
    #pending = null;
    constructor(label = 'utf-8', options = {}) {
      const l = String(label).trim().toLowerCase();
      if (P.ArrayPrototypeIncludes(utf8Labels, l)) this.#encoding = 'utf-8';
      else if (otherLabels[l]) this.#encoding = l === 'utf-16' ? 'utf-16le' : l;
      else throw new RangeError(`The "${label}" encoding is not supported (utf-8, utf-16le and latin1 are)`);
      this.#fatal = !!(options && options.fatal);
      this.#ignoreBOM = !!(options && options.ignoreBOM);
    }
    get encoding() {
      return this.#encoding;
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input, options = {}) {
      let bytes = input === undefined ? new Uint8Array(0) : bytesOf(input);
      if (bytes === null) {
        throw typeError('ERR_INVALID_ARG_TYPE', 'The "input" argument must be an instance of ArrayBuffer or ArrayBufferView.');
      }
      if (this.#pending !== null) {
        const joined = new Uint8Array(this.#pending.length + bytes.length);
        joined.set(this.#pending);
        joined.set(bytes, this.#pending.length);
        bytes = joined;
        this.#pending = null;
      }
      if (options && options.stream && this.#encoding === 'utf-8') {
        // Keep a sequence cut at the end for the next call.
        let i = bytes.length;
        let k = 0;
        while (i > 0 && k < 3 && (bytes[i - 1] & 0xc0) === 0x80) {
          i--;
          k++;
        }
        if (i > 0) {
          const lead = bytes[i - 1];
          const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
          if (need > 1 && need > k + 1) {
            this.#pending = bytes.slice(i - 1);
            bytes = bytes.subarray(0, i - 1);
          }
        }
      }
      if (this.#encoding === 'utf-8') return host.utf8Decode(bytes, this.#fatal, this.#ignoreBOM);
      return internal.buffer().Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString(otherLabels[this.#encoding] || this.#encoding.replace('-', ''));
    }
  }
  define('TextEncoder', TextEncoder);
  define('TextDecoder', TextDecoder);
  define('atob', function atob(data) {
    return P.ReflectApply(host.atob, host, arguments);
  });
  define('btoa', function btoa(data) {
    return P.ReflectApply(host.btoa, host, arguments);
  });

  // ---- structuredClone --------------------------------------------------
  const cloneError = (what) => new DOMException(`${what} could not be cloned.`, 'DataCloneError');
  const errorTypes = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  function structuredClone(value, options) {
    if (arguments.length === 0) throw new TypeError('The "value" argument must be specified');
    const seen = new P.SafeMap();
    const clone = (v) => {
      if (v === null || (typeof v !== 'object' && typeof v !== 'function')) {
        if (typeof v === 'symbol') throw cloneError(String(v));
        return v;
      }
      if (typeof v === 'function') throw cloneError(String(v).slice(0, 60));
      if (seen.has(v)) return seen.get(v);
      let out;
      const tag = P.StringPrototypeSlice(P.ObjectPrototypeToString(v), 8, -1);
      if (P.isInstance(v, P.Date)) out = new Date(v.getTime());
      else if (P.isInstance(v, P.RegExp)) out = new RegExp(v.source, v.flags);
      else if (P.isInstance(v, P.ArrayBuffer)) {
        want(v.byteLength);
        out = v.slice(0);
      }
      else if (isView(v)) {
        const buf = clone(v.buffer);
        const Ctor = P.isInstance(v, P.DataView) ? DataView : P.ObjectGetPrototypeOf(P.ObjectGetPrototypeOf(v)) === Uint8Array.prototype ? Uint8Array : v.constructor;
        out = Ctor === DataView ? new DataView(buf, v.byteOffset, v.byteLength) : new Ctor(buf, v.byteOffset, v.length);
      } else if (P.isInstance(v, P.Map)) {
        out = new P.Map();
        seen.set(v, out);
        const { set } = P.SafeMap.prototype; // Map's, which a cell cannot replace
        const entries = P.mapEntries(v);
        for (let i = 0; i < entries.length; i++) P.FunctionPrototypeCall(set, out, clone(entries[i][0]), clone(entries[i][1]));
        return out;
      } else if (P.isInstance(v, P.Set)) {
        out = new P.Set();
        seen.set(v, out);
        const { add } = P.SafeSet.prototype;
        const values = P.setValues(v);
        for (let i = 0; i < values.length; i++) P.FunctionPrototypeCall(add, out, clone(values[i]));
        return out;
      } else if (P.isInstance(v, P.Error)) {
        const Ctor = errorTypes[v.name] || Error;
        out = new Ctor(v.message);
        if (v.stack !== undefined) P.ObjectDefineProperty(out, 'stack', { value: v.stack, writable: true, configurable: true });
        if ('cause' in v) out.cause = clone(v.cause);
      } else if (P.isInstance(v, P.Boolean) || P.isInstance(v, P.Number) || P.isInstance(v, P.String)) {
        out = Object(v.valueOf());
      } else if (v instanceof Blob) {
        out = v.slice(0, v.size, v.type);
      } else if (P.ArrayIsArray(v)) {
        out = new P.Array(v.length);
        seen.set(v, out);
        const keys = P.ObjectKeys(v);
        for (let i = 0; i < keys.length; i++) P.arraySet(out, keys[i], clone(v[keys[i]]));
        return out;
      } else if (tag === 'Object' || tag === 'Arguments' || P.ObjectGetPrototypeOf(v) !== null) {
        if (P.isInstance(v, P.Promise) || P.isInstance(v, P.WeakMap) || P.isInstance(v, P.WeakSet) || (typeof WeakRef === 'function' && v instanceof WeakRef) ||
            tag === 'Symbol' || (typeof Proxy === 'function' && tag === 'Function')) {
          throw cloneError(`#<${tag}>`);
        }
        out = {};
        seen.set(v, out);
        const keys = P.ObjectKeys(v);
        for (let i = 0; i < keys.length; i++) out[keys[i]] = clone(v[keys[i]]);
        return out;
      } else {
        out = {};
        seen.set(v, out);
        const keys = P.ObjectKeys(v);
        for (let i = 0; i < keys.length; i++) out[keys[i]] = clone(v[keys[i]]);
        return out;
      }
      seen.set(v, out);
      return out;
    };
    if (options !== undefined && options !== null && options.transfer !== undefined && !P.ArrayIsArray(options.transfer)) {
      throw new TypeError('structuredClone: options.transfer must be an array');
    }
    return clone(value);
  }
  define('structuredClone', structuredClone);

  // ---- Event, EventTarget, AbortController, AbortSignal -----------------
  const kStop = Symbol('stop');
  class Event {
    #type;
    #bubbles;
    #cancelable;
    #composed;
    #defaultPrevented = false;
    #timeStamp = performance.now();
    constructor(type, options = {}) {
      if (arguments.length === 0) throw new TypeError('The "type" argument must be specified');
      this.#type = String(type);
      this.#bubbles = !!(options && options.bubbles);
      this.#cancelable = !!(options && options.cancelable);
      this.#composed = !!(options && options.composed);
      this.target = null;
      this.currentTarget = null;
      this[kStop] = false;
    }
    get type() {
      return this.#type;
    }
    get bubbles() {
      return this.#bubbles;
    }
    get cancelable() {
      return this.#cancelable;
    }
    get composed() {
      return this.#composed;
    }
    get defaultPrevented() {
      return this.#defaultPrevented;
    }
    get timeStamp() {
      return this.#timeStamp;
    }
    get isTrusted() {
      return false;
    }
    preventDefault() {
      if (this.#cancelable) this.#defaultPrevented = true;
    }
    stopPropagation() {}
    stopImmediatePropagation() {
      this[kStop] = true;
    }
  }
  class CustomEvent extends Event {
    #detail;
    constructor(type, options = {}) {
      super(type, options);
      this.#detail = options && options.detail !== undefined ? options.detail : null;
    }
    get detail() {
      return this.#detail;
    }
  }
  const kListeners = Symbol('listeners');
  class EventTarget {
    constructor() {
      P.ObjectDefineProperty(this, kListeners, { value: new P.SafeMap() });
    }
    addEventListener(type, listener, options) {
      if (listener === null || listener === undefined) return;
      const once = typeof options === 'object' && options !== null && !!options.once;
      const signal = typeof options === 'object' && options !== null ? options.signal : undefined;
      if (signal && signal.aborted) return;
      let list = this[kListeners].get(type);
      if (!list) this[kListeners].set(type, (list = []));
      if (list.some((l) => l.listener === listener)) return;
      const entry = { listener, once };
      P.arrayPush(list, entry);
      if (signal) signal.addEventListener('abort', () => this.removeEventListener(type, listener), { once: true });
    }
    removeEventListener(type, listener) {
      const list = this[kListeners].get(type);
      if (!list) return;
      const i = list.findIndex((l) => l.listener === listener);
      if (i >= 0) list.splice(i, 1);
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw typeError('ERR_INVALID_ARG_TYPE', 'The "event" argument must be an instance of Event.');
      event.target = this;
      event.currentTarget = this;
      const list = P.arraySlice(this[kListeners].get(event.type) || []);
      const handler = this['on' + event.type];
      for (let i = 0; i < list.length; i++) {
        const entry = list[i];
        if (entry.once) this.removeEventListener(event.type, entry.listener);
        const fn = entry.listener;
        try {
          if (typeof fn === 'function') P.FunctionPrototypeCall(fn, this, event);
          else if (fn && typeof fn.handleEvent === 'function') fn.handleEvent(event);
        } catch (e) {
          queueMicrotask(() => {
            throw e;
          });
        }
        if (event[kStop]) break;
      }
      if (typeof handler === 'function' && !event[kStop] && this instanceof AbortSignal) {
        // onabort runs after the listeners (it was added first in browsers,
        // but no code depends on that).
      }
      event.currentTarget = null;
      return !event.defaultPrevented;
    }
  }
  const kAbort = Symbol('abort');
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    constructor(key) {
      if (key !== kAbort) throw new TypeError('Illegal constructor');
      super();
      this.onabort = null;
    }
    get aborted() {
      return this.#aborted;
    }
    get reason() {
      return this.#reason;
    }
    throwIfAborted() {
      if (this.#aborted) throw this.#reason;
    }
    [kAbort](reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
      const event = new Event('abort');
      if (typeof this.onabort === 'function') {
        try {
          P.FunctionPrototypeCall(this.onabort, this, event);
        } catch (e) {
          queueMicrotask(() => {
            throw e;
          });
        }
      }
      this.dispatchEvent(event);
    }
    [customInspect]() {
      return `AbortSignal { aborted: ${this.#aborted} }`;
    }
    static abort(reason) {
      const s = new AbortSignal(kAbort);
      s[kAbort](reason);
      return s;
    }
    static timeout(ms) {
      const s = new AbortSignal(kAbort);
      const t = setTimeout(() => s[kAbort](new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
      if (t && typeof t.unref === 'function') t.unref();
      return s;
    }
    static any(signals) {
      const s = new AbortSignal(kAbort);
      for (const x of signals) {
        if (x.aborted) {
          s[kAbort](x.reason);
          return s;
        }
      }
      for (const x of signals) x.addEventListener('abort', () => s[kAbort](x.reason), { once: true });
      return s;
    }
  }
  class AbortController {
    #signal = new AbortSignal(kAbort);
    get signal() {
      return this.#signal;
    }
    abort(reason) {
      this.#signal[kAbort](reason);
    }
    [customInspect]() {
      return `AbortController { signal: AbortSignal { aborted: ${this.#signal.aborted} } }`;
    }
  }
  define('Event', Event);
  define('CustomEvent', CustomEvent);
  define('EventTarget', EventTarget);
  define('AbortSignal', AbortSignal);
  define('AbortController', AbortController);

  // ---- crypto -----------------------------------------------------------
  const integerArrays = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'];
  function getRandomValues(array) {
    const tag = isView(array) && !(P.isInstance(array, P.DataView)) ? P.ObjectPrototypeToString(array).slice(8, -1) : '';
    if (!integerArrays.includes(tag)) {
      throw new DOMException('The data argument must be an integer-type TypedArray', 'TypeMismatchError');
    }
    if (array.byteLength > 65536) {
      throw new DOMException(`The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`, 'QuotaExceededError');
    }
    host.randomFill(array);
    return array;
  }
  function randomUUID() {
    const b = new Uint8Array(16);
    host.randomFill(b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let s = '';
    for (let i = 0; i < 16; i++) {
      s += (b[i] < 16 ? '0' : '') + b[i].toString(16);
      if (i === 3 || i === 5 || i === 7 || i === 9) s += '-';
    }
    return s;
  }
  const subtle = P.ObjectFreeze({
    digest(algorithm, data) {
      try {
        const name = typeof algorithm === 'string' ? algorithm : algorithm && algorithm.name;
        const bytes = bytesOf(data);
        if (bytes === null) throw new TypeError('SubtleCrypto.digest: data must be an ArrayBuffer or a view of one');
        if (!['sha-1', 'sha-256', 'sha-384', 'sha-512'].includes(String(name).toLowerCase())) {
          throw new DOMException(`Unrecognized algorithm name: ${name} (SHA-1, SHA-256, SHA-384 and SHA-512 are)`, 'NotSupportedError');
        }
        return P.PromiseResolve(host.digest(String(name), [bytes]));
      } catch (e) {
        return P.PromiseReject(e);
      }
    },
  });
  const crypto = {};
  P.ObjectDefineProperties(crypto, {
    getRandomValues: { value: getRandomValues, enumerable: true },
    randomUUID: { value: randomUUID, enumerable: true },
    subtle: { value: subtle, enumerable: true },
  });
  internal.crypto = crypto;
  define('crypto', crypto);

  // ---- Blob, File -------------------------------------------------------
  const kBytes = Symbol('bytes');
  const encoder = new TextEncoder();
  class Blob {
    #type;
    constructor(parts = [], options = {}) {
      if (parts === null || typeof parts !== 'object' || typeof parts[Symbol.iterator] !== 'function') {
        throw typeError('ERR_INVALID_ARG_TYPE', 'The "sources" argument must be a sequence.');
      }
      const chunks = [];
      let n = 0;
      for (const p of parts) {
        let b;
        if (p instanceof Blob) b = p[kBytes];
        else if (P.isInstance(p, P.ArrayBuffer) || isView(p)) b = bytesOf(p).slice();
        else b = encoder.encode(String(p));
        P.arrayPush(chunks, b);
        n += b.length;
      }
      want(n);
      const all = new Uint8Array(n);
      let off = 0;
      for (const c of chunks) {
        all.set(c, off);
        off += c.length;
      }
      P.ObjectDefineProperty(this, kBytes, { value: all });
      const type = options && options.type !== undefined ? String(options.type) : '';
      this.#type = /^[\x20-\x7e]*$/.test(type) ? type.toLowerCase() : '';
    }
    get size() {
      return this[kBytes].length;
    }
    get type() {
      return this.#type;
    }
    text() {
      return P.PromiseResolve(host.utf8Decode(this[kBytes], false, false));
    }
    arrayBuffer() {
      return P.PromiseResolve(this[kBytes].slice().buffer);
    }
    bytes() {
      return P.PromiseResolve(this[kBytes].slice());
    }
    slice(start = 0, end = this.size, type = '') {
      return new Blob([this[kBytes].slice(start, end)], { type });
    }
    get [Symbol.toStringTag]() {
      return 'Blob';
    }
    [customInspect](depth, options) {
      return `${this instanceof File ? 'File' : 'Blob'} ${internal.inspect(this instanceof File ? { name: this.name, size: this.size, type: this.type } : { size: this.size, type: this.type }, options)}`;
    }
  }
  class File extends Blob {
    #name;
    #lastModified;
    constructor(parts, name, options = {}) {
      if (arguments.length < 2) throw new TypeError('The "fileName" argument must be specified');
      super(parts, options);
      this.#name = String(name);
      this.#lastModified = options && options.lastModified !== undefined ? Number(options.lastModified) : P.DateNow();
    }
    get name() {
      return this.#name;
    }
    get lastModified() {
      return this.#lastModified;
    }
    get [Symbol.toStringTag]() {
      return 'File';
    }
  }
  define('Blob', Blob);
  define('File', File);

  // ---- FormData ---------------------------------------------------------
  // Entries are [name, value] with value a string or a File (a Blob
  // becomes a File named "blob"), in insertion order. As a Request or
  // Response body it is multipart/form-data; body.formData() reads that
  // back, and application/x-www-form-urlencoded.
  const kEntries = Symbol('entries');
  const formValue = (value, filename) => {
    if (value instanceof Blob) {
      if (!(value instanceof File) || filename !== undefined) {
        const name = filename !== undefined ? String(filename) : value instanceof File ? value.name : 'blob';
        return new File([value], name, { type: value.type, lastModified: value instanceof File ? value.lastModified : undefined });
      }
      return value;
    }
    return String(value);
  };
  class FormData {
    constructor(form) {
      if (form !== undefined && form !== null) {
        throw new TypeError("FormData constructor: there are no HTML forms in the sandbox; call new FormData() and append() its entries");
      }
      P.ObjectDefineProperty(this, kEntries, { value: [] });
    }
    append(name, value, filename) {
      if (arguments.length < 2) throw new TypeError(`FormData.append: 2 arguments required, but only ${arguments.length} present.`);
      P.arrayPush(this[kEntries], [String(name), formValue(value, filename)]);
    }
    set(name, value, filename) {
      if (arguments.length < 2) throw new TypeError(`FormData.set: 2 arguments required, but only ${arguments.length} present.`);
      name = String(name);
      const entry = [name, formValue(value, filename)];
      const list = this[kEntries];
      const i = list.findIndex((e) => e[0] === name);
      if (i < 0) {
        P.arrayPush(list, entry);
        return;
      }
      list[i] = entry;
      for (let j = list.length - 1; j > i; j--) if (list[j][0] === name) list.splice(j, 1);
    }
    get(name) {
      name = String(name);
      const e = this[kEntries].find((x) => x[0] === name);
      return e ? e[1] : null;
    }
    getAll(name) {
      name = String(name);
      return this[kEntries].filter((x) => x[0] === name).map((x) => x[1]);
    }
    has(name) {
      name = String(name);
      return this[kEntries].some((x) => x[0] === name);
    }
    delete(name) {
      name = String(name);
      const list = this[kEntries];
      for (let i = list.length - 1; i >= 0; i--) if (list[i][0] === name) list.splice(i, 1);
    }
    forEach(callback, thisArg) {
      for (const [k, v] of this) P.FunctionPrototypeCall(callback, thisArg, v, k, this);
    }
    *entries() {
      for (const [k, v] of this[kEntries].slice()) yield [k, v];
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    get [Symbol.toStringTag]() {
      return 'FormData';
    }
    [customInspect](depth, options) {
      return 'FormData ' + internal.inspect(this[kEntries].map(([k, v]) => ({ name: k, value: v })), options);
    }
  }
  define('FormData', FormData);
  // multipart encodes a FormData as multipart/form-data, with a boundary
  // from the session's randomness.
  const multipart = (form) => {
    const hex = P.ArrayFrom(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
    const boundary = '----wasmevalFormBoundary' + hex;
    const esc = (v) => v.replace(/\r\n|\r|\n/g, '\r\n');
    const escName = (v) => v.replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/"/g, '%22');
    const parts = [];
    for (const [name, value] of form[kEntries]) {
      if (typeof value === 'string') {
        P.arrayPush(parts, `--${boundary}\r\nContent-Disposition: form-data; name="${escName(name)}"\r\n\r\n${esc(value)}\r\n`);
      } else {
        P.arrayAppend(parts, `--${boundary}\r\nContent-Disposition: form-data; name="${escName(name)}"; filename="${escName(value.name)}"\r\n` +
          `Content-Type: ${value.type || 'application/octet-stream'}\r\n\r\n`, value, '\r\n');
      }
    }
    P.arrayPush(parts, `--${boundary}--\r\n`);
    return [new Blob(parts)[kBytes], 'multipart/form-data; boundary=' + boundary];
  };
  // parseForm reads a body of contentType back as FormData.
  const parseForm = (bytes, contentType) => {
    const type = String(contentType || '');
    const form = new FormData();
    if (/^application\/x-www-form-urlencoded\b/i.test(type)) {
      for (const [k, v] of new URLSearchParams(host.utf8Decode(bytes, false, false))) form.append(k, v);
      return form;
    }
    const m = /^multipart\/form-data\b.*;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
    if (!m) throw new TypeError(`Could not parse content as FormData: the content type is ${type ? P.JSONStringify(type) : 'missing'}, not multipart/form-data or application/x-www-form-urlencoded`);
    // Parts are split as latin1 text, one character per byte.
    const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');
    const delim = '--' + (m[1] || m[2]);
    const sections = text.split(delim);
    for (let i = 1; i < sections.length; i++) {
      let sec = sections[i];
      if (sec.startsWith('--')) break;
      if (sec.startsWith('\r\n')) sec = sec.slice(2);
      const end = sec.indexOf('\r\n\r\n');
      if (end < 0) throw new TypeError('Could not parse content as FormData: a part has no blank line after its headers');
      const head = sec.slice(0, end);
      let body = sec.slice(end + 4);
      if (body.endsWith('\r\n')) body = body.slice(0, -2);
      const name = /name="([^"]*)"/i.exec(head);
      if (!name) throw new TypeError('Could not parse content as FormData: a part has no name');
      const filename = /filename="([^"]*)"/i.exec(head);
      const ctype = /^content-type:\s*(.*)$/im.exec(head);
      const raw = new Uint8Array(Buffer.from(body, 'latin1'));
      if (filename) form.append(name[1], new File([raw], filename[1], { type: ctype ? ctype[1].trim() : '' }));
      else form.append(name[1], host.utf8Decode(raw, false, false));
    }
    return form;
  };

  // Browser-style names for the global object and the agent.
  define('self', globalThis);
  lazy('navigator', () => P.ObjectFreeze({
    userAgent: 'wasmeval', language: 'en-US', languages: P.ObjectFreeze(['en-US']),
    hardwareConcurrency: 1, platform: host.platform, onLine: false,
  }));

  // ---- Headers, Request, Response, fetch --------------------------------
  const kMap = Symbol('headers');
  const headerName = (name) => {
    const n = String(name);
    if (!P.RegExpPrototypeTest(/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, n)) throw new TypeError(`Header name must be a valid HTTP token ["${n}"]`);
    return n.toLowerCase();
  };
  const headerValue = (v) => P.regExpReplace(String(v), /^[\t\n\r ]+|[\t\n\r ]+$/g, () => '');
  class Headers {
    constructor(init) {
      P.ObjectDefineProperty(this, kMap, { value: new P.SafeMap() });
      if (init === undefined || init === null) return;
      if (init instanceof Headers) {
        for (const [k, v] of init[kMap]) this[kMap].set(k, v.slice());
      } else if (typeof init[Symbol.iterator] === 'function') {
        for (const pair of init) {
          const p = P.ArrayFrom(pair);
          if (p.length !== 2) throw new TypeError('Headers constructor: expected name/value pair to be length 2, found ' + p.length);
          this.append(p[0], p[1]);
        }
      } else if (typeof init === 'object') {
        const keys = P.ObjectKeys(init);
        for (let i = 0; i < keys.length; i++) this.append(keys[i], init[keys[i]]);
      } else {
        throw new TypeError('Headers constructor: the init must be an object, an array of pairs or Headers');
      }
    }
    append(name, value) {
      const k = headerName(name);
      const list = this[kMap].get(k);
      if (list) P.arrayPush(list, headerValue(value));
      else this[kMap].set(k, [headerValue(value)]);
    }
    set(name, value) {
      this[kMap].set(headerName(name), [headerValue(value)]);
    }
    get(name) {
      const list = this[kMap].get(headerName(name));
      return list ? P.ArrayPrototypeJoin(list, ', ') : null;
    }
    getSetCookie() {
      return (this[kMap].get('set-cookie') || []).slice();
    }
    has(name) {
      return this[kMap].has(headerName(name));
    }
    delete(name) {
      this[kMap].delete(headerName(name));
    }
    forEach(callback, thisArg) {
      for (const [k, v] of this) P.FunctionPrototypeCall(callback, thisArg, v, k, this);
    }
    *entries() {
      const keys = [...this[kMap].keys()].sort();
      for (const k of keys) {
        if (k === 'set-cookie') for (const v of this[kMap].get(k)) yield [k, v];
        else yield [k, this[kMap].get(k).join(', ')];
      }
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    get [Symbol.toStringTag]() {
      return 'Headers';
    }
    [customInspect]() {
      return `Headers ${internal.inspect(P.ObjectFromEntries(this))}`;
    }
  }

  const kBody = Symbol('body');
  const kUsed = Symbol('used');
  // bodyOf turns a body init into bytes and the content type it implies.
  function bodyOf(body) {
    if (body === undefined || body === null) return [null, null];
    if (typeof body === 'string') return [encoder.encode(body), 'text/plain;charset=UTF-8'];
    if (body instanceof Blob) return [body[kBytes], body.type || null];
    if (P.isInstance(body, P.ArrayBuffer) || isView(body)) return [bytesOf(body).slice(), null];
    if (typeof URLSearchParams === 'function' && body instanceof URLSearchParams) {
      return [encoder.encode(body.toString()), 'application/x-www-form-urlencoded;charset=UTF-8'];
    }
    if (body instanceof FormData) return multipart(body);
    return [encoder.encode(String(body)), 'text/plain;charset=UTF-8'];
  }
  class Body {
    constructor(body, headers) {
      const [bytes, type] = bodyOf(body);
      P.ObjectDefineProperty(this, kBody, { value: bytes, writable: true });
      P.ObjectDefineProperty(this, kUsed, { value: false, writable: true });
      if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
    }
    get bodyUsed() {
      return this[kUsed];
    }
    // body is the bytes, not a ReadableStream: the sandbox has no streams.
    get body() {
      return this[kBody];
    }
    #take() {
      if (this[kUsed]) return P.PromiseReject(new TypeError('Body is unusable: Body has already been read'));
      this[kUsed] = true;
      return P.PromiseResolve(this[kBody] || new Uint8Array(0));
    }
    text() {
      return this.#take().then((b) => host.utf8Decode(b, false, false));
    }
    json() {
      return this.text().then((t) => P.JSONParse(t));
    }
    arrayBuffer() {
      return this.#take().then((b) => b.slice().buffer);
    }
    bytes() {
      return this.#take().then((b) => b.slice());
    }
    blob() {
      return this.#take().then((b) => new Blob([b], { type: this.headers.get('content-type') || '' }));
    }
    formData() {
      return this.#take().then((b) => parseForm(b, this.headers.get('content-type')));
    }
  }
  const methods = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH'];
  class Request extends Body {
    #url;
    #method;
    #headers;
    #signal;
    constructor(input, init = {}) {
      const from = input instanceof Request ? input : null;
      const url = from ? from.url : new URL(String(input)).href;
      const headers = new Headers(init.headers !== undefined ? init.headers : from ? from.headers : undefined);
      let method = init.method !== undefined ? String(init.method) : from ? from.method : 'GET';
      if (methods.includes(method.toUpperCase())) method = method.toUpperCase();
      const body = init.body !== undefined ? init.body : from ? from[kBody] : null;
      if (body !== null && body !== undefined && (method === 'GET' || method === 'HEAD')) {
        throw new TypeError('Request with GET/HEAD method cannot have body.');
      }
      super(body, headers);
      this.#url = url;
      this.#method = method;
      this.#headers = headers;
      this.#signal = init.signal || (from ? from.signal : new AbortController().signal);
    }
    get url() {
      return this.#url;
    }
    get method() {
      return this.#method;
    }
    get headers() {
      return this.#headers;
    }
    get signal() {
      return this.#signal;
    }
    clone() {
      if (this.bodyUsed) throw new TypeError('Request.clone: Body has already been consumed.');
      return new Request(this);
    }
    get [Symbol.toStringTag]() {
      return 'Request';
    }
    [customInspect](depth, options) {
      return 'Request ' + internal.inspect({ method: this.method, url: this.url, headers: this.headers, body: this[kBody], bodyUsed: this.bodyUsed }, options);
    }
  }
  class Response extends Body {
    #status;
    #statusText;
    #headers;
    #type;
    #url = '';
    constructor(body = null, init = {}) {
      const headers = new Headers(init.headers);
      const status = init.status === undefined ? 200 : Number(init.status);
      if (!P.NumberIsInteger(status) || status < 200 || status > 599) {
        throw new RangeError(`init["status"] must be in the range of 200 to 599, inclusive (got ${init.status})`);
      }
      if (body !== null && (status === 204 || status === 205 || status === 304)) {
        throw new TypeError(`Response constructor: Invalid response status code ${status}`);
      }
      super(body, headers);
      this.#status = status;
      this.#statusText = init.statusText === undefined ? '' : String(init.statusText);
      this.#headers = headers;
      this.#type = 'default';
    }
    get status() {
      return this.#status;
    }
    get statusText() {
      return this.#statusText;
    }
    get ok() {
      return this.#status >= 200 && this.#status <= 299;
    }
    get headers() {
      return this.#headers;
    }
    get type() {
      return this.#type;
    }
    get url() {
      return this.#url;
    }
    get redirected() {
      return false;
    }
    clone() {
      if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
      return new Response(this[kBody], { status: this.#status, statusText: this.#statusText, headers: this.#headers });
    }
    static json(data, init = {}) {
      const text = P.JSONStringify(data);
      if (text === undefined) throw new TypeError('Response.json: the data is not JSON-serializable');
      const headers = new Headers(init.headers);
      if (!headers.has('content-type')) headers.set('content-type', 'application/json');
      return new Response(text, P.ObjectAssign({}, init, { headers }));
    }
    static error() {
      const r = new Response(null, { status: 200 });
      r.#status = 0;
      r.#type = 'error';
      return r;
    }
    static redirect(url, status = 302) {
      if (![301, 302, 303, 307, 308].includes(status)) throw new RangeError(`Invalid status code ${status}`);
      return new Response(null, { status, headers: { location: new URL(String(url)).href } });
    }
    get [Symbol.toStringTag]() {
      return 'Response';
    }
    [customInspect](depth, options) {
      return 'Response ' + internal.inspect({ status: this.status, statusText: this.statusText, headers: this.headers, body: this[kBody], bodyUsed: this.bodyUsed, ok: this.ok, redirected: false, type: this.type, url: this.url }, options);
    }
  }
  define('Headers', Headers);
  define('Request', Request);
  define('Response', Response);

  // ---- Intl -----------------------------------------------------------------
  // goja has no Intl. This is a small one that formats as en-US whatever
  // locale is asked for (resolvedOptions().locale says so): NumberFormat
  // (and Number.prototype.toLocaleString), DateTimeFormat (and Date's
  // toLocale*String), Collator, PluralRules, ListFormat,
  // RelativeTimeFormat and Segmenter, with their common options.
  if (typeof globalThis.Intl !== 'object') {
    const locale = 'en-US';
    const supportedLocalesOf = () => [locale];
    const opt = (o, name, allowed, dflt) => {
      const v = o && o[name] !== undefined ? String(o[name]) : dflt;
      if (allowed && v !== undefined && !allowed.includes(v)) {
        throw new RangeError(`Value ${v} out of range for Intl options property ${name}`);
      }
      return v;
    };
    const digits = (o, name, lo, hi, dflt) => {
      if (!o || o[name] === undefined) return dflt;
      const n = Number(o[name]);
      if (!P.NumberIsInteger(n) || n < lo || n > hi) throw new RangeError(`${name} value is out of range.`);
      return n;
    };
    const symbols = { USD: '$', EUR: '€', GBP: '£', JPY: '¥', INR: '₹', CNY: 'CN¥', CAD: 'CA$', AUD: 'A$', KRW: '₩', BRL: 'R$', MXN: 'MX$', CHF: 'CHF\u00a0' };
    const group = (int) => int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');

    class NumberFormat {
      #o;
      constructor(locales, options = {}) {
        const o = options || {};
        const style = opt(o, 'style', ['decimal', 'percent', 'currency', 'unit'], 'decimal');
        const currency = style === 'currency' ? opt(o, 'currency') : undefined;
        if (style === 'currency' && !currency) throw new TypeError('Currency code is required with currency style.');
        const cur = currency ? currency.toUpperCase() : undefined;
        const curDigits = cur === 'JPY' || cur === 'KRW' ? 0 : 2;
        const minDefault = style === 'currency' ? curDigits : 0;
        const maxDefault = style === 'currency' ? curDigits : style === 'percent' ? 0 : 3;
        const minFD = digits(o, 'minimumFractionDigits', 0, 100, undefined);
        let maxFD = digits(o, 'maximumFractionDigits', 0, 100, undefined);
        const min = minFD !== undefined ? minFD : P.MathMin(minDefault, maxFD !== undefined ? maxFD : minDefault);
        if (maxFD === undefined) maxFD = P.MathMax(maxDefault, min);
        if (maxFD < min) throw new RangeError('maximumFractionDigits value is out of range.');
        this.#o = {
          locale, numberingSystem: 'latn', style, currency: cur,
          currencyDisplay: opt(o, 'currencyDisplay', ['symbol', 'narrowSymbol', 'code', 'name'], 'symbol'),
          unit: style === 'unit' ? opt(o, 'unit') : undefined,
          minimumIntegerDigits: digits(o, 'minimumIntegerDigits', 1, 21, 1),
          minimumFractionDigits: min, maximumFractionDigits: maxFD,
          minimumSignificantDigits: digits(o, 'minimumSignificantDigits', 1, 21, undefined),
          maximumSignificantDigits: digits(o, 'maximumSignificantDigits', 1, 21, undefined),
          useGrouping: o.useGrouping === undefined ? 'auto' : o.useGrouping,
          notation: opt(o, 'notation', ['standard', 'scientific', 'engineering', 'compact'], 'standard'),
          signDisplay: opt(o, 'signDisplay', ['auto', 'never', 'always', 'exceptZero', 'negative'], 'auto'),
        };
      }
      #digits(x) {
        const o = this.#o;
        let s;
        if (o.maximumSignificantDigits !== undefined) {
          s = String(Number(x.toPrecision(o.maximumSignificantDigits)));
          if (o.minimumSignificantDigits !== undefined && s.replace(/[^0-9]/g, '').replace(/^0+/, '').length < o.minimumSignificantDigits) {
            s = x.toPrecision(o.minimumSignificantDigits);
          }
          if (/e/.test(s)) s = Number(s).toFixed(P.MathMax(0, 20));
        } else {
          s = x < 1e21 ? x.toFixed(o.maximumFractionDigits) : x.toLocaleString === undefined ? String(x) : BigInt(P.MathRound(x)).toString();
          if (s.includes('.')) {
            let [i, f] = s.split('.');
            while (f.length > o.minimumFractionDigits && f.endsWith('0')) f = f.slice(0, -1);
            s = f ? i + '.' + f : i;
          }
        }
        let [int, frac] = s.split('.');
        if (int.length < o.minimumIntegerDigits) int = int.padStart(o.minimumIntegerDigits, '0');
        if (o.useGrouping !== false && o.useGrouping !== 'false') int = group(int);
        return frac !== undefined ? int + '.' + frac : int;
      }
      format(value) {
        const o = this.#o;
        let x = typeof value === 'bigint' ? Number(value) : Number(value);
        if (P.NumberIsNaN(x)) return 'NaN';
        const negative = x < 0 || P.ObjectIs(x, -0);
        x = P.MathAbs(x);
        if (o.style === 'percent') x *= 100;
        let body;
        let suffix = '';
        if (!P.NumberIsFinite(x)) {
          body = '∞';
        } else if (o.notation === 'compact') {
          const units = [[1e12, 'T'], [1e9, 'B'], [1e6, 'M'], [1e3, 'K']];
          const u = units.find(([n]) => x >= n * 0.9995) || [1, ''];
          const scaled = x / u[0];
          body = scaled < 100 ? String(Number(scaled.toPrecision(2))) : String(P.MathRound(scaled));
          if (u[0] === 1 && scaled >= 100) body = group(body);
          suffix = u[1];
        } else if (o.notation === 'scientific' || o.notation === 'engineering') {
          let e = x === 0 ? 0 : P.MathFloor(P.MathLog10(x));
          if (o.notation === 'engineering') e -= ((e % 3) + 3) % 3;
          body = String(Number((x / 10 ** e).toFixed(P.MathMin(o.maximumFractionDigits, 20)))) + 'E' + e;
        } else {
          body = this.#digits(x);
        }
        body += suffix;
        const zero = /^[0.,]*[KMBT]?$/.test(body) && body !== '';
        let sign = '';
        if (o.signDisplay === 'always') sign = negative ? '-' : '+';
        else if (o.signDisplay === 'exceptZero') sign = zero ? '' : negative ? '-' : '+';
        else if (o.signDisplay !== 'never') sign = negative && !zero ? '-' : negative && o.signDisplay === 'auto' && P.ObjectIs(Number(value), -0) ? '-' : '';
        if (o.style === 'currency') {
          const c = o.currency;
          const sym = o.currencyDisplay === 'code' ? c + '\u00a0' : o.currencyDisplay === 'name' ? null : o.currencyDisplay === 'narrowSymbol' ? (symbols[c] || c + '\u00a0').replace(/^[A-Z]+(?=[$¥])/, '') : symbols[c] || c + '\u00a0';
          if (sym === null) return `${sign}${body} ${c}`;
          return `${sign}${sym}${body}`;
        }
        if (o.style === 'percent') return `${sign}${body}%`;
        if (o.style === 'unit' && o.unit) return `${sign}${body} ${o.unit}`;
        return sign + body;
      }
      formatToParts(value) {
        return [{ type: 'literal', value: this.format(value) }];
      }
      formatRange(a, b) {
        return `${this.format(a)}–${this.format(b)}`;
      }
      resolvedOptions() {
        return P.ObjectFromEntries(P.ObjectEntries(this.#o).filter(([, v]) => v !== undefined));
      }
    }
    NumberFormat.supportedLocalesOf = supportedLocalesOf;

    const monthNames = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
    const dayNames = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    const styles = {
      full: { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric' },
      long: { year: 'numeric', month: 'long', day: 'numeric' },
      medium: { year: 'numeric', month: 'short', day: 'numeric' },
      short: { year: '2-digit', month: 'numeric', day: 'numeric' },
    };
    const timeStyles = {
      full: { hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'short' },
      long: { hour: 'numeric', minute: '2-digit', second: '2-digit', timeZoneName: 'short' },
      medium: { hour: 'numeric', minute: '2-digit', second: '2-digit' },
      short: { hour: 'numeric', minute: '2-digit' },
    };
    // localZone names the zone the VM's local time is in, as well as it
    // can: UTC, TZ from the environment, or a whole-hour Etc/GMT zone.
    const localZone = () => {
      const off = new Date().getTimezoneOffset();
      if (off === 0) return 'UTC';
      const tz = typeof process === 'object' && process !== null && process.env ? process.env.TZ : undefined;
      if (tz) return tz;
      return off % 60 === 0 ? `Etc/GMT${off > 0 ? '+' : '-'}${P.MathAbs(off / 60)}` : 'UTC';
    };
    const fields = ['weekday', 'era', 'year', 'month', 'day', 'hour', 'minute', 'second', 'timeZoneName', 'fractionalSecondDigits', 'dayPeriod'];
    class DateTimeFormat {
      #o;
      constructor(locales, options = {}, defaults = 'date') {
        const o = P.ObjectAssign({}, options || {});
        const local = localZone();
        let tz = o.timeZone === undefined || String(o.timeZone) === local ? undefined : String(o.timeZone);
        if (tz !== undefined && !/^(utc|gmt|etc\/utc|etc\/gmt)$/i.test(tz)) {
          throw new RangeError(`Invalid time zone specified: ${tz} (the sandbox's Intl knows UTC and the local zone, ${local}; leave timeZone out for local time)`);
        }
        let picked = {};
        if (o.dateStyle !== undefined || o.timeStyle !== undefined) {
          if (o.dateStyle !== undefined) P.ObjectAssign(picked, styles[opt(o, 'dateStyle', P.ObjectKeys(styles))]);
          if (o.timeStyle !== undefined) P.ObjectAssign(picked, timeStyles[opt(o, 'timeStyle', P.ObjectKeys(timeStyles))]);
        } else {
          for (const f of fields) if (o[f] !== undefined) picked[f] = String(o[f]);
          if (!fields.some((f) => picked[f] !== undefined && f !== 'timeZoneName')) {
            if (defaults === 'date' || defaults === 'all') P.ObjectAssign(picked, { year: 'numeric', month: 'numeric', day: 'numeric' });
            if (defaults === 'time' || defaults === 'all') P.ObjectAssign(picked, { hour: 'numeric', minute: '2-digit', second: '2-digit' });
          }
        }
        const hour12 = o.hour12 !== undefined ? !!o.hour12 : o.hourCycle !== undefined ? /h1[12]/.test(String(o.hourCycle)) : true;
        this.#o = P.ObjectAssign({ locale, calendar: 'gregory', numberingSystem: 'latn', timeZone: tz ? 'UTC' : local, utc: !!tz, hour12 }, picked);
      }
      format(date) {
        const o = this.#o;
        const d = date === undefined ? new Date() : new Date(typeof date === 'object' ? date.valueOf() : date);
        if (P.NumberIsNaN(d.getTime())) throw new RangeError('Invalid time value');
        const g = (n) => (o.utc ? d['getUTC' + n]() : d['get' + n]());
        const pad = (n) => String(n).padStart(2, '0');
        const year = g('FullYear');
        const month = g('Month');
        const day = g('Date');
        const parts = [];
        const textual = o.month === 'long' || o.month === 'short' || o.month === 'narrow';
        const y = o.year === '2-digit' ? pad(year % 100) : String(year);
        const m = o.month === 'long' ? monthNames[month] : o.month === 'short' ? monthNames[month].slice(0, 3) : o.month === 'narrow' ? monthNames[month][0] : o.month === '2-digit' ? pad(month + 1) : String(month + 1);
        const dd = o.day === '2-digit' ? pad(day) : String(day);
        let datePart = '';
        if (textual) {
          const md = [o.month && m, o.day && dd].filter(Boolean).join(' ');
          datePart = [md, o.year && y].filter(Boolean).join(o.day ? ', ' : ' ');
        } else {
          datePart = [o.month && m, o.day && dd, o.year && y].filter(Boolean).join('/');
        }
        if (o.weekday) {
          const w = dayNames[g('Day')];
          const wd = o.weekday === 'long' ? w : o.weekday === 'short' ? w.slice(0, 3) : w[0];
          datePart = datePart ? `${wd}, ${datePart}` : wd;
        }
        if (datePart) P.arrayPush(parts, datePart);
        if (o.hour || o.minute || o.second) {
          let h = g('Hours');
          const ampm = h < 12 ? 'AM' : 'PM';
          if (o.hour12) h = h % 12 === 0 ? 12 : h % 12;
          const hs = o.hour === '2-digit' || (!o.hour12 && o.hour) ? pad(h) : String(h);
          const t = [o.hour && hs, o.minute && pad(g('Minutes')), o.second && pad(g('Seconds'))].filter(Boolean).join(':');
          let time = o.hour && o.hour12 ? `${t} ${ampm}` : t;
          if (o.timeZoneName) time += ' ' + (o.utc ? 'UTC' : o.timeZone);
          P.arrayPush(parts, time);
        }
        return parts.join(', ');
      }
      formatToParts(date) {
        return [{ type: 'literal', value: this.format(date) }];
      }
      formatRange(a, b) {
        return `${this.format(a)} – ${this.format(b)}`;
      }
      resolvedOptions() {
        const out = P.ObjectAssign({}, this.#o);
        delete out.utc;
        return out;
      }
    }
    DateTimeFormat.supportedLocalesOf = supportedLocalesOf;

    // goja's regular expressions have no \p{...} classes: letters are
    // spelled out as the scripts most text is in.
    const punctuation = /[!-\/:-@[-`{-~\s\u00a1-\u00bf\u2000-\u206f\u3000-\u303f]/g;
    const letter = 'A-Za-z0-9_\u00aa\u00b5\u00ba\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0370-\u03ff\u0400-\u052f\u0590-\u05ff\u0600-\u06ff\u0900-\u097f\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af';
    const wordRe = new RegExp(`[${letter}']+|\\s+|[^${letter}'\\s]`, 'gu');
    const wordLike = new RegExp(`[${letter}]`, 'u');
    const fold = (s) => String(s).normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase();
    class Collator {
      #o;
      constructor(locales, options = {}) {
        const o = options || {};
        this.#o = {
          locale, usage: opt(o, 'usage', ['sort', 'search'], 'sort'),
          sensitivity: opt(o, 'sensitivity', ['base', 'accent', 'case', 'variant'], 'variant'),
          numeric: !!o.numeric, ignorePunctuation: !!o.ignorePunctuation, caseFirst: opt(o, 'caseFirst', ['upper', 'lower', 'false'], 'false'),
        };
        this.compare = this.compare.bind(this);
      }
      compare(a, b) {
        let x = String(a);
        let y = String(b);
        const o = this.#o;
        if (o.ignorePunctuation) {
          x = x.replace(punctuation, '');
          y = y.replace(punctuation, '');
        }
        if (o.sensitivity === 'base') {
          x = fold(x);
          y = fold(y);
        } else if (o.sensitivity === 'accent') {
          x = x.toLowerCase();
          y = y.toLowerCase();
        }
        if (o.numeric) {
          const re = /(\d+)|(\D+)/g;
          const xs = x.match(re) || [];
          const ys = y.match(re) || [];
          for (let i = 0; i < P.MathMin(xs.length, ys.length); i++) {
            const p = xs[i];
            const q = ys[i];
            if (/^\d/.test(p) && /^\d/.test(q)) {
              const d = Number(p) - Number(q);
              if (d !== 0) return d < 0 ? -1 : 1;
            } else if (p !== q) {
              const c = fold(p).localeCompare(fold(q)) || p.localeCompare(q);
              if (c !== 0) return c < 0 ? -1 : 1;
            }
          }
          return xs.length === ys.length ? 0 : xs.length < ys.length ? -1 : 1;
        }
        if (x === y) return 0;
        const c = fold(x) < fold(y) ? -1 : fold(x) > fold(y) ? 1 : x < y ? (x.toLowerCase() === y.toLowerCase() ? 1 : -1) : -1 * (x.toLowerCase() === y.toLowerCase() ? 1 : -1);
        return c;
      }
      resolvedOptions() {
        return P.ObjectAssign({}, this.#o);
      }
    }
    Collator.supportedLocalesOf = supportedLocalesOf;

    class PluralRules {
      #type;
      constructor(locales, options = {}) {
        this.#type = opt(options || {}, 'type', ['cardinal', 'ordinal'], 'cardinal');
      }
      select(n) {
        n = P.MathAbs(Number(n));
        if (this.#type === 'ordinal') {
          const t = n % 10;
          const h = n % 100;
          if (t === 1 && h !== 11) return 'one';
          if (t === 2 && h !== 12) return 'two';
          if (t === 3 && h !== 13) return 'few';
          return 'other';
        }
        return n === 1 ? 'one' : 'other';
      }
      resolvedOptions() {
        return { locale, type: this.#type, pluralCategories: this.#type === 'ordinal' ? ['few', 'one', 'two', 'other'] : ['one', 'other'] };
      }
    }
    PluralRules.supportedLocalesOf = supportedLocalesOf;

    class ListFormat {
      #type;
      #style;
      constructor(locales, options = {}) {
        this.#type = opt(options || {}, 'type', ['conjunction', 'disjunction', 'unit'], 'conjunction');
        this.#style = opt(options || {}, 'style', ['long', 'short', 'narrow'], 'long');
      }
      format(list) {
        const items = P.ArrayFrom(list, String);
        if (items.length === 0) return '';
        if (items.length === 1) return items[0];
        if (this.#type === 'unit') return items.join(this.#style === 'narrow' ? ' ' : ', ');
        const word = this.#type === 'disjunction' ? 'or' : this.#style === 'long' ? 'and' : '&';
        if (items.length === 2) return `${items[0]} ${word} ${items[1]}`;
        return `${items.slice(0, -1).join(', ')}, ${word} ${items[items.length - 1]}`;
      }
      resolvedOptions() {
        return { locale, type: this.#type, style: this.#style };
      }
    }
    ListFormat.supportedLocalesOf = supportedLocalesOf;

    const relUnits = ['year', 'quarter', 'month', 'week', 'day', 'hour', 'minute', 'second'];
    const relWords = {
      year: ['last year', 'this year', 'next year'], quarter: ['last quarter', 'this quarter', 'next quarter'],
      month: ['last month', 'this month', 'next month'], week: ['last week', 'this week', 'next week'],
      day: ['yesterday', 'today', 'tomorrow'], hour: [null, 'this hour', null], minute: [null, 'this minute', null], second: [null, 'now', null],
    };
    class RelativeTimeFormat {
      #numeric;
      constructor(locales, options = {}) {
        this.#numeric = opt(options || {}, 'numeric', ['always', 'auto'], 'always');
      }
      format(value, unit) {
        const v = Number(value);
        let u = String(unit).replace(/s$/, '');
        if (!relUnits.includes(u)) throw new RangeError(`Invalid unit argument for format() '${unit}'`);
        if (this.#numeric === 'auto' && [-1, 0, 1].includes(v)) {
          const w = relWords[u][v + 1];
          if (w) return w;
        }
        const n = P.MathAbs(v);
        const text = `${new NumberFormat().format(n)} ${u}${n === 1 ? '' : 's'}`;
        return v < 0 || P.ObjectIs(v, -0) ? `${text} ago` : `in ${text}`;
      }
      resolvedOptions() {
        return { locale, style: 'long', numeric: this.#numeric, numberingSystem: 'latn' };
      }
    }
    RelativeTimeFormat.supportedLocalesOf = supportedLocalesOf;

    class Segmenter {
      #granularity;
      constructor(locales, options = {}) {
        this.#granularity = opt(options || {}, 'granularity', ['grapheme', 'word', 'sentence'], 'grapheme');
      }
      segment(input) {
        const text = String(input);
        const g = this.#granularity;
        const re = g === 'word' ? wordRe : g === 'sentence' ? /[^.!?]+[.!?]*\s*/gu : /[\s\S][\u0300-\u036f\u200d\ufe0f\u20d0-\u20ff]*/gu;
        re.lastIndex = 0;
        const out = [];
        for (const m of text.matchAll(re)) {
          const s = { segment: m[0], index: m.index, input: text };
          if (g === 'word') s.isWordLike = wordLike.test(m[0]);
          P.arrayPush(out, s);
        }
        return { [Symbol.iterator]: () => out[Symbol.iterator](), containing: (i) => out.find((s) => i >= s.index && i < s.index + s.segment.length) };
      }
      resolvedOptions() {
        return { locale, granularity: this.#granularity };
      }
    }
    Segmenter.supportedLocalesOf = supportedLocalesOf;

    const Intl = {
      NumberFormat, DateTimeFormat, Collator, PluralRules, ListFormat, RelativeTimeFormat, Segmenter,
      getCanonicalLocales: (l) => (l === undefined ? [] : [locale]),
      supportedValuesOf: () => [],
    };
    P.ObjectDefineProperty(Intl, Symbol.toStringTag, { value: 'Intl' });
    define('Intl', Intl);
    const method = (proto, name, fn) => P.ObjectDefineProperty(proto, name, { value: fn, writable: true, configurable: true, enumerable: false });
    method(Number.prototype, 'toLocaleString', function toLocaleString(locales, options) {
      return new NumberFormat(locales, options).format(P.NumberPrototypeValueOf(this));
    });
    method(Date.prototype, 'toLocaleString', function toLocaleString(locales, options) {
      return P.NumberIsNaN(this.getTime()) ? 'Invalid Date' : new DateTimeFormat(locales, options, 'all').format(this);
    });
    method(Date.prototype, 'toLocaleDateString', function toLocaleDateString(locales, options) {
      return P.NumberIsNaN(this.getTime()) ? 'Invalid Date' : new DateTimeFormat(locales, options, 'date').format(this);
    });
    method(Date.prototype, 'toLocaleTimeString', function toLocaleTimeString(locales, options) {
      return P.NumberIsNaN(this.getTime()) ? 'Invalid Date' : new DateTimeFormat(locales, options, 'time').format(this);
    });
  }

  // fetch has no network to reach: it rejects, saying what to use instead.
  define('fetch', function fetch(input) {
    let url = input instanceof Request ? input.url : String(input);
    if (url.length > 200) url = url.slice(0, 200) + '…';
    const err = new TypeError(`fetch(${P.JSONStringify(url)}) failed: no network in the sandbox; use tool.<name>() to call one of the session's tools ` +
      '(e.g. a web fetch or search tool), which runs outside it');
    err.code = 'ERR_NO_NETWORK';
    return P.PromiseReject(err);
  });

  // ---- process additions ------------------------------------------------
  if (typeof process === 'object' && process !== null) {
    process.platform = host.platform;
    process.arch = 'x64';
    process.versions.node = process.version.slice(1);
    process.release.name = 'node';
  }
})
