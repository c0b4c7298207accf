package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/wasmeval/wasmeval/sandbox"
)

// envFlags are --env NAME=VALUE and --env-file FILE, which eval, serve and
// mcp share: variables set in every session's guest environment, over the
// default one (sandbox.SessionOptions.SetEnv).
type envFlags struct {
	vars  envVars    // --env, in order
	files stringList // --env-file, in order
}

const envUsage = `  --env NAME=VALUE
        set NAME in each session's guest environment (repeat for several);
        it is added to the default environment (HOME and PWD set to the
        session root, and the host's PATH, LANG, TZ and LC_* variables) or
        replaces a variable of it. Names are letters, digits and '_'. A
        secret-looking name (*_API_KEY, *_TOKEN, *_SECRET, AWS_*, ...) is
        passed as given, with a note on stderr: you asked for it
  --env-file FILE
        read NAME=VALUE lines from FILE (repeatable): blank lines and lines
        starting with # are skipped, "export " before a name is allowed, and
        a value in '...' or "..." is unquoted ("..." takes \n, \t, \", \$
        and \\).
        No $VAR is expanded: nothing of the host's environment is read.
        --env wins over a file, a later file over an earlier one
`

// envVars is the repeatable --env flag; each value is checked as it is
// given, so a bad one is refused with the flag's name.
type envVars []string

func (e *envVars) String() string { return strings.Join(*e, " ") }

func (e *envVars) Set(v string) error {
	name, _, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("%q has no '='; give NAME=VALUE (NAME= for an empty value)", v)
	}
	if err := sandbox.CheckEnvName(name); err != nil {
		return err
	}
	*e = append(*e, v)
	return nil
}

func (e *envFlags) register(fs *flag.FlagSet) {
	fs.Var(&e.vars, "env", "")
	fs.Var(&e.files, "env-file", "")
}

// load returns the variables the flags give, or an error that names the
// flag (and the file's line) at fault.
func (e *envFlags) load() (map[string]string, error) {
	env := map[string]string{}
	for _, path := range e.files {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("--env-file %s: %v", path, err)
		}
		vars, err := parseEnvFile(f, path)
		f.Close()
		if err != nil {
			return nil, err
		}
		for k, v := range vars {
			env[k] = v
		}
	}
	for _, kv := range e.vars {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if err := sandbox.CheckEnv(env); err != nil {
		return nil, fmt.Errorf("--env: %v", err)
	}
	return env, nil
}

// apply sets the flags' variables on o, noting on stderr each
// secret-looking name that will reach the guest.
func (e *envFlags) apply(o *sandbox.SessionOptions, cmd string, stderr io.Writer) error {
	env, err := e.load()
	if err != nil || len(env) == 0 {
		return err
	}
	var secret []string
	for k := range env {
		if sandbox.SecretEnvName(k) {
			secret = append(secret, k)
		}
	}
	sort.Strings(secret)
	for _, k := range secret {
		fmt.Fprintf(stderr, "wasmeval %s: note: --env %s looks like a secret's name; the guest sees it, as asked\n", cmd, k)
	}
	o.SetEnv = env
	return nil
}

// maxEnvFileBytes caps an --env-file, well past any real one.
const maxEnvFileBytes = 4 << 20

// parseEnvFile reads NAME=VALUE lines (see envUsage). A bad line is an
// error naming the file and the line: "--env-file F:3: ...".
func parseEnvFile(r io.Reader, path string) (map[string]string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxEnvFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("--env-file %s: %v", path, err)
	}
	if len(data) > maxEnvFileBytes {
		return nil, fmt.Errorf("--env-file %s: larger than %d MiB; is it an environment file?", path, maxEnvFileBytes>>20)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxEnvFileBytes+1)
	for n := 1; sc.Scan(); n++ {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("--env-file %s:%d: %s", path, n, fmt.Sprintf(format, a...))
		}
		line := strings.TrimSpace(strings.TrimSuffix(sc.Text(), "\r"))
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "export "); ok {
			line = strings.TrimSpace(rest)
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			return nil, bad("%q has no '='; write NAME=VALUE", clipText(line, 60))
		}
		name = strings.TrimSpace(name)
		if err := sandbox.CheckEnvName(name); err != nil {
			return nil, bad("%v", err)
		}
		value, err := envValue(strings.TrimSpace(value))
		if err != nil {
			return nil, bad("%s: %v", name, err)
		}
		env[name] = value
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("--env-file %s: %v", path, err)
	}
	return env, nil
}

// envValue unquotes a value written '...' or "..."; a bare value is taken
// as it is (up to a " #" comment).
func envValue(v string) (string, error) {
	switch {
	case v == "":
		return "", nil
	case v[0] == '\'':
		end := strings.IndexByte(v[1:], '\'')
		if end < 0 {
			return "", fmt.Errorf("the value opens a ' quote it never closes")
		}
		if rest := strings.TrimSpace(v[end+2:]); rest != "" && !strings.HasPrefix(rest, "#") {
			return "", fmt.Errorf("text after the closing ' quote: %q", clipText(rest, 40))
		}
		return v[1 : end+1], nil
	case v[0] == '"':
		var b strings.Builder
		for i := 1; i < len(v); i++ {
			switch c := v[i]; c {
			case '\\':
				if i+1 == len(v) {
					return "", fmt.Errorf("the value ends in a lone backslash")
				}
				i++
				switch v[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				case '"', '\\', '$':
					b.WriteByte(v[i])
				default:
					return "", fmt.Errorf(`\%c is not an escape; "..." takes \n, \t, \", \$ and \\`, v[i])
				}
			case '"':
				if rest := strings.TrimSpace(v[i+1:]); rest != "" && !strings.HasPrefix(rest, "#") {
					return "", fmt.Errorf("text after the closing \" quote: %q", clipText(rest, 40))
				}
				return b.String(), nil
			default:
				b.WriteByte(c)
			}
		}
		return "", fmt.Errorf(`the value opens a " quote it never closes`)
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v, nil
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
