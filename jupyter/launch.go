package jupyter

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// LaunchConfig says how to start a local kernel (KernelCommand).
type LaunchConfig struct {
	// Root is the session root: the kernel's working directory and, under
	// confinement, one of the two folders it may write. It must exist.
	Root string
	// ConnectionFile is the kernel's connection file (ports, key). It must
	// exist when KernelCommand is called: when the kernel runs as another
	// user, KernelCommand hands it to that user.
	ConnectionFile string
	// Env is set over the filtered host environment (KernelEnv), as given:
	// it is the embedder's or the client's own choice, so secret-looking
	// names in it are kept.
	Env map[string]string
	// TempDir is the kernel's temporary folder (TMPDIR, TEMP, TMP, the
	// IPython and matplotlib configuration folders), the other folder it
	// may write under confinement. It must exist; wasmeval owns it.
	TempDir string
	// Python is an explicit interpreter (a path, or a name looked up on the
	// kernel's PATH). Empty chooses one as ChoosePython says.
	Python string
	// Logger receives the one-time notice that the kernel runs without
	// Landlock. Nil means slog.Default().
	Logger *slog.Logger
}

// kernelEnvAllowlist are the host variables a kernel inherits: the seed
// tool's allowlist, plus TZ (as the wasm backend's environment).
var kernelEnvAllowlist = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"TERM", "TERM_PROGRAM", "TERM_PROGRAM_VERSION", "TMPDIR", "TEMP", "TMP",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
	"VIRTUAL_ENV", "PYTHONPATH", "LD_LIBRARY_PATH", "TZ",
}

// kernelEnvAllowPrefixes are the seed's allowed prefixes, less its own
// PI_ (wasmeval's WASMEVAL_ variables are secret-looking: SecretEnvName).
var kernelEnvAllowPrefixes = []string{"LC_", "XDG_"}

// kernelEnvDenylist are the seed tool's named API keys. SecretEnvName
// covers them and more; the list stays so the seed's names are kept out
// even if the patterns change.
var kernelEnvDenylist = []string{
	"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GOOGLE_API_KEY", "GEMINI_API_KEY",
	"OPENROUTER_API_KEY", "PERPLEXITY_API_KEY", "PERPLEXITY_COOKIES", "EXA_API_KEY",
	"AZURE_OPENAI_API_KEY", "MISTRAL_API_KEY",
}

// Secret-looking names, the same rule as sandbox.SecretEnvName (a test
// keeps the two in step; this package cannot import sandbox, which
// imports the runtimes above it).
var (
	secretSuffixes = []string{"_KEY", "_APIKEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_PASS", "_CREDENTIALS", "_CREDENTIAL", "_AUTH"}
	secretPrefixes = []string{"AWS_", "AZURE_", "WASMEVAL_", "SSH_", "GPG_"}
	secretNames    = []string{"API_KEY", "APIKEY", "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS"}
)

// SecretEnvName reports whether name looks like a secret's; it is the
// rule of sandbox.SecretEnvName, which the kernel's environment applies to
// the host's variables on top of the seed's denylist. SSH_AUTH_SOCK and
// SSH_AGENT_PID, on the seed's allowlist, fall under it: an agent socket
// signs as its owner.
func SecretEnvName(name string) bool {
	u := strings.ToUpper(name)
	if slices.Contains(secretNames, u) {
		return true
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(u, s) {
			return true
		}
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(u, p) {
			return true
		}
	}
	return false
}

// KernelEnv returns the host variables a kernel inherits from hostEnv
// ("NAME=value" entries, as os.Environ): those on the seed tool's
// allowlist (PATH, HOME, USER, LOGNAME, SHELL, LANG, TERM*, TMPDIR, TEMP,
// TMP, XDG_*, CONDA_PREFIX, CONDA_DEFAULT_ENV, VIRTUAL_ENV, PYTHONPATH,
// LD_LIBRARY_PATH, ...), TZ and every LC_ and XDG_ variable, less the
// seed's denylist of API keys and every secret-looking name
// (SecretEnvName).
func KernelEnv(hostEnv []string) map[string]string {
	env := map[string]string{}
	for _, kv := range hostEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" || strings.ContainsRune(v, 0) {
			continue
		}
		if slices.Contains(kernelEnvDenylist, k) || SecretEnvName(k) {
			continue
		}
		allowed := slices.Contains(kernelEnvAllowlist, k)
		for _, p := range kernelEnvAllowPrefixes {
			allowed = allowed || strings.HasPrefix(k, p)
		}
		if allowed {
			env[k] = v
		}
	}
	return env
}

