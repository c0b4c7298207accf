package js

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"hash"
	"io"
	mathrand "math/rand/v2"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/wasmeval/wasmeval/internal/goja"
	"github.com/wasmeval/wasmeval/internal/goja_nodejs/buffer"
	nodeurl "github.com/wasmeval/wasmeval/internal/goja_nodejs/url"

	"github.com/wasmeval/wasmeval/wasm"
)

// The Node and Web APIs of the guest: globals (prelude/js/web.js) and
// built-in modules (prelude/js/node.js), on these host functions.
//
// Buffer, URL and URLSearchParams are github.com/dop251/goja_nodejs's
// (buffer, url), extended in web.js with what those lack (isBuffer,
// byteLength, allocUnsafe, compare, ...). goja_nodejs's require, console,
// eventloop and util are not used: the runtime's own loader guards the code
// it compiles, confines it to the root and sees edited files; its console
// and event loop carry the cell's output and host calls; util's format and
// inspect are the prelude's, which match Node's output.

// builtinModules are the modules require('name') and require('node:name')
// give, made by prelude/js/node.js.
var builtinModules = []string{
	"assert", "buffer", "crypto", "events", "fs", "fs/promises", "module", "os", "path", "path/posix",
	"process", "querystring", "readline", "stream", "stream/promises", "string_decoder", "timers", "timers/promises",
	"tty", "url", "util", "util/types", "zlib",
}

// nodeState is the per-instance state of the Node APIs.
type nodeState struct {
	builtin goja.Callable // internal.builtin(name)
	gfs     *wasm.GuestFS // the fs module's view of the root; nil until used
	fds     map[int]*openFile
	nextFD  int
	rand    *mathrand.PCG // after the session's Rand ran out, as random does
	// packages are the package.json files read, by root-relative path.
	packages map[string]packageFile
}

func isBuiltin(name string) bool {
	i := sort.SearchStrings(builtinModules, name)
	return i < len(builtinModules) && builtinModules[i] == name
}

// builtinName says whether spec names a built-in module (with or without
// the node: scheme) and returns the name without it. A node: specifier is
// always one, known or not.
func builtinName(spec string) (string, bool) {
	if name, ok := strings.CutPrefix(spec, "node:"); ok {
		return name, true
	}
	return spec, isBuiltin(spec)
}

// checkBuiltin throws for a node: name that is not one of the modules.
func (in *instance) checkBuiltin(spec, name string) {
	if !isBuiltin(name) {
		in.requireError("MODULE_NOT_FOUND", "Cannot find module '%s': the sandbox has no %s module (no processes, network, workers or native code); "+
			"its built-in modules are %s", spec, name, strings.Join(builtinModules, ", "))
	}
}

// builtin returns the exports of a built-in module.
func (in *instance) builtin(spec, name string) goja.Value {
	in.checkBuiltin(spec, name)
	v, err := in.node.builtin(goja.Undefined(), in.vm.ToValue(name))
	if err != nil {
		in.rethrow(err)
	}
	return v
}

// setNodeHost adds the host functions of the Node and Web APIs.
func (in *instance) setNodeHost(set func(string, any)) {
	in.closeNode()
	in.node = nodeState{nextFD: 3}
	set("goModule", in.goModule)
	set("randomFill", in.randomFill)
	set("digest", digest)
	set("hmac", hmacDigest)
	set("btoa", in.btoa)
	set("atob", in.atob)
	set("utf8Encode", in.utf8Encode)
	set("utf8Decode", in.utf8Decode)
	set("encodeText", in.encodeText)
	set("decodeText", in.decodeText)
	set("platform", "linux")
	set("builtinModules", builtinModules)
	set("createRequire", in.createRequire)
	set("zlib", in.zlibDo)
	in.setFSHost(set)
}

// nodeHooks takes the prelude's functions that the host calls.
func (in *instance) nodeHooks(internal *goja.Object) bool {
	f, ok := goja.AssertFunction(internal.Get("builtin"))
	in.node.builtin = f
	return ok
}

// closeNode closes the files the guest left open.
func (in *instance) closeNode() {
	for fd, f := range in.node.fds {
		_ = f.file.Close()
		delete(in.node.fds, fd)
	}
	if in.node.gfs != nil {
		_ = in.node.gfs.Close()
		in.node.gfs = nil
	}
}

