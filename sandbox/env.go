package sandbox

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/wasmeval/wasmeval/runtimes"
)

// The guest's environment.
//
// By default (SessionOptions.Env nil) a session's environment is HOME and
// PWD set to its root, PATH set to runtimes.GuestPATH (not the host's: its
// folders are host configuration), plus these host variables where they
// are set: LANG, TZ and every LC_ variable (LC_ALL, LC_CTYPE, LC_TIME,
// ...). A host
// variable whose name looks like a secret's (SecretEnvName) is never
// copied, whatever the allowlist says. Variables given explicitly
// (SessionOptions.Env and SetEnv, the command's --env and --env-file, serve's
// session "env") are the embedder's or the client's own choice and are
// passed as given, secret-looking names included: they hold what their
// giver typed, not the host's values.

// hostEnvAllowlist are the host variables a session's default environment
// copies, besides every LC_ variable.
var hostEnvAllowlist = []string{"LANG", "TZ"}

// Caps of an explicit environment, so that a client cannot make every
// cell's start copy megabytes into the guest.
const (
	MaxEnvVars  = 1000
	MaxEnvBytes = 1 << 20 // names and values together
)

// secretSuffixes and secretPrefixes are the name patterns of
// SecretEnvName, upper case.
var (
	secretSuffixes = []string{"_KEY", "_APIKEY", "_TOKEN", "_SECRET", "_PASSWORD", "_PASSWD", "_PASS", "_CREDENTIALS", "_CREDENTIAL", "_AUTH"}
	secretPrefixes = []string{"AWS_", "AZURE_", "WASMEVAL_", "SSH_", "GPG_"}
	secretNames    = []string{"API_KEY", "APIKEY", "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIALS"}
)

// SecretEnvName reports whether name (in any case) looks like the name of
// a secret: *_KEY (so *_API_KEY, *_ACCESS_KEY, ...), *_APIKEY, *_TOKEN,
// *_SECRET, *_PASSWORD, *_PASSWD, *_PASS, *_CREDENTIAL(S), *_AUTH; AWS_*,
// AZURE_*, SSH_*, GPG_*; wasmeval's own WASMEVAL_*; or API_KEY, APIKEY,
// KEY, TOKEN, SECRET, PASSWORD, PASSWD, CREDENTIALS themselves. The
// default environment never copies such a variable from the host.
func SecretEnvName(name string) bool {
	u := strings.ToUpper(name)
	for _, s := range secretNames {
		if u == s {
			return true
		}
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

// DefaultEnv returns the environment of a session rooted at root whose
// SessionOptions.Env is nil: HOME and PWD set to root, PATH to
// runtimes.GuestPATH, and the host's LANG, TZ and LC_* variables that are
// set and whose names are not secret-looking (SecretEnvName).
func DefaultEnv(root string) map[string]string {
	return defaultEnvFrom(root, os.Environ())
}

func defaultEnvFrom(root string, hostEnv []string) map[string]string {
	env := map[string]string{"HOME": root, "PWD": root, "PATH": runtimes.GuestPATH}
	for _, kv := range hostEnv {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || SecretEnvName(k) || CheckEnvName(k) != nil || strings.ContainsRune(v, 0) {
			continue
		}
		if strings.HasPrefix(k, "LC_") || slices.Contains(hostEnvAllowlist, k) {
			env[k] = v
		}
	}
	return env
}

// CheckEnvName says what is wrong with name as an environment variable's
// name, if anything: it must be letters, digits and '_', not starting
// with a digit (the portable names of POSIX), at most 256 bytes.
func CheckEnvName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the variable's name is empty; give NAME=VALUE")
	case len(name) > 256:
		return fmt.Errorf("the variable name %.40q... is %d bytes; give at most 256", name, len(name))
	case name[0] >= '0' && name[0] <= '9':
		return fmt.Errorf("the variable name %q starts with a digit; names are letters, digits and '_', not starting with a digit", name)
	}
	for _, c := range name {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("the variable name %q has %q; names are letters, digits and '_', not starting with a digit", name, c)
		}
	}
	return nil
}

// CheckEnv says what is wrong with env as an explicit guest environment,
// if anything: each name must pass CheckEnvName, no value may hold a NUL
// byte, and there may be at most MaxEnvVars variables of MaxEnvBytes in
// all. The error names the first bad variable in name order.
func CheckEnv(env map[string]string) error {
	if len(env) > MaxEnvVars {
		return fmt.Errorf("%d environment variables; give at most %d", len(env), MaxEnvVars)
	}
	names := make([]string, 0, len(env))
	size := 0
	for k, v := range env {
		names = append(names, k)
		size += len(k) + len(v) + 2
	}
	sort.Strings(names)
	for _, k := range names {
		if err := CheckEnvName(k); err != nil {
			return err
		}
		if strings.ContainsRune(env[k], 0) {
			return fmt.Errorf("the value of %s holds a NUL byte, which no environment can carry", k)
		}
	}
	if size > MaxEnvBytes {
		return fmt.Errorf("the environment is %d bytes; give at most %d MiB of names and values", size, MaxEnvBytes>>20)
	}
	return nil
}

// resolveEnv is the environment of a session rooted at root: env (or the
// default one when it is nil) with set added over it, checked.
func resolveEnv(root string, env, set map[string]string) (map[string]string, error) {
	if env == nil {
		env = DefaultEnv(root)
	} else {
		env = maps.Clone(env)
		if err := CheckEnv(env); err != nil {
			return nil, fmt.Errorf("sandbox: SessionOptions.Env: %v", err)
		}
	}
	if err := CheckEnv(set); err != nil {
		return nil, fmt.Errorf("sandbox: SessionOptions.SetEnv: %v", err)
	}
	maps.Copy(env, set)
	if err := CheckEnv(env); err != nil {
		return nil, fmt.Errorf("sandbox: the session's environment: %v", err)
	}
	return env, nil
}

// CreateWithEnv is Create, for a session whose environment has env set
// over the manager's template (ManagerOptions.Session: its Env, or the
// default one, and its SetEnv), as serve's session "env" asks. A bad env
// is refused before anything is made, with an error that wraps
// ErrBadEnv and says what is wrong.
func (m *Manager) CreateWithEnv(ctx context.Context, owner string, env map[string]string) (string, error) {
	if len(env) == 0 {
		return m.Create(ctx, owner)
	}
	if err := CheckEnv(env); err != nil {
		return "", fmt.Errorf("%w: %v", ErrBadEnv, err)
	}
	return m.add(ctx, owner, func(so SessionOptions) (*Session, error) {
		set := maps.Clone(so.SetEnv)
		if set == nil {
			set = map[string]string{}
		}
		maps.Copy(set, env)
		so.SetEnv = set
		return m.sb.NewSession(ctx, so)
	})
}

// ErrBadEnv is wrapped by the error of CreateWithEnv for an environment
// that cannot be given to a guest.
var ErrBadEnv = fmt.Errorf("sandbox: bad environment")