// KernelCommand returns the command that starts a local ipykernel for a
// session: `<python> -m ipykernel_launcher -f <ConnectionFile>` in Root,
// with the environment of KernelEnv and cfg.Env, TMPDIR (and TEMP, TMP)
// set to TempDir, and the interpreter of ChoosePython, checked to import
// ipykernel. ctx bounds that check, not the kernel: the command is not
// started, and outlives ctx once the caller starts it.
//
// On Linux the command is confined (see Confinement): it starts this
// binary again as a small helper that applies Landlock (writes only under
// Root and TempDir) and then executes Python; when wasmeval runs as root,
// the kernel runs as an unprivileged user, and KernelCommand hands Root,
// TempDir and ConnectionFile to that user first. The command runs in its
// own process group.
func KernelCommand(ctx context.Context, cfg LaunchConfig) (*exec.Cmd, error) {
	l, err := prepareLaunch(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return l.command("-m", "ipykernel_launcher", "-f", l.connFile), nil
}

// LaunchCommand is a CommandFunc (for StartLocal and the runtime's
// Config.Command) that builds kernels' commands with KernelCommand: the
// session's root and environment, the folder of the connection file as
// the kernel's temporary folder, python as LaunchConfig.Python (empty:
// ChoosePython's choice) and log for the Landlock notice.
func LaunchCommand(python string, log *slog.Logger) CommandFunc {
	return func(ctx context.Context, o StartOptions, connFile string) (*exec.Cmd, error) {
		return KernelCommand(ctx, LaunchConfig{
			Root: o.Root, ConnectionFile: connFile, Env: o.Env,
			TempDir: filepath.Dir(connFile), Python: python, Logger: log,
		})
	}
}

// launch is a prepared kernel start: everything but the interpreter's
// arguments.
type launch struct {
	root, tempDir, connFile string
	python                  string
	env                     map[string]string
	confine                 confinement
}

// prepareLaunch checks cfg, prepares the confinement and chooses the
// interpreter.
func prepareLaunch(ctx context.Context, cfg LaunchConfig) (*launch, error) {
	root, err := existingDir("Root", "the session root", cfg.Root)
	if err != nil {
		return nil, err
	}
	tempDir, err := existingDir("TempDir", "the kernel's temporary folder", cfg.TempDir)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectionFile == "" {
		return nil, errors.New("jupyter: LaunchConfig.ConnectionFile is empty; give the path of the kernel's connection file, written before the kernel starts")
	}
	connFile, err := filepath.Abs(cfg.ConnectionFile)
	if err != nil {
		return nil, fmt.Errorf("jupyter: LaunchConfig.ConnectionFile %q: %w", cfg.ConnectionFile, err)
	}
	if st, err := os.Stat(connFile); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("jupyter: the connection file %s is not a regular file (%v); write it before starting the kernel", connFile, err)
	}
	if err := CheckEnvMap(cfg.Env); err != nil {
		return nil, err
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	l := &launch{root: root, tempDir: tempDir, connFile: connFile}
	l.confine, err = prepareConfinement(root, tempDir, connFile, log)
	if err != nil {
		return nil, err
	}
	env := KernelEnv(os.Environ())
	if u := l.confine.user; u != nil {
		// The host user's home and name mean nothing to the kernel's user.
		env["HOME"], env["USER"], env["LOGNAME"] = root, u.name, u.name
		delete(env, "XDG_RUNTIME_DIR")
	}
	for k, v := range cfg.Env {
		env[k] = v
	}
	for _, k := range []string{"TMPDIR", "TEMP", "TMP"} {
		env[k] = tempDir
	}
	// IPython's profile and history and matplotlib's font cache go to the
	// temporary folder: writable under confinement, and not the root.
	setDefault(env, "IPYTHONDIR", filepath.Join(tempDir, "ipython"))
	setDefault(env, "MPLCONFIGDIR", filepath.Join(tempDir, "matplotlib"))
	setDefault(env, "JUPYTER_RUNTIME_DIR", filepath.Join(tempDir, "jupyter-runtime"))
	choice, err := ChoosePython(cfg.Python, root, env)
	if err != nil {
		return nil, err
	}
	if choice.Venv != "" {
		env["VIRTUAL_ENV"] = choice.Venv
		env["PATH"] = joinPath(filepath.Join(choice.Venv, "bin"), env["PATH"])
	}
	l.env = env
	if err := l.checkIPyKernel(ctx, choice); err != nil {
		return nil, err
	}
	if log.Enabled(ctx, slog.LevelDebug) {
		user := "wasmeval's"
		if u := l.confine.user; u != nil {
			user = fmt.Sprintf("%s (uid %d)", u.name, u.uid)
		}
		log.Debug("jupyter: local kernel", "python", l.python, "from", choice.From, "venv", choice.Venv,
			"root", root, "user", user, "landlock_abi", l.confine.landlockABI())
	}
	return l, nil
}

func setDefault(env map[string]string, k, v string) {
	if _, ok := env[k]; !ok {
		env[k] = v
	}
}

func joinPath(first, rest string) string {
	if rest == "" {
		return first
	}
	return first + string(os.PathListSeparator) + rest
}

// CheckEnvMap says what is wrong with env as a kernel's explicit
// environment, if anything: names of letters, digits and '_' not starting
// with a digit, no NUL byte in a value.
func CheckEnvMap(env map[string]string) error {
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		ok := k != "" && !(k[0] >= '0' && k[0] <= '9')
		for _, c := range k {
			ok = ok && (c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
		}
		if !ok {
			return fmt.Errorf("jupyter: LaunchConfig.Env: the variable name %q is not letters, digits and '_' not starting with a digit", k)
		}
		if strings.ContainsRune(env[k], 0) {
			return fmt.Errorf("jupyter: LaunchConfig.Env: the value of %s holds a NUL byte, which no environment can carry", k)
		}
	}
	return nil
}

func existingDir(field, what, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("jupyter: LaunchConfig.%s is empty; give %s, an existing folder", field, what)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("jupyter: LaunchConfig.%s %q: %w", field, p, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("jupyter: %s %s: %w; give an existing folder", what, abs, err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("jupyter: %s %s is not a folder; give an existing folder", what, abs)
	}
	return abs, nil
}

// Interpreter is the Python a kernel runs (ChoosePython).
type Interpreter struct {
	// Path is the interpreter's executable.
	Path string
	// Venv is the virtual environment it belongs to, if any; its bin
	// folder goes first on the kernel's PATH and VIRTUAL_ENV names it.
	Venv string
	// From says where the choice came from, for messages: "LaunchConfig.Python",
	// "VIRTUAL_ENV", "<root>/.venv", "<root>/venv" or "python3 on PATH".
	From string
	// Others are the further python3 executables on PATH, tried in order
	// when Path cannot import ipykernel (From is "python3 on PATH").
	Others []string
}

// ChoosePython chooses a kernel's interpreter as the seed tool does: the
// explicit one when given; else the virtual environment of VIRTUAL_ENV
// (from env), then <root>/.venv, then <root>/venv (the first whose
// bin/python exists); else python3 on env's PATH.
func ChoosePython(explicit, root string, env map[string]string) (Interpreter, error) {
	if explicit != "" {
		p := explicit
		if !strings.ContainsRune(p, filepath.Separator) {
			found, err := pythonLookPath(p, env["PATH"])
			if err != nil {
				return Interpreter{}, fmt.Errorf("jupyter: the interpreter %q is not on the kernel's PATH (%s); give its full path", explicit, env["PATH"])
			}
			p = found
		} else if !filepath.IsAbs(p) {
			p = filepath.Join(root, p)
		}
		if !isExecutable(p) {
			return Interpreter{}, fmt.Errorf("jupyter: the interpreter %s is not an executable file; give the path of a Python 3 interpreter", p)
		}
		in := Interpreter{Path: p, From: "LaunchConfig.Python"}
		// An interpreter inside a venv (<venv>/bin/python with
		// <venv>/pyvenv.cfg) gets its venv's PATH, as the seed does.
		if venv := filepath.Dir(filepath.Dir(p)); fileExists(filepath.Join(venv, "pyvenv.cfg")) {
			in.Venv = venv
		}
		return in, nil
	}
	venvs := []struct{ dir, from string }{
		{env["VIRTUAL_ENV"], "VIRTUAL_ENV"},
		{filepath.Join(root, ".venv"), "<root>/.venv"},
		{filepath.Join(root, "venv"), "<root>/venv"},
	}
	for _, v := range venvs {
		if v.dir == "" {
			continue
		}
		for _, name := range []string{"python", "python3"} {
			if p := filepath.Join(v.dir, "bin", name); isExecutable(p) {
				return Interpreter{Path: p, Venv: v.dir, From: v.from}, nil
			}
		}
	}
	var found []string
	for _, dir := range filepath.SplitList(env["PATH"]) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, "python3"); isExecutable(p) && !slices.Contains(found, p) {
			found = append(found, p)
		}
	}
	if len(found) == 0 {
		return Interpreter{}, fmt.Errorf("jupyter: no Python for the kernel: VIRTUAL_ENV is not set, the root has no .venv or venv, and there is no python3 on PATH (%s); install Python 3 with ipykernel (apt install python3-ipykernel) or create a venv with it in the root", env["PATH"])
	}
	return Interpreter{Path: found[0], From: "python3 on PATH", Others: found[1:]}, nil
}

