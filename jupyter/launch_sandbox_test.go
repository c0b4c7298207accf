//go:build linux

// Linux only: the sandbox and its runtimes (package wasm: memfd guest
// memories) build on Linux only.

package jupyter_test

import (
	"testing"

	"github.com/wasmeval/wasmeval/jupyter"
	"github.com/wasmeval/wasmeval/sandbox"
)

// The kernel's secret rule is sandbox's (this package cannot import
// sandbox, so it keeps a copy): the two must agree.
func TestSecretEnvNameMatchesSandbox(t *testing.T) {
	names := []string{
		"OPENAI_API_KEY", "openai_api_key", "GITHUB_TOKEN", "KEY", "TOKEN", "API_KEY", "APIKEY", "SECRET",
		"DB_PASSWORD", "DB_PASSWD", "X_PASS", "GOOGLE_APPLICATION_CREDENTIALS", "X_CREDENTIAL", "BASIC_AUTH",
		"AWS_REGION", "AZURE_TENANT", "WASMEVAL_JUPYTER_TOKEN", "SSH_AUTH_SOCK", "GPG_TTY", "MY_APIKEY",
		"PATH", "HOME", "LANG", "TZ", "KEYBOARD", "TOKENIZERS_PARALLELISM", "PASSAGE", "AUTHOR", "LC_ALL",
		"VIRTUAL_ENV", "PYTHONPATH", "MONKEY", "PERPLEXITY_COOKIES",
	}
	for _, n := range names {
		if got, want := jupyter.SecretEnvName(n), sandbox.SecretEnvName(n); got != want {
			t.Errorf("jupyter.SecretEnvName(%q) = %v, sandbox.SecretEnvName = %v", n, got, want)
		}
	}
}
