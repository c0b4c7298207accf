/*
 * wasmeval shim: turns libpython into a WASI reactor the Go host drives.
 *
 * Exports (called by the host):
 *   wasmeval_alloc(n) -> ptr          guest malloc, for passing strings in
 *   wasmeval_free(ptr)
 *   wasmeval_init() -> rc             Py_Initialize, then import the prelude
 *                                     (_wasmeval_prelude); 0 on success
 *   wasmeval_run(code, n) -> rc       run one cell through the prelude's
 *                                     run_cell; 0 complete, 1 error, 2 internal
 *   wasmeval_control(json, n) -> rc   the prelude's control(): session setup
 *   wasmeval_interrupt_flags(out)     write the addresses of the four ints the
 *                                     host sets to 1 to interrupt a cell
 *
 * Imports (module "wasmeval", implemented by the host):
 *   emit(kind, ptr, len)              a chunk of output or an event
 *   fuel()                            the fuel checks' hook (wasm/fuel)
 *   call_start(ptr, len) -> id        start a host call (JSON request)
 *   call_wait() -> id                 wait for a started call to finish
 *   call_result_len(id), call_result(id, dst)   its JSON response
 *
 * The builtin module _wasmeval exposes emit() to Python; everything else
 * (cell splitting, display, tracebacks) lives in prelude/python.
 */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE 1
#include <Python.h>
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#include "internal/pycore_pystate.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WASMEVAL_IMPORT(name) \
    __attribute__((import_module("wasmeval"), import_name(name)))
#define WASMEVAL_EXPORT(name) __attribute__((export_name(name)))

WASMEVAL_IMPORT("emit")
void host_emit(int32_t kind, const char *ptr, int32_t len);

/* Host calls (helpers: files, tool, llm, agent, ...): the request is JSON;
 * call_start returns a call id (< 0: refused), call_wait blocks until one of
 * the calls started by this cell has finished and returns its id (< 0: the
 * cell was interrupted), then call_result copies its JSON response (whose
 * length call_result_len gives) into guest memory. */
WASMEVAL_IMPORT("call_start")
int32_t host_call_start(const char *req, int32_t len);
WASMEVAL_IMPORT("call_wait")
int32_t host_call_wait(void);
WASMEVAL_IMPORT("call_result_len")
int32_t host_call_result_len(int32_t id);
WASMEVAL_IMPORT("call_result")
void host_call_result(int32_t id, char *dst);

/* Called by the fuel checks that wasm/fuel injects when the counter runs
 * out: the host refills it, checks deadlines, and lets Go's scheduler run. */
WASMEVAL_IMPORT("fuel")
void host_fuel(void);

/* Defined in Modules/signalmodule.c by patches/signalmodule-wasmeval.c. */
void _wasmeval_sigint_flags(int **handler_tripped, int **any_tripped);

static PyObject *run_cell_fn;

/* ---- builtin module _wasmeval ---------------------------------------- */

static PyObject *
wasmeval_emit(PyObject *self, PyObject *args)
{
    int kind;
    const char *data;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "is#", &kind, &data, &len)) {
        return NULL;
    }
    if (len > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "emit: chunk too large");
        return NULL;
    }
    host_emit(kind, data, (int32_t)len);
    Py_RETURN_NONE;
}

static PyObject *
wasmeval_call_start(PyObject *self, PyObject *args)
{
    const char *data;
    Py_ssize_t len;
    if (!PyArg_ParseTuple(args, "s#", &data, &len)) {
        return NULL;
    }
    if (len > INT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "call_start: request too large");
        return NULL;
    }
    return PyLong_FromLong(host_call_start(data, (int32_t)len));
}

static PyObject *
wasmeval_call_wait(PyObject *self, PyObject *unused)
{
    int32_t id = host_call_wait();
    if (id < 0) {
        /* Interrupted: the pending KeyboardInterrupt (if any) fires here. */
        if (PyErr_CheckSignals() < 0) {
            return NULL;
        }
        return Py_BuildValue("(is)", id, "");
    }
    int32_t n = host_call_result_len(id);
    PyObject *buf = PyBytes_FromStringAndSize(NULL, n);
    if (buf == NULL) {
        return NULL;
    }
    host_call_result(id, PyBytes_AS_STRING(buf));
    PyObject *text = PyUnicode_FromEncodedObject(buf, "utf-8", "replace");
    Py_DECREF(buf);
    if (text == NULL) {
        return NULL;
    }
    return Py_BuildValue("(iN)", id, text);
}