// goModule returns the exports of one of goja_nodejs's modules.
func (in *instance) goModule(name string) goja.Value {
	vm := in.vm
	module := vm.NewObject()
	_ = module.Set("exports", vm.NewObject())
	switch name {
	case "buffer":
		buffer.Require(vm, module)
	case "url":
		nodeurl.Require(vm, module)
	default:
		panic(vm.NewTypeError("no Go module " + name))
	}
	return module.Get("exports")
}

// bytesOf returns the bytes of a typed array, DataView or ArrayBuffer
// (shared with the guest: writes show) and the value as a string otherwise.
func (in *instance) bytesOf(v goja.Value) ([]byte, bool) {
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, false
	}
	switch x := obj.Export().(type) {
	case []byte:
		return x, true
	case goja.ArrayBuffer:
		return x.Bytes(), true
	}
	// Other typed arrays and DataView: their buffer, offset and length.
	ab, ok := obj.Get("buffer").Export().(goja.ArrayBuffer)
	if !ok {
		return nil, false
	}
	off := obj.Get("byteOffset").ToInteger()
	n := obj.Get("byteLength").ToInteger()
	b := ab.Bytes()
	if off < 0 || n < 0 || off+n > int64(len(b)) {
		return nil, false
	}
	return b[off : off+n], true
}

// randomFill fills a typed array with bytes from InstanceOptions.Rand, the
// session's source (deterministic under a seeded one); should it run out,
// from a generator with a fixed seed, as Math.random does.
func (in *instance) randomFill(v goja.Value) {
	b, ok := in.bytesOf(v)
	if !ok {
		panic(in.vm.NewTypeError("The data argument must be an integer-type TypedArray"))
	}
	if in.node.rand == nil {
		if _, err := io.ReadFull(in.opts.Rand, b); err == nil {
			return
		}
		in.node.rand = mathrand.NewPCG(1, 1)
	}
	for i := 0; i < len(b); i += 8 {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], in.node.rand.Uint64())
		copy(b[i:], w[:])
	}
}

func newHash(alg string) func() hash.Hash {
	switch strings.ToLower(strings.ReplaceAll(alg, "-", "")) {
	case "md5":
		return md5.New
	case "sha1":
		return sha1.New
	case "sha224":
		return sha256.New224
	case "sha256":
		return sha256.New
	case "sha384":
		return sha512.New384
	case "sha512":
		return sha512.New
	}
	return nil
}

// digest hashes the concatenation of parts (typed arrays).
func digest(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
	mk := newHash(call.Argument(0).String())
	if mk == nil {
		panic(vm.NewTypeError("Digest method not supported: " + call.Argument(0).String() + " (md5, sha1, sha224, sha256, sha384 and sha512 are)"))
	}
	h := mk()
	writeParts(vm, h, call.Argument(1))
	return vm.ToValue(vm.NewArrayBuffer(h.Sum(nil)))
}

// hmacDigest is digest with a key.
func hmacDigest(call goja.FunctionCall, vm *goja.Runtime) goja.Value {
	mk := newHash(call.Argument(0).String())
	if mk == nil {
		panic(vm.NewTypeError("Invalid digest: " + call.Argument(0).String()))
	}
	var key []byte
	_ = vm.ExportTo(call.Argument(1), &key)
	h := hmac.New(mk, key)
	writeParts(vm, h, call.Argument(2))
	return vm.ToValue(vm.NewArrayBuffer(h.Sum(nil)))
}

func writeParts(vm *goja.Runtime, w io.Writer, parts goja.Value) {
	obj, ok := parts.(*goja.Object)
	if !ok {
		return
	}
	n := obj.Get("length").ToInteger()
	for i := int64(0); i < n; i++ {
		var b []byte
		if err := vm.ExportTo(obj.Get(strconv.FormatInt(i, 10)), &b); err == nil {
			_, _ = w.Write(b)
		}
	}
}

// domException throws a DOMException-like error with a name.
func (in *instance) domException(name, msg string) {
	if c := in.hooks.domException; c != nil {
		obj, err := c(nil, in.vm.ToValue(msg), in.vm.ToValue(name))
		if err == nil {
			panic(obj)
		}
	}
	panic(in.vm.NewTypeError(msg))
}

// btoa is the browser's: Latin-1 text to base64.
func (in *instance) btoa(call goja.FunctionCall) goja.Value {
	if len(call.Arguments) == 0 {
		panic(in.vm.NewTypeError("The \"data\" argument must be specified"))
	}
	s := call.Argument(0).String()
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			in.domException("InvalidCharacterError", "Invalid character: btoa() takes Latin-1 text only (encode other text first, e.g. Buffer.from(text).toString('base64'))")
		}
		b = append(b, byte(r))
	}
	return in.vm.ToValue(base64.StdEncoding.EncodeToString(b))
}

