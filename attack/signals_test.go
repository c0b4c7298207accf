package attack_test

import (
	"testing"
	"time"
)

// TestSignalsAndStdio: signals a cell raises at itself, handlers that
// swallow the interrupt, closing its own standard descriptors, writing to
// them directly, and the device and /proc paths a process would use to
// reach them: each ends within its limits, in this session only, and the
// session evaluates 1+1 after (run checks it).
func TestSignalsAndStdio(t *testing.T) {
	const flood = 200 << 10
	run(t, []attack{
		py("SIGKILL at itself", `import signal; signal.raise_signal(signal.SIGKILL)`, fail, "the Python runtime crashed"),
		py("SIGSEGV at itself", `import signal; signal.raise_signal(signal.SIGSEGV)`, fail, "the Python runtime crashed"),
		py("os.abort", `import os; os.abort()`, fail, "the Python runtime crashed"),
		py("interrupt_main", `import _thread; _thread.interrupt_main(); print('after')`, fail, "KeyboardInterrupt"),
		{name: "SIGINT ignored", lang: "py", code: `import signal; signal.signal(signal.SIGINT, signal.SIG_IGN)
while True: pass`, timeout: 1, status: fail, want: []string{"timed out"}, within: 15 * time.Second},
		{name: "SIGINT swallowed by a handler", lang: "py", code: `import signal; signal.signal(signal.SIGINT, lambda *a: None)
while True: pass`, timeout: 1, status: fail, want: []string{"timed out"}, within: 15 * time.Second},
		py("faulthandler", `import faulthandler; faulthandler.enable()`, fail, "fileno"),
		py("stdin", `import sys; sys.stdin.read(1)`, fail, "stdin is not supported"),
		{name: "a flood straight to fd 1", lang: "py", code: `import os
for i in range(100): os.write(1, b'x' * 1_000_000)
print('done')`, timeout: 10, status: ok, want: []string{"done"}, maxOut: flood},
		{name: "a flood straight to fd 2", lang: "py", code: `import os
for i in range(100): os.write(2, b'y' * 1_000_000)
print('done')`, timeout: 10, status: ok, want: []string{"done"}, maxOut: flood},
		py("close the standard descriptors", `import os; os.close(0); os.close(1); os.close(2); print('closed')`, ok, "closed"),
		py("output after closing them", `print('still printing')`, ok, "still printing"),
		// A cell that drops its streams: its own error is still reported, and
		// the next cell prints again (every later cell failed in the prelude).
		py("stdout and stderr set to None", "import sys\nsys.stdout = None\nsys.stderr = None\n1/0", fail, "ZeroDivisionError"),
		py("stdout and stderr deleted", "import sys\ndel sys.stdout, sys.stderr\nprint('gone')", fail, "RuntimeError: lost sys.stdout"),
		py("/dev/zero", `open('/dev/zero', 'rb').read(10)`, fail, "FileNotFoundError"),
		py("/dev/urandom", `open('/dev/urandom', 'rb').read(10)`, fail, "FileNotFoundError"),
		py("/dev/stdout", `open('/dev/stdout', 'w').write('x')`, fail, "FileNotFoundError"),
		py("/dev/tty", `open('/dev/tty', 'w').write('x')`, fail, "FileNotFoundError"),
		py("/proc/self/fd/1", `open('/proc/self/fd/1', 'w').write('x')`, fail, "FileNotFoundError"),
		py("/proc/self/exe", `open('/proc/self/exe', 'rb').read(4)`, fail, "FileNotFoundError"),
		py("/proc/self/status", `open('/proc/self/status').read()`, fail, "FileNotFoundError"),
		py("/sys", `import os; os.listdir('/sys')`, fail, "FileNotFoundError"),
		py("a guest symlink loop", `import os; os.symlink('loop_b', 'loop_a'); os.symlink('loop_a', 'loop_b'); open('loop_a')`, fail, "Symbolic link loop"),
		py("a 256-byte name", `open('n' * 256, 'w')`, fail, "Error"),
	})
}
