package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"time"

	kernel "github.com/wasmeval/wasmeval/jupyter"
	"github.com/wasmeval/wasmeval/sandbox"
)

const jupyterURLUsage = `  --jupyter-url URL
        run the jupyter Python backend's kernels on a Jupyter Server or
        Kernel Gateway at URL (its base URL, such as http://127.0.0.1:8888)
        instead of starting them on this machine; the token is read from
        the environment variable WASMEVAL_JUPYTER_TOKEN, never from the
        command line, and never passed to a kernel. The server is checked
        at start (GET /api/kernelspecs); each session gets a kernel of the
        server's default kernel spec (POST /api/kernels), spoken to over
        its websocket, interrupted and deleted over REST. Needs
        --python-backend jupyter (or --python-backend-choice). The server's
        kernels run on its machine, without wasmeval's confinement
`

// gatewayDialTimeout bounds the check of --jupyter-url's server at start.
const gatewayDialTimeout = 30 * time.Second

// jupyterURLFlag is --jupyter-url of eval, serve and mcp.
type jupyterURLFlag struct {
	url string
}

func (f *jupyterURLFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "jupyter-url", "", "a Jupyter Server or Kernel Gateway whose kernels the jupyter backend uses (token: $WASMEVAL_JUPYTER_TOKEN)")
}

// check says what is wrong with --jupyter-url on its own (before anything
// starts): a URL that is not http(s) with a host, or no use for it.
func (f *jupyterURLFlag) check(sbo sandbox.Options) error {
	if f.url == "" {
		return nil
	}
	u, err := url.Parse(f.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("--jupyter-url %q: give the server's http:// or https:// base URL, such as http://127.0.0.1:8888", redactedURL(f.url))
	}
	if sbo.PythonBackend != sandbox.PythonJupyter && !sbo.PythonBackendChoice {
		return fmt.Errorf("--jupyter-url runs the jupyter backend's kernels, and Python runs on the wasm backend here: add --python-backend jupyter (or --python-backend-choice)")
	}
	return nil
}

// apply checks --jupyter-url (after the backend flags set sbo) and the
// server with the token of WASMEVAL_JUPYTER_TOKEN, then points the
// jupyter backend's kernels at it; without the flag it does nothing. It
// writes what went wrong to stderr as cmd's and returns the exit status:
// exitInvalid for a bad flag, exitHost for a server that cannot be used.
func (f *jupyterURLFlag) apply(ctx context.Context, sbo *sandbox.Options, cmd string, stderr io.Writer) int {
	if f.url == "" {
		return exitOK
	}
	if err := f.check(*sbo); err != nil {
		fmt.Fprintf(stderr, "wasmeval %s: %v\n", cmd, err)
		return exitInvalid
	}
	ctx, cancel := context.WithTimeout(ctx, gatewayDialTimeout)
	defer cancel()
	g, err := kernel.DialGateway(ctx, f.url, os.Getenv(kernel.TokenEnv))
	if err != nil {
		fmt.Fprintf(stderr, "wasmeval %s: --jupyter-url: %v\n", cmd, err)
		return exitHost
	}
	sbo.Jupyter.Start = g.Start
	return exitOK
}

// redactedURL is raw without credentials or query, for messages.
func redactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return u.String()
}
