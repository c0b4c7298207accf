package prelude

import "embed"

// JS holds the guest-side helpers of the JavaScript runtime (runtimes/js):
// one file per concern under js/, each a function expression that the
// runtime calls once per VM with its host bindings. They are plain
// JavaScript, so they need no build step.
//
//go:embed js/*.js
var JS embed.FS
