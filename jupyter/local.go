package jupyter

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Kernel is one running kernel with a client connected to it: a local
// process that wasmeval started (StartLocal) or a Jupyter Server's kernel.
// The runtime restarts a kernel by closing it and starting another.
type Kernel interface {
	// Client talks to the kernel.
	Client() *Client
	// Interrupt interrupts the kernel out of band, for a kernel that did
	// not stop on the control channel's interrupt_request: SIGINT to a
	// local process, POST /api/kernels/{id}/interrupt to a server.
	Interrupt(ctx context.Context) error
	// Dead is closed when the kernel is known to be gone (a local process
	// exited); nil when the kernel's liveness shows only in its heartbeat.
	Dead() <-chan struct{}
	// Close shuts the kernel down and frees what it holds.
	Close(ctx context.Context) error
}

// StartOptions are what a kernel starts with.
type StartOptions struct {
	// Root is the session root: the kernel's working directory.
	Root string
	// Env is the session's environment, set in the kernel process (over
	// the filtered host environment, for a local kernel) and again by the
	// prelude.
	Env map[string]string
	// Python is the interpreter of a local kernel; empty means the one
	// ChoosePython finds.
	Python string
}

// Starter starts a kernel. The runtime takes one, so local and remote
// kernels are the same to it.
type Starter func(ctx context.Context, opts StartOptions) (Kernel, error)

// LocalKernel is a kernel process started by wasmeval on this machine,
// spoken to over ZeroMQ on loopback.
type LocalKernel struct {
	cmd    *exec.Cmd
	dir    string // holds the connection file
	client *Client
	dead   chan struct{}
	stderr *tailBuffer

	closeOnce sync.Once
	closeErr  error
}

// CommandFunc builds the command that starts a kernel whose connection
// file is connFile. StartLocal's default starts python3 -m
// ipykernel_launcher in the session root with the session's environment.
type CommandFunc func(ctx context.Context, opts StartOptions, connFile string) (*exec.Cmd, error)

// LocalOptions configure StartLocal.
type LocalOptions struct {
	StartOptions
	// Command builds the kernel's command; nil means DefaultCommand.
	Command CommandFunc
	// StartTimeout bounds the start (process, connection, kernel_info);
	// zero means a minute.
	StartTimeout time.Duration
}

// DefaultCommand is KernelCommand for a session: the kernel runs in the
// session root with the session's environment over the filtered host one,
// its temporary folder the one that holds the connection file, and the
// interpreter opts.Python or else the one ChoosePython finds.
func DefaultCommand(ctx context.Context, opts StartOptions, connFile string) (*exec.Cmd, error) {
	return KernelCommand(ctx, LaunchConfig{
		Root: opts.Root, ConnectionFile: connFile, Env: opts.Env,
		TempDir: filepath.Dir(connFile), Python: opts.Python,
	})
}

