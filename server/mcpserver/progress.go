package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wasmeval/wasmeval/sandbox"
)

// Streaming a tool call's cells to the client. While a cell runs, its
// output goes to the client as notifications/progress when the call has a
// progressToken (the message is the new output text: stdout, stderr, and
// the text of displays and of the last expression's value), and its
// status events (log(), phase, agent progress) as notifications/message
// at level info, cell_start and cell_end at debug, once the client set a
// logging level (the SDK sends no log messages before logging/setLevel).
//
// A cell never waits for its client: notifications go through a bounded
// queue that a goroutine of the call sends from. Output text that comes
// faster than progressInterval is joined into one notification; past
// maxPendingProgress bytes waiting, the rest is left out and the next
// message says how much. The call's answer is sent after the queue is
// written out (at most notifyDrainTimeout), so that a client sees a
// call's notifications before its result.

const (
	// progressInterval is the least time between two progress
	// notifications of a call.
	progressInterval = 50 * time.Millisecond
	// maxPendingProgress bounds the output text waiting to be sent.
	maxPendingProgress = 256 << 10
	// maxPendingLogs bounds the log messages waiting to be sent.
	maxPendingLogs = 256
	// notifyDrainTimeout is how long a call's answer waits for its
	// notifications to be sent.
	notifyDrainTimeout = 5 * time.Second
	// loggerName is the logger of the log messages.
	loggerName = "wasmeval"
)

// streamCalls is a receiving middleware: a tools/call runs with a
// sandbox.EventFunc that turns its cells' events into notifications.
func (s *Server) streamCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if method != "tools/call" || !ok || call.Session == nil || call.Params == nil {
			return next(ctx, method, req)
		}
		n := newNotifier(ctx, call.Session, call.Params.GetProgressToken())
		res, err := next(sandbox.WithEventFunc(ctx, n.event), method, req)
		n.finish()
		return res, err
	}
}

// notice is one queued notification: progress text or a log message.
type notice struct {
	text string // progress output; "" for a log message
	log  *mcp.LoggingMessageParams
}

// notifier sends one call's notifications from a goroutine of its own.
type notifier struct {
	ctx   context.Context
	ss    *mcp.ServerSession
	token any // the progressToken, or nil: no progress notifications

	mu          sync.Mutex
	queue       []notice
	pendingText int   // bytes of text in queue
	leftOut     int64 // output bytes left out since the last text queued
	logs        int   // log messages in queue
	logsLeftOut int
	closing     bool
	failed      bool // a send failed: the client is gone

	wake chan struct{}
	done chan struct{}
}

func newNotifier(ctx context.Context, ss *mcp.ServerSession, token any) *notifier {
	n := &notifier{ctx: ctx, ss: ss, token: token, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go n.send()
	return n
}

// event queues what ev tells the client; it never waits.
func (n *notifier) event(ev sandbox.Event) {
	switch ev.Kind {
	case sandbox.EventStdout, sandbox.EventStderr:
		n.text(ev.Text)
	case sandbox.EventDisplay, sandbox.EventResult:
		n.text(displayText(ev))
	case sandbox.EventStatus:
		n.log(mcp.LoggingLevel("info"), map[string]any{"cell": ev.Cell, "kind": ev.Status, "message": ev.Text})
	case sandbox.EventCellStart:
		n.log(mcp.LoggingLevel("debug"), map[string]any{"cell": ev.Cell, "event": string(ev.Kind), "title": ev.Title, "language": ev.Language})
	case sandbox.EventCellEnd:
		data := map[string]any{"cell": ev.Cell, "event": string(ev.Kind), "title": ev.Title, "language": ev.Language, "status": ev.Status}
		if ev.DurationMs != nil {
			data["durationMs"] = *ev.DurationMs
		}
		if ev.Text != "" {
			data["message"] = ev.Text
		}
		n.log(mcp.LoggingLevel("debug"), data)
	}
}

// displayText is the line a display or result adds to the cell's output.
func displayText(ev sandbox.Event) string {
	if t := ev.DisplayText(); t != "" {
		return strings.TrimSuffix(t, "\n") + "\n"
	}
	return ""
}

func (n *notifier) text(t string) {
	if n.token == nil || t == "" {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closing || n.failed {
		return
	}
	if n.pendingText+len(t) > maxPendingProgress {
		n.leftOut += int64(len(t))
		return
	}
	if n.leftOut > 0 {
		t = fmt.Sprintf("[... %d bytes of output left out of these notifications; the result has the output]\n", n.leftOut) + t
		n.leftOut = 0
	}
	n.pendingText += len(t)
	if k := len(n.queue) - 1; k >= 0 && n.queue[k].log == nil {
		n.queue[k].text += t
	} else {
		n.queue = append(n.queue, notice{text: t})
	}
	signal(n.wake)
}

func (n *notifier) log(level mcp.LoggingLevel, data map[string]any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closing || n.failed {
		return
	}
	if n.logs >= maxPendingLogs {
		n.logsLeftOut++
		return
	}
	if n.logsLeftOut > 0 {
		data["leftOut"] = n.logsLeftOut // log messages dropped before this one
		n.logsLeftOut = 0
	}
	n.logs++
	n.queue = append(n.queue, notice{log: &mcp.LoggingMessageParams{Level: level, Logger: loggerName, Data: data}})
	signal(n.wake)
}

// finish sends what is queued, waiting at most notifyDrainTimeout, and
// stops the sender.
func (n *notifier) finish() {
	n.mu.Lock()
	n.closing = true
	n.mu.Unlock()
	signal(n.wake)
	t := time.NewTimer(notifyDrainTimeout)
	defer t.Stop()
	select {
	case <-n.done:
	case <-t.C:
		n.mu.Lock()
		n.failed = true // the sender drops the rest
		n.mu.Unlock()
	}
}

func (n *notifier) send() {
	defer close(n.done)
	var progress float64
	var last time.Time
	for {
		n.mu.Lock()
		for len(n.queue) == 0 && !n.closing {
			n.mu.Unlock()
			<-n.wake
			n.mu.Lock()
		}
		if len(n.queue) == 0 || n.failed {
			n.mu.Unlock()
			return
		}
		if wait := progressInterval - time.Since(last); n.queue[0].log == nil && !n.closing && wait > 0 {
			// Let more output join this notification.
			n.mu.Unlock()
			select {
			case <-time.After(wait):
			case <-n.ctx.Done(): // the call is over: nothing more reaches it
				n.mu.Lock()
				n.failed, n.queue = true, nil
				n.mu.Unlock()
				return
			}
			continue
		}
		nt := n.queue[0]
		n.queue[0] = notice{}
		n.queue = n.queue[1:]
		if nt.log != nil {
			n.logs--
		} else {
			n.pendingText -= len(nt.text)
		}
		n.mu.Unlock()
		var err error
		if nt.log != nil {
			err = n.ss.Log(n.ctx, nt.log)
		} else {
			progress++
			last = time.Now()
			err = n.ss.NotifyProgress(n.ctx, &mcp.ProgressNotificationParams{ProgressToken: n.token, Progress: progress, Message: nt.text})
		}
		if err != nil {
			n.mu.Lock()
			n.failed, n.queue = true, nil
			n.mu.Unlock()
			return
		}
	}
}

// signal wakes whoever waits on c, without waiting itself.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
