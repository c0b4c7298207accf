// Package hostcalls is the bridge between guest code and its host: the
// Host interface that an embedder implements to answer tool, llm and agent
// calls, the confined filesystem of a session (FS, on os.Root), and the
// Dispatcher that decodes the guest's host calls and serves them. It
// imports nothing else of wasmeval; sandbox.Options.Host is where a Host
// plugs in.
//
// # ABI
//
// Every helper of the guest (read, write, tool.<name>, llm, ...) that needs
// the host sends one request and gets one response, both a JSON object,
// through the runtime's host call (runtimes.InstanceOptions.Call; in Python
// the `_wasmeval.call_start`/`call_wait` imports, in JavaScript a promise).
// A request names its op and carries that op's fields; unknown fields are
// ignored, a missing optional field takes its default:
//
//	{"op":"read",   "path":P, "offset":1, "limit":null}        → text: lines offset..offset+limit-1 (1-indexed, with their ends)
//	{"op":"write",  "path":P, "content":S}                      → the file's absolute path (atomic; parents created)
//	{"op":"append", "path":P, "content":S}                      → the file's absolute path (parents created)
//	{"op":"tree",   "path":".", "max_depth":3, "show_hidden":false} → text, drawn as tree(1) draws it
//	{"op":"diff",   "a":S, "b":S, "a_name":"a", "b_name":"b"}   → text: a unified diff with 3 lines of context ("" when equal)
//	{"op":"diff",   "files":true, "a":P, "b":P}                 → the same of two files, under "a/P" and "b/P" headers
//	{"op":"output", "ids":[ID,...], "format":"text", "query":"", "offset":1, "limit":null}
//	                                                            → text ("raw" or none; "json": {"id","lines","text"}), a list of them for several ids ("text": joined)
//	{"op":"tool",   "name":N, "args":{...}}                     → the tool's result, any JSON value
//	{"op":"llm",    "prompt":S, "model":"default"|"smol"|"slow", "system":S, "schema":{...}|null}
//	                                                            → text, or the parsed object when a schema is given
//	{"op":"agent",  "prompt":S, "agent_type":S, "model":S, "context":S, "label":S, "schema":{...}|null}
//	                                                            → text, or the parsed object when a schema is given;
//	                                                              the response also has "output_id": "agent://LABEL-N"
//	{"op":"budget"}                                             → {"total", "spent", "remaining": {"seconds", "fuel", "agent_depth"}, "hard": true,
//	                                                               "timeout_seconds", "agent_depth", "max_agent_depth", "seconds_left"}
//
// The response is {"result": VALUE} on success and
// {"error": {"message": "..."}} on failure; the guest helpers return the
// value or raise (Python) / reject (JavaScript) with the message. Messages
// start with the helper's name and say what was wrong and what would be
// right, for example
// `read('../x'): the path leads outside the session root /w through '..'`
// or `llm: no LLM is configured for this sandbox (sandbox.Options.Host is nil)`.
//
// # Output
//
// output reads back the outputs the sandbox cut, by the ids their markers
// and meta.truncated[].outputId give (DispatcherOptions.Outputs reaches
// the session's store), and the answers of the session's agent calls, by
// the "agent://LABEL-N" id each agent response carries (the dispatcher
// keeps the last 256 of them, at most 16 MiB). query keeps the lines that contain it (a plain,
// case-sensitive substring, not a pattern); offset and limit then page
// through the lines left, 1-indexed as read's. In the "json" format,
// lines is the number of lines of the whole output and text the selection.
// Several ids give a list of texts ("raw", the default) or objects
// ("json"); the "text" format puts each selection under a "==> ID <=="
// header in one text, as head(1) does.
//
// # Paths
//
// A path is relative to the session root, or absolute and inside it. `..`
// that leaves the root is refused before the filesystem is touched; a
// symbolic link that leads out, planted before the call or swapped in
// during it, is refused by os.Root. A URI (anything with "://") is refused,
// and read refuses directories (use tree). Every refusal is an *FSError
// whose message says why.
//
// # Caps
//
// A guest cannot make the host allocate without bound. Per call: write and
// append content is capped at DefaultMaxWriteBytes (64 MiB) or an eighth of
// the session's memory limit, whichever is less (32 MiB at the default
// 256 MiB), the text of one read at DefaultMaxReadBytes (16 MiB) or a
// sixteenth of the limit, an answer at twice the read cap as JSON, a
// request at a quarter of the limit (refused unread, before decoding), a
// tool's arguments at DefaultMaxToolArgBytes (1 MiB), the text of an llm
// or agent call at DefaultMaxPromptBytes (4 MiB), a tree at 2000 entries,
// and agents nest at most MaxAgentDepth (3) deep. The Python runtime's
// transport also caps one request at 16 MiB, so in Python the helpers
// split larger writes into a write and appends.
//
// # Memory
//
// Per session (DispatcherOptions.MemoryLimitBytes, the session's memory
// limit): the calls a Dispatcher serves at once hold at most half of it
// (the request, its decoded fields, the file text, a diff's table, the
// answer), each call taking its share before it allocates; a call waits
// while other calls of the session (parallel) hold the rest, and one that
// would need more than the whole half fails with a message that says so.
// The runtime's calls in flight (requests copied out of the guest, answers
// not yet handed to it) hold at most the other half: CallBudget.
//
// # Disk quota
//
// The session root holds at most DiskQuotaBytes (DefaultDiskQuotaBytes,
// 1 GiB) and DiskQuotaFiles (DefaultDiskQuotaFiles, 100,000 entries); see
// DiskQuota for what counts. write and append that would pass it fail with
// "disk quota exceeded: the session root holds N of its M ..." (an
// *FSError that matches ErrDiskQuota), and so do the guest's own writes
// through its filesystem (ENOSPC in the guest).
package hostcalls