// StartLocal starts a kernel process and connects to it: it writes a
// connection file with fresh loopback ports and key, starts the command,
// dials the channels and does the kernel_info handshake.
func StartLocal(ctx context.Context, o LocalOptions) (*LocalKernel, error) {
	if err := localSupport(); err != nil {
		return nil, err
	}
	if o.Command == nil {
		o.Command = DefaultCommand
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	defer cancel()
	dir, err := os.MkdirTemp("", "wasmeval-kernel-")
	if err != nil {
		return nil, fmt.Errorf("jupyter: %w", err)
	}
	// Ports 0: the kernel binds free ports itself and writes them into
	// the file, so kernels started at once never race for a port (ports
	// chosen here could be taken before the kernel binds them, by another
	// kernel or by a client socket's own ephemeral port).
	info := ConnectionInfo{Transport: "tcp", IP: "127.0.0.1", Key: NewID() + NewID(),
		SignatureScheme: "hmac-sha256", KernelName: "python3"}
	connFile := filepath.Join(dir, "kernel.json")
	if err := info.WriteFile(connFile); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd, err := o.Command(ctx, o.StartOptions, connFile)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The folder is the kernel's TMPDIR too: it may write there (and
	// rewrite the connection file with its ports) under confinement.
	k := &LocalKernel{cmd: cmd, dir: dir, dead: make(chan struct{}), stderr: &tailBuffer{max: 8 << 10}}
	cmd.Stdout = k.stderr
	cmd.Stderr = k.stderr
	if cmd.Env != nil {
		// ipykernel exits when its parent does: no kernel outlives wasmeval.
		cmd.Env = append(cmd.Env, fmt.Sprintf("JPY_PARENT_PID=%d", os.Getpid()))
	}
	// Its own process group: ipykernel's interrupt signals its whole group
	// when it leads one, never ours; and Close kills its children with it.
	ownGroup(cmd)
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("jupyter: starting the kernel (%s): %w", cmd.Path, err)
	}
	go func() {
		cmd.Wait()
		close(k.dead)
	}()
	fail := func(err error) (*LocalKernel, error) {
		k.kill()
		<-k.dead
		os.RemoveAll(dir)
		if out := strings.TrimSpace(k.stderr.String()); out != "" {
			return nil, fmt.Errorf("%w; the kernel said:\n%s", err, out)
		}
		return nil, err
	}
	dctx, dcancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-k.dead:
			dcancel()
		case <-dctx.Done():
		}
	}()
	defer dcancel()
	if info, err = waitPorts(dctx, connFile, info.Key); err != nil {
		return fail(k.startErr(err))
	}
	session := NewID()
	conn, err := DialZMQ(dctx, info, session)
	if err != nil {
		return fail(k.startErr(err))
	}
	k.client = NewClient(conn, session)
	if _, err := k.client.KernelInfo(dctx); err != nil {
		k.client.Close()
		return fail(k.startErr(err))
	}
	return k, nil
}

// waitPorts waits until the kernel has written its ports into the
// connection file, and checks that it kept the key.
func waitPorts(ctx context.Context, path, key string) (ConnectionInfo, error) {
	for {
		info, err := ReadConnectionFile(path)
		if err == nil && info.ShellPort != 0 && info.IOPubPort != 0 && info.StdinPort != 0 &&
			info.ControlPort != 0 && info.HBPort != 0 {
			if info.Key != key {
				return info, errors.New("jupyter: the kernel's connection file has another key than the one it was given")
			}
			return info, nil
		}
		select {
		case <-ctx.Done():
			return info, fmt.Errorf("waiting for the kernel to write its ports: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startErr explains a failed start, naming the likely cause.
func (k *LocalKernel) startErr(err error) error {
	select {
	case <-k.dead:
		msg := fmt.Sprintf("jupyter: the kernel (%s) exited while starting", k.cmd.Path)
		if strings.Contains(k.stderr.String(), "No module named ipykernel") {
			msg += "; ipykernel is not importable by that interpreter: install it (Debian: apt-get install python3-ipykernel; a venv: pip install ipykernel)"
		}
		return errors.New(msg)
	default:
	}
	return fmt.Errorf("jupyter: the kernel (%s) did not come up: %w", k.cmd.Path, err)
}

// Client talks to the kernel.
func (k *LocalKernel) Client() *Client { return k.client }

// Dead is closed when the kernel process has exited.
func (k *LocalKernel) Dead() <-chan struct{} { return k.dead }

// Pid is the kernel process's id.
func (k *LocalKernel) Pid() int { return k.cmd.Process.Pid }

// Interrupt sends SIGINT to the kernel process.
func (k *LocalKernel) Interrupt(ctx context.Context) error {
	if err := k.cmd.Process.Signal(syscall.SIGINT); err != nil {
		return fmt.Errorf("jupyter: interrupting the kernel: %w", err)
	}
	return nil
}

// Close asks the kernel to shut down, kills it if it has not within a
// second, and removes its connection file.
func (k *LocalKernel) Close(ctx context.Context) error {
	k.closeOnce.Do(func() {
		select {
		case <-k.dead:
		default:
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			_ = k.client.Shutdown(sctx, false)
			select {
			case <-k.dead:
			case <-sctx.Done():
			}
			cancel()
			k.kill()
			<-k.dead
		}
		k.client.Close()
		k.closeErr = os.RemoveAll(k.dir)
	})
	return k.closeErr
}

// Stderr is the tail of what the kernel process wrote to its stdout and
// stderr (its own log, not a cell's output, which goes over iopub).
func (k *LocalKernel) Stderr() string { return k.stderr.String() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
