// timers.js: setTimeout, setInterval, setImmediate, their clear functions
// and queueMicrotask, on the host's event loop (one per session, run on the
// cell's goroutine). A cell ends when its timers are done; unref()ed timers
// do not keep it alive.
(function (host, internal) {
  'use strict';

  // The built-ins as the VM started (inspect.js): a cell that replaces
  // one changes nothing here.
  const P = internal.primordials;
  const kID = Symbol('timerID');
  const maxDelay = 2 ** 31 - 1;

  class Timeout {
    constructor(id) {
      P.ObjectDefineProperty(this, kID, { value: id });
    }
    ref() {
      host.refTimer(this[kID], true);
      return this;
    }
    unref() {
      host.refTimer(this[kID], false);
      return this;
    }
    hasRef() {
      return host.hasRefTimer(this[kID]);
    }
    refresh() {
      host.refreshTimer(this[kID]);
      return this;
    }
    close() {
      host.clearTimer(this[kID]);
      return this;
    }
    [Symbol.toPrimitive]() {
      return this[kID];
    }
  }

  class Immediate extends Timeout {}

  function checkCallback(callback) {
    if (typeof callback !== 'function') {
      const err = new P.TypeError(`The "callback" argument must be of type function. Received ${internal.inspect(callback)}`);
      err.code = 'ERR_INVALID_ARG_TYPE';
      throw err;
    }
  }

  function delayOf(delay) {
    delay = P.Number(delay);
    if (!(delay >= 1 && delay <= maxDelay)) return 1;
    return delay;
  }

  function schedule(Kind, callback, delay, repeat, args) {
    checkCallback(callback);
    let timer;
    const id = host.setTimer(() => {
      P.ReflectApply(callback, timer, args);
    }, delay, repeat);
    timer = new Kind(id);
    return timer;
  }

  function clear(timer) {
    if (timer === null || timer === undefined) return;
    const id = typeof timer === 'object' ? timer[kID] : P.Number(timer);
    if (id !== undefined && !P.NumberIsNaN(id)) host.clearTimer(id);
  }

  const define = (name, value) => P.ObjectDefineProperty(globalThis, name, {
    value, writable: true, configurable: true, enumerable: false,
  });
  define('setTimeout', function setTimeout(callback, delay, ...args) {
    return schedule(Timeout, callback, delayOf(delay), false, args);
  });
  define('setInterval', function setInterval(callback, delay, ...args) {
    return schedule(Timeout, callback, delayOf(delay), true, args);
  });
  define('setImmediate', function setImmediate(callback, ...args) {
    return schedule(Immediate, callback, 0, false, args);
  });
  define('clearTimeout', function clearTimeout(timer) {
    clear(timer);
  });
  define('clearInterval', function clearInterval(timer) {
    clear(timer);
  });
  define('clearImmediate', function clearImmediate(timer) {
    clear(timer);
  });
  const resolved = Promise.resolve();
  define('queueMicrotask', function queueMicrotask(callback) {
    checkCallback(callback);
    P.PromisePrototypeThen(resolved, () => callback());
  });
})