func pythonLookPath(name, path string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p := filepath.Join(dir, name); isExecutable(p) {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

func isExecutable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ipykernelOK remembers interpreters (with the user and venv they ran
// under) that imported ipykernel, so a session's second kernel does not
// pay for the check again. Failures are not kept: the operator may
// install ipykernel meanwhile.
var ipykernelOK sync.Map

// findIPyKernel exits 0 when ipykernel and its launcher can be imported,
// 3 when not, without importing them (a plain find_spec takes tens of
// milliseconds, an import of ipykernel most of a second).
const findIPyKernel = "import importlib.util as u, sys; sys.exit(0 if u.find_spec('ipykernel') and u.find_spec('ipykernel_launcher') else 3)"

// checkIPyKernel makes sure the chosen interpreter imports ipykernel as
// the kernel will run it (same user, environment and folder); for python3
// on PATH, the first on PATH that does wins. It sets l.python.
func (l *launch) checkIPyKernel(ctx context.Context, in Interpreter) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	candidates := append([]string{in.Path}, in.Others...)
	var firstErr error
	for _, p := range candidates {
		key := fmt.Sprintf("%s\x00%s\x00%d", p, l.env["VIRTUAL_ENV"], l.confine.uid())
		if _, ok := ipykernelOK.Load(key); ok {
			l.python = p
			return nil
		}
		cmd := l.confine.plain(ctx, p, "-c", findIPyKernel)
		cmd.Dir, cmd.Env = l.root, sortedEnv(l.env)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		if err == nil {
			ipykernelOK.Store(key, true)
			l.python = p
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("jupyter: checking that %s imports ipykernel: %w", p, ctx.Err())
		}
		if firstErr == nil {
			firstErr = ipykernelError(in, p, err, stderr.String(), l.confine.user)
		}
	}
	return firstErr
}

// ipykernelError is the message for an interpreter that cannot run a
// kernel: it says which interpreter, why it was chosen and how to install
// ipykernel there.
func ipykernelError(in Interpreter, p string, err error, stderr string, u *kernelUser) error {
	how := "install Debian's python3-ipykernel (apt install python3-ipykernel)"
	if in.Venv != "" {
		how = fmt.Sprintf("install it in the venv (%s -m pip install ipykernel)", filepath.Join(in.Venv, "bin", "python"))
	} else if in.From == "LaunchConfig.Python" {
		how = fmt.Sprintf("install it for that interpreter (%s -m pip install ipykernel, or apt install python3-ipykernel for Debian's python3)", p)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		return fmt.Errorf("jupyter: ipykernel is not importable by %s (chosen from %s); %s", p, in.From, how)
	}
	who := ""
	if u != nil {
		who = fmt.Sprintf(" as the kernel's user %s (uid %d)", u.name, u.uid)
	}
	detail := strings.TrimSpace(stderr)
	if len(detail) > 300 {
		detail = detail[len(detail)-300:]
	}
	if detail != "" {
		detail = ": " + detail
	}
	return fmt.Errorf("jupyter: %s (chosen from %s) could not run%s (%v%s); give an interpreter that runs with ipykernel: %s", p, in.From, who, err, detail, how)
}

// sortedEnv is env as "NAME=value" entries in name order.
func sortedEnv(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// command is the kernel's command with the interpreter's arguments args.
func (l *launch) command(args ...string) *exec.Cmd {
	cmd := l.confine.wrap(l.python, args...)
	cmd.Dir, cmd.Env = l.root, sortedEnv(l.env)
	return cmd
}
