module github.com/wasmeval/wasmeval

go 1.26

require (
	github.com/dop251/goja v0.0.0-20260917113740-793a2a65c13b
	github.com/klauspost/compress v1.20.3
	github.com/tetratelabs/wazero v1.12.0
)

require (
	github.com/dlclark/regexp2/v2 v2.5.2 // indirect
	github.com/go-sourcemap/sourcemap v2.1.4+incompatible // indirect
	github.com/google/pprof v0.0.0-20240727154555-813a5fbdbec8 // indirect
	golang.org/x/sys v0.44.0 // indirect
	golang.org/x/text v0.16.0 // indirect
)