// atob is the browser's: base64 (forgiving: white space, no padding) to
// Latin-1 text.
func (in *instance) atob(call goja.FunctionCall) goja.Value {
	if len(call.Arguments) == 0 {
		panic(in.vm.NewTypeError("The \"data\" argument must be specified"))
	}
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\n' || r == '\f' || r == '\r' {
			return -1
		}
		return r
	}, call.Argument(0).String())
	if len(s)%4 == 0 {
		s = strings.TrimSuffix(strings.TrimSuffix(s, "="), "=")
	}
	b, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil || len(s)%4 == 1 {
		in.domException("InvalidCharacterError", "The string to be decoded is not correctly encoded.")
	}
	u := make([]uint16, len(b))
	for i, c := range b {
		u[i] = uint16(c)
	}
	return in.vm.ToValue(string(utf16.Decode(u)))
}

// utf8Encode is TextEncoder.encode: UTF-8, lone surrogates as U+FFFD.
func (in *instance) utf8Encode(s string) goja.Value {
	in.reserveBytes(int64(len(s)))
	return in.vm.ToValue(in.vm.NewArrayBuffer([]byte(strings.ToValidUTF8(s, "\uFFFD"))))
}

// utf8Decode is TextDecoder.decode for UTF-8: invalid bytes become U+FFFD,
// or, with fatal, throw.
func (in *instance) utf8Decode(v goja.Value, fatal, ignoreBOM bool) goja.Value {
	b, ok := in.bytesOf(v)
	if !ok {
		if goja.IsUndefined(v) {
			return in.vm.ToValue("")
		}
		panic(in.vm.NewTypeError("The \"input\" argument must be an instance of ArrayBuffer or ArrayBufferView"))
	}
	if !ignoreBOM && len(b) >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf {
		b = b[3:]
	}
	if fatal && !utf8.Valid(b) {
		err := in.vm.NewTypeError("The encoded data was not valid for encoding utf-8")
		setOwn(err, "code", in.vm.ToValue("ERR_ENCODING_INVALID_ENCODED_DATA"))
		panic(err)
	}
	in.reserveBytes(2 * int64(len(b)))
	return in.vm.ToValue(strings.ToValidUTF8(string(b), "\uFFFD"))
}

// reserveBytes asks the memory guard for n bytes when n is worth it.
func (in *instance) reserveBytes(n int64) {
	if n > in.memLimit {
		in.throwRange("Array buffer allocation failed")
	}
	if n >= 1<<20 {
		in.reserve(n)
	}
}

// encodeText is Buffer.from(text, encoding) for the encodings goja_nodejs
// lacks: latin1 (binary), ascii, utf16le (ucs2) and base64url.
func (in *instance) encodeText(s goja.Value, enc string) goja.Value {
	var b []byte
	switch enc {
	case "latin1", "binary", "ascii":
		str := s.String()
		in.reserveBytes(int64(len(str)))
		u := utf16.Encode([]rune(str))
		b = make([]byte, len(u))
		for i, c := range u {
			b[i] = byte(c)
		}
	case "utf16le", "ucs2":
		u := utf16.Encode([]rune(s.String()))
		in.reserveBytes(2 * int64(len(u)))
		b = make([]byte, 2*len(u))
		for i, c := range u {
			binary.LittleEndian.PutUint16(b[2*i:], c)
		}
	case "base64url":
		t := strings.TrimRight(s.String(), "=")
		t = strings.NewReplacer("+", "-", "/", "_").Replace(t)
		var err error
		b, err = base64.RawURLEncoding.DecodeString(t)
		if err != nil {
			// Node decodes what it can and stops at the first bad character.
			n := len(t) / 4 * 4
			b, _ = base64.RawURLEncoding.DecodeString(t[:n])
		}
	default:
		panic(in.vm.NewTypeError("Unknown encoding: " + enc))
	}
	return in.vm.ToValue(in.vm.NewArrayBuffer(b))
}

