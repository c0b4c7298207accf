// Package tape is the format of wasmeval's session recordings ("tapes"):
// what a recorded session started from and, in order, everything that
// crossed its boundary, so that the session can be replayed byte for byte
// on another machine (see the replay package and `wasmeval replay`).
//
// # Format
//
// A tape is a zstd stream (github.com/klauspost/compress/zstd) of NDJSON:
// one JSON object a line, each a Record whose "t" names its type. The
// first record is the header; then come the root's initial entries
// ("dir", "file", "symlink"), then the session's events in the order they
// happened: "request", the guest's reads of clocks ("clock") and
// randomness ("rand"), with "reader" where the runtime instance that reads
// them changes (the session's Python and JavaScript read at once, each in
// an order of its own), host calls with their answers ("call"), and each
// request's "result".
//
// Why this encoding:
//   - Streamable: a recorder writes a record as it happens and ends a zstd
//     frame at most FlushDelay after a request ends (Writer.FlushSoon), so
//     a tape cut short by a crash still holds every request that finished
//     before that; a reader decodes records one at a time without holding
//     the tape in memory. A frame at every request would cost most of what
//     recording a small request costs.
//   - Appendable: zstd streams concatenate (a decoder reads frame after
//     frame), and so do NDJSON lines, so tapes can be appended to.
//   - Diff-friendly: `zstd -dc a.wtape | diff - <(zstd -dc b.wtape)`
//     shows which record changed, one line each; binary data (file
//     contents, random bytes) is base64 inside its line.
//   - Small: clock reads and random bytes repeat a lot and compress well.
//
// Files of the root below an embedding cap (DefaultEmbedLimit) are
// embedded; larger ones are named by size and SHA-256 and must be provided
// at replay (RestoreRoot says which is missing).
//
// Decoding is strict: an unknown record type, a field that does not belong
// to its type, a path that leaves the root or a header of another format
// version is an error that names the line.
package tape