/* C-level recursion (patches/c-recursion-wasmeval.patch, Python/ceval.c). */
extern int _Py_wasmeval_c_depth, _Py_wasmeval_c_limit;
extern uintptr_t _Py_wasmeval_stack_floor;

static PyObject *
wasmeval_stack(PyObject *self, PyObject *args)
{
    int limit = -1;
    if (!PyArg_ParseTuple(args, "|i", &limit)) {
        return NULL;
    }
    char here;
    PyObject *info = Py_BuildValue("{s:n,s:n,s:i,s:i}",
        "sp", (Py_ssize_t)(uintptr_t)&here,
        "floor", (Py_ssize_t)_Py_wasmeval_stack_floor,
        "c_depth", _Py_wasmeval_c_depth,
        "c_limit", _Py_wasmeval_c_limit);
    if (info != NULL && limit >= 0) {
        if (limit < 100 || limit > 100000) {
            Py_DECREF(info);
            PyErr_SetString(PyExc_ValueError, "stack: the C recursion limit must be from 100 to 100000");
            return NULL;
        }
        _Py_wasmeval_c_limit = limit;
    }
    return info;
}

#ifdef WASMEVAL_PROFILE
/* An instrumented build's (build.sh, PYBUILD_PGO_GENERATE): pgo/profile.c. */
int wasmeval_profile_write(const char *path);

static PyObject *
wasmeval_profile_write_py(PyObject *self, PyObject *args)
{
    const char *path;
    if (!PyArg_ParseTuple(args, "s", &path)) {
        return NULL;
    }
    return PyLong_FromLong(wasmeval_profile_write(path));
}
#endif

static PyMethodDef wasmeval_methods[] = {
#ifdef WASMEVAL_PROFILE
    {"profile_write", wasmeval_profile_write_py, METH_VARARGS,
     "profile_write(path) -> 0 on success: write the raw profile counted so far."},
#endif
    {"emit", wasmeval_emit, METH_VARARGS,
     "emit(kind, text): send a chunk of output or an event to the host."},
    {"call_start", wasmeval_call_start, METH_VARARGS,
     "call_start(request_json) -> id: start a host call (id < 0: refused)."},
    {"call_wait", wasmeval_call_wait, METH_NOARGS,
     "call_wait() -> (id, response_json): wait for a started call to finish."},
    {"stack", wasmeval_stack, METH_VARARGS,
     "stack([c_limit]) -> {sp, floor, c_depth, c_limit}: the C stack pointer, the "
     "floor below which recursion raises RecursionError, the C-level recursion "
     "in progress and its limit (as they were, when a new c_limit is given)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef wasmeval_module = {
    PyModuleDef_HEAD_INIT, "_wasmeval",
    "Bridge to the wasmeval host.", -1, wasmeval_methods,
};

static PyObject *
PyInit__wasmeval(void)
{
    return PyModule_Create(&wasmeval_module);
}

/* ---- exports ------------------------------------------------------------ */

/* A caller of host_fuel, so that wasm-ld keeps the import the fuel pass
 * needs (it drops imports no code calls). The host never calls it. */
WASMEVAL_EXPORT("wasmeval_fuel_hook")
void
wasmeval_fuel_hook(void)
{
    host_fuel();
}

WASMEVAL_EXPORT("wasmeval_alloc")
void *
wasmeval_alloc(int32_t n)
{
    return malloc(n > 0 ? (size_t)n : 1);
}

WASMEVAL_EXPORT("wasmeval_free")
void
wasmeval_free(void *p)
{
    free(p);
}

WASMEVAL_EXPORT("wasmeval_interrupt_flags")
void
wasmeval_interrupt_flags(int32_t *out)
{
    int *handler_tripped, *any_tripped;
    _wasmeval_sigint_flags(&handler_tripped, &any_tripped);
    out[0] = (int32_t)(intptr_t)handler_tripped;
    out[1] = (int32_t)(intptr_t)any_tripped;
    out[2] = (int32_t)(intptr_t)&_PyRuntime.ceval.signals_pending;
    out[3] = (int32_t)(intptr_t)&_PyInterpreterState_GET()->ceval.eval_breaker;
}

static void
emit_python_error(void)
{
    /* Only reached for failures of our own code (init, prelude); cell
     * exceptions are formatted by the prelude. */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    const char *name = type ? ((PyTypeObject *)type)->tp_name : "error";
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "wasmeval shim: %s: %s\n", name,
                     msg ? msg : "?");
    host_emit(2, buf, n < (int)sizeof buf ? n : (int)sizeof buf - 1);
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    PyErr_Clear();
}