// decodeText is buf.toString(encoding) for the encodings encodeText makes.
func (in *instance) decodeText(v goja.Value, enc string) goja.Value {
	b, ok := in.bytesOf(v)
	if !ok {
		panic(in.vm.NewTypeError("argument must be a buffer"))
	}
	in.reserveBytes(2 * int64(len(b)))
	switch enc {
	case "latin1", "binary", "ascii":
		u := make([]uint16, len(b))
		for i, c := range b {
			if enc == "ascii" {
				c &= 0x7f
			}
			u[i] = uint16(c)
		}
		return in.vm.ToValue(string(utf16.Decode(u)))
	case "utf16le", "ucs2":
		u := make([]uint16, len(b)/2)
		for i := range u {
			u[i] = binary.LittleEndian.Uint16(b[2*i:])
		}
		return in.vm.ToValue(string(utf16.Decode(u)))
	case "base64url":
		return in.vm.ToValue(base64.RawURLEncoding.EncodeToString(b))
	}
	panic(in.vm.NewTypeError("Unknown encoding: " + enc))
}

// createRequire is module.createRequire: a require function that resolves
// from the file filename (a path or a file: URL), as that file's own would.
func (in *instance) createRequire(filename string) goja.Value {
	p := filename
	if u, err := url.Parse(filename); err == nil && u.Scheme == "file" {
		p = u.Path
	}
	if !path.IsAbs(p) {
		err := in.vm.NewTypeError("The argument 'filename' must be a file URL object, file URL string, or absolute path string. Received " + quoteJSON(filename))
		setOwn(err, "code", in.vm.ToValue("ERR_INVALID_ARG_VALUE"))
		panic(err)
	}
	dir := path.Dir(path.Clean(p))
	if strings.HasSuffix(p, "/") {
		dir = path.Clean(p)
	}
	return in.requireFunc(dir)
}

// zlibDo runs one of zlib's sync functions on data: gzip, gunzip, deflate,
// inflate, deflateRaw, inflateRaw (and unzip, which takes either). What a
// decompression makes is capped by the session's memory limit: a small
// input can expand without bound.
func (in *instance) zlibDo(op string, data goja.Value, level int) goja.Value {
	b, ok := in.bytesOf(data)
	if !ok {
		err := in.vm.NewTypeError("The \"buffer\" argument must be of type string or an instance of Buffer, TypedArray, DataView, or ArrayBuffer")
		setOwn(err, "code", in.vm.ToValue("ERR_INVALID_ARG_TYPE"))
		panic(err)
	}
	if level < -1 || level > 9 {
		level = -1
	}
	var out bytes.Buffer
	var err error
	switch op {
	case "gzip", "deflate", "deflateRaw":
		var w io.WriteCloser
		switch op {
		case "gzip":
			w, err = gzip.NewWriterLevel(&out, level)
		case "deflate":
			w, err = zlib.NewWriterLevel(&out, level)
		default:
			w, err = flate.NewWriter(&out, level)
		}
		if err == nil {
			in.reserveBytes(int64(len(b)) / 2)
			_, err = w.Write(b)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
		}
	case "gunzip", "inflate", "inflateRaw", "unzip":
		var r io.Reader
		switch {
		case op == "gunzip" || (op == "unzip" && len(b) > 1 && b[0] == 0x1f && b[1] == 0x8b):
			r, err = gzip.NewReader(bytes.NewReader(b))
		case op == "inflate" || op == "unzip":
			r, err = zlib.NewReader(bytes.NewReader(b))
		default:
			r = flate.NewReader(bytes.NewReader(b))
		}
		if err == nil {
			// In chunks, not a doubling buffer: the peak is twice the
			// output, and the output at most a quarter of the limit.
			limit := in.memLimit / 4
			var chunks [][]byte
			var n int64
			for err == nil {
				in.checkStopped("zlib", op)
				if n > limit {
					e := in.rangeError("Cannot create a Buffer larger than " + itoa(limit>>20) + " MiB: the data decompresses to more than the session's memory limit allows")
					setOwn(e, "code", in.vm.ToValue("ERR_BUFFER_TOO_LARGE"))
					panic(e)
				}
				c := make([]byte, 1<<20)
				var k int
				k, err = io.ReadFull(r, c)
				chunks = append(chunks, c[:k])
				n += int64(k)
			}
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = nil
			}
			if err == nil {
				in.reserveBytes(n)
				out.Grow(int(n))
				for _, c := range chunks {
					out.Write(c)
				}
			}
		}
	default:
		panic(in.vm.NewTypeError("zlib: no operation " + op))
	}
	if err != nil {
		e := in.vm.NewError("Error", "zlib "+op+": "+err.Error())
		setOwn(e, "code", in.vm.ToValue("Z_DATA_ERROR"))
		setOwn(e, "errno", in.vm.ToValue(-3))
		panic(e)
	}
	return in.vm.ToValue(in.vm.NewArrayBuffer(out.Bytes()))
}
