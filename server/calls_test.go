package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wasmeval/wasmeval/hostcalls"
	"github.com/wasmeval/wasmeval/sandbox"
	"github.com/wasmeval/wasmeval/server"
)

// streamEval runs req in session id as a streaming client that answers
// each "call" event with answer's body through the calls endpoint (nil:
// leave it unanswered). It returns the calls seen and the final result.
func streamEval(t *testing.T, ts *testServer, token, id string, req sandbox.Request, answer func(server.CallEvent, json.RawMessage) any) ([]server.CallEvent, *sandbox.Result) {
	t.Helper()
	body, _ := json.Marshal(req)
	hr, err := http.NewRequest("POST", ts.URL+"/v1/sessions/"+id+"/eval", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Authorization", "Bearer "+token)
	hr.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	var calls []server.CallEvent
	var name string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "event: "); ok {
			name = n
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		switch name {
		case "call":
			var ev struct {
				server.CallEvent
				Request json.RawMessage `json:"request"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("call event %s: %v", data, err)
			}
			ev.CallEvent.Request = ev.Request
			calls = append(calls, ev.CallEvent)
			if a := answer(ev.CallEvent, ev.Request); a != nil {
				r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/calls/"+ev.CallID, token, a)
				wantStatus(t, r, http.StatusNoContent)
			}
		case "done":
			var res sandbox.Result
			if err := json.Unmarshal([]byte(data), &res); err != nil {
				t.Fatal(err)
			}
			return calls, &res
		case "error":
			t.Fatalf("error event: %s", data)
		}
	}
	t.Fatalf("stream ended without a result: %v", sc.Err())
	return nil, nil
}

func TestHostCallRoundTrip(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	t.Run("js tool", func(t *testing.T) {
		calls, res := streamEval(t, ts, tokenA, id, cells("js", `const r = await tool.echo({x: 1}); print(JSON.stringify(r))`),
			func(ev server.CallEvent, req json.RawMessage) any {
				var tc server.ToolCall
				json.Unmarshal(req, &tc)
				return map[string]any{"result": map[string]any{"echoed": tc.Args, "name": tc.Name}}
			})
		if len(calls) != 1 || calls[0].Kind != "tool" || calls[0].CallID == "" {
			t.Fatalf("calls %+v", calls)
		}
		if got := output(res); got != `{"echoed":{"x":1},"name":"echo"}`+"\n" {
			t.Errorf("output %q", got)
		}
	})
	t.Run("js error answer", func(t *testing.T) {
		_, res := streamEval(t, ts, tokenA, id, cells("js", `try { await tool.nope({}) } catch (e) { print(e.message) }`),
			func(server.CallEvent, json.RawMessage) any {
				return map[string]any{"error": map[string]string{"message": "no tool named nope"}}
			})
		if got := output(res); got != "tool.nope: no tool named nope\n" {
			t.Errorf("output %q", got)
		}
	})
	t.Run("py llm", func(t *testing.T) {
		needPython(t, ts)
		calls, res := streamEval(t, ts, tokenA, id, cells("py", `print(llm('hi'))`),
			func(ev server.CallEvent, req json.RawMessage) any {
				var lc server.LLMCall
				json.Unmarshal(req, &lc)
				return map[string]any{"result": "answer to " + lc.Prompt + " (" + lc.Model + ")"}
			})
		if len(calls) != 1 || calls[0].Kind != "llm" {
			t.Fatalf("calls %+v", calls)
		}
		if got := output(res); got != "answer to hi (default)\n" {
			t.Errorf("output %q", got)
		}
	})
}

func TestHostCallTimeout(t *testing.T) {
	ts := newServer(t, server.Config{CallTimeout: 200 * time.Millisecond})
	id := ts.create(t, tokenA)
	var callID string
	_, res := streamEval(t, ts, tokenA, id, cells("js", `try { await llm('hi') } catch (e) { print(e.message) }`),
		func(ev server.CallEvent, _ json.RawMessage) any { callID = ev.CallID; return nil })
	if got := output(res); !strings.Contains(got, "llm: the client did not answer within 200ms") {
		t.Errorf("output %q", got)
	}
	// Too late: the call is gone.
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/calls/"+callID, tokenA, `{"result":"late"}`)
	wantStatus(t, r, http.StatusNotFound)
}

func TestHostCallIsolationAndBadAnswers(t *testing.T) {
	ts := newServer(t, server.Config{})
	id := ts.create(t, tokenA)
	_, res := streamEval(t, ts, tokenA, id, cells("js", `print(await tool.t({}))`),
		func(ev server.CallEvent, _ json.RawMessage) any {
			url := ts.URL + "/v1/sessions/" + id + "/calls/" + ev.CallID
			tests := []struct {
				name, token, url, body string
				status                 int
			}{
				{"other token", tokenB, url, `{"result":"stolen"}`, http.StatusNotFound},
				{"other session", tokenA, ts.URL + "/v1/sessions/other/calls/" + ev.CallID, `{"result":"x"}`, http.StatusNotFound},
				{"no token", "", url, `{"result":"x"}`, http.StatusUnauthorized},
				{"neither", tokenA, url, `{}`, http.StatusBadRequest},
				{"both", tokenA, url, `{"result":1,"error":{"message":"x"}}`, http.StatusBadRequest},
				{"unknown field", tokenA, url, `{"answer":1}`, http.StatusBadRequest},
			}
			for _, tt := range tests {
				if r := do(t, "POST", tt.url, tt.token, tt.body); r.status != tt.status {
					t.Errorf("%s: status %d, want %d: %s", tt.name, r.status, tt.status, r.body)
				}
			}
			return map[string]any{"result": "mine"}
		})
	if got := output(res); got != "mine\n" {
		t.Errorf("output %q", got)
	}
	r := do(t, "POST", ts.URL+"/v1/sessions/"+id+"/calls/nosuchcall", tokenA, `{"result":1}`)
	wantStatus(t, r, http.StatusNotFound)
}

func TestHostCallsWithoutStreaming(t *testing.T) {
	t.Run("not configured", func(t *testing.T) {
		ts := newServer(t, server.Config{})
		id := ts.create(t, tokenA)
		got := output(ts.eval(t, tokenA, id, cells("js", `try { await llm('hi') } catch (e) { print(e.message) }`)))
		if !strings.Contains(got, "llm: no LLM configured on this server; stream a session's eval") {
			t.Errorf("output %q", got)
		}
	})
	t.Run("server backend", func(t *testing.T) {
		ts := newServer(t, server.Config{Host: hostcalls.HostFuncs{
			LLMFunc: func(_ context.Context, r hostcalls.LLMRequest) (hostcalls.LLMResponse, error) {
				return hostcalls.LLMResponse{Text: "server says " + r.Prompt}, nil
			},
		}})
		id := ts.create(t, tokenA)
		if got := output(ts.eval(t, tokenA, id, cells("js", `print(await llm('hi'))`))); got != "server says hi\n" {
			t.Errorf("eval output %q", got)
		}
		r := do(t, "POST", ts.URL+"/v1/run", tokenA, `{"language":"js","code":"print(await llm('yo'))"}`)
		wantStatus(t, r, http.StatusOK)
		if !strings.Contains(string(r.body), "server says yo") {
			t.Errorf("run %s", r.body)
		}
	})
}