static int
init_python(void)
{
    PyStatus status;
    /* UTF-8 mode, as PYTHONUTF8=1 or a UTF-8 locale gives on Linux: file
     * names, open() and os.environ are UTF-8 (the isolated default follows
     * the C locale, which is ASCII under wasi-libc). */
    PyPreConfig preconfig;
    PyPreConfig_InitIsolatedConfig(&preconfig);
    preconfig.utf8_mode = 1;
    status = Py_PreInitialize(&preconfig);
    if (PyStatus_Exception(status)) {
        if (status.err_msg) {
            host_emit(2, status.err_msg, (int32_t)strlen(status.err_msg));
        }
        return -1;
    }
    PyConfig config;
    PyConfig_InitIsolatedConfig(&config);
    config.site_import = 0;
    config.write_bytecode = 0;
    config.install_signal_handlers = 1;
    config.buffered_stdio = 0;
    config.use_environment = 0;
    config.user_site_directory = 0;
    config.safe_path = 1;
    config.module_search_paths_set = 1;
#define SET(field, value)                                                   \
    status = PyConfig_SetBytesString(&config, &config.field, value);      \
    if (PyStatus_Exception(status)) goto fail;
    SET(program_name, "python3.11");
    SET(executable, "/usr/local/bin/python3.11");
    SET(base_executable, "/usr/local/bin/python3.11");
    SET(home, "/usr/local");
    SET(prefix, "/usr/local");
    SET(exec_prefix, "/usr/local");
    SET(base_prefix, "/usr/local");
    SET(base_exec_prefix, "/usr/local");
    SET(platlibdir, "lib");
    SET(stdlib_dir, "/usr/local/lib/python311.zip");
#undef SET
    status = PyWideStringList_Append(&config.module_search_paths,
                                     L"/usr/local/lib/python311.zip");
    if (PyStatus_Exception(status)) goto fail;
    status = PyWideStringList_Append(&config.module_search_paths,
                                     L"/usr/local/lib/wasmeval/prelude.zip");
    if (PyStatus_Exception(status)) goto fail;
    status = Py_InitializeFromConfig(&config);
    if (PyStatus_Exception(status)) goto fail;
    PyConfig_Clear(&config);
    return 0;
fail:
    PyConfig_Clear(&config);
    if (status.err_msg) {
        host_emit(2, status.err_msg, (int32_t)strlen(status.err_msg));
    }
    return -1;
}

static PyObject *control_fn;

WASMEVAL_EXPORT("wasmeval_init")
int32_t
wasmeval_init(void)
{
    if (PyImport_AppendInittab("_wasmeval", PyInit__wasmeval) < 0) {
        return -1;
    }
    if (init_python() < 0) {
        return -2;
    }
    PyObject *mod = PyImport_ImportModule("_wasmeval_prelude");
    if (mod == NULL) {
        emit_python_error();
        return -3;
    }
    run_cell_fn = PyObject_GetAttrString(mod, "run_cell");
    control_fn = run_cell_fn ? PyObject_GetAttrString(mod, "control") : NULL;
    Py_DECREF(mod);
    if (control_fn == NULL) {
        emit_python_error();
        return -4;
    }
    return 0;
}

static int32_t
call_with_text(PyObject *fn, const char *text, int32_t n)
{
    PyObject *src = PyUnicode_DecodeUTF8(text, n, "replace");
    if (src == NULL) {
        emit_python_error();
        return 2;
    }
    PyObject *r = PyObject_CallOneArg(fn, src);
    Py_DECREF(src);
    if (r == NULL) {
        emit_python_error();
        return 2;
    }
    long rc = PyLong_AsLong(r);
    Py_DECREF(r);
    if (rc == -1 && PyErr_Occurred()) {
        emit_python_error();
        return 2;
    }
    return (int32_t)rc;
}

WASMEVAL_EXPORT("wasmeval_run")
int32_t
wasmeval_run(const char *code, int32_t n)
{
    return call_with_text(run_cell_fn, code, n);
}

WASMEVAL_EXPORT("wasmeval_control")
int32_t
wasmeval_control(const char *msg, int32_t n)
{
    return call_with_text(control_fn, msg, n);
}
