package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Result is what Session.Eval returns: docs/design.md's result, with the JSON
// field names it spells.
type Result struct {
	// Content is what an agent reads: one text item that joins the cells'
	// outputs, then one image item per image displayed.
	Content []Content `json:"content"`
	// Details holds the per-cell record and everything collected.
	Details Details `json:"details"`
}

// Content is one item of Result.Content.
type Content struct {
	// Type is "text" or "image".
	Type string `json:"type"`
	// Text is set on text items.
	Text string `json:"text,omitempty"`
	// Data is an image's base64, set on image items.
	Data string `json:"data,omitempty"`
	// MIMEType is an image's type, like "image/png".
	MIMEType string `json:"mimeType,omitempty"`
}

// Details is the structured part of a Result.
type Details struct {
	// Cells has one entry per cell of the request, in order, including the
	// ones that never ran.
	Cells []CellResult `json:"cells"`
	// Language is the first cell's language.
	Language string `json:"language"`
	// Languages are the distinct languages of the request's cells, in the
	// order they first appear.
	Languages []string `json:"languages"`
	// JSONOutputs are the application/json display bundles, parsed, in the
	// order they were displayed.
	JSONOutputs []json.RawMessage `json:"jsonOutputs"`
	// Images are the images displayed, in order.
	Images []Image `json:"images"`
	// StatusEvents are all cells' status events, in order.
	StatusEvents []StatusEvent `json:"statusEvents"`
	// Meta says what was cut or dropped to keep the result bounded.
	Meta Meta `json:"meta"`
	// IsError is true when a cell failed, timed out or was cancelled.
	IsError bool `json:"isError"`
}

// CellStatus is the state of one cell.
type CellStatus string

// The statuses of a cell. A cell that never ran stays StatusPending.
const (
	StatusPending   CellStatus = "pending"
	StatusRunning   CellStatus = "running"
	StatusComplete  CellStatus = "complete"
	StatusError     CellStatus = "error"
	StatusCancelled CellStatus = "cancelled"
)

// CellResult is the record of one cell.
type CellResult struct {
	// Index is the cell's position in the request, from 0 (as in the
	// "cells[0]" of request errors; Content's headers count from 1).
	Index int `json:"index"`
	// Title is the request's title, or the language tag when it gave none.
	Title string `json:"title"`
	// Language and Code are the request's.
	Language string `json:"language"`
	Code     string `json:"code"`
	// Status says how the cell ended.
	Status CellStatus `json:"status"`
	// Output is stdout and stderr interleaved as written, with the text of
	// displays and of the last expression's value where they came; cut to
	// its head and tail when too long (see Meta).
	Output string `json:"output"`
	// DurationMs is the cell's wall-clock run time in milliseconds.
	DurationMs int64 `json:"durationMs"`
	// ExitCode is 0 for a complete cell, 1 for one that failed, timed out or
	// was cancelled, and null for one that never ran.
	ExitCode *int `json:"exitCode"`
	// StatusEvents are the cell's status events (log, phase, progress).
	StatusEvents []StatusEvent `json:"statusEvents"`
	// Markdown joins the cell's text/markdown displays and its text/html
	// displays converted to Markdown, separated by blank lines.
	Markdown string `json:"markdown"`
}

// Image is one displayed image.
type Image struct {
	// Data is the image's bytes in standard base64.
	Data string `json:"data"`
	// MIMEType is like "image/png".
	MIMEType string `json:"mimeType"`
}

// StatusEvent is a status event a cell sent (log, phase, progress).
type StatusEvent struct {
	// Cell is the index of the cell that sent it.
	Cell int `json:"cell"`
	// Kind is the event's kind, like "log" or "phase".
	Kind string `json:"kind"`
	// Message is the event's text.
	Message string `json:"message"`
}

// Meta says what was cut or dropped to keep a Result bounded.
type Meta struct {
	// Truncated lists the cells whose output was cut.
	Truncated []Truncation `json:"truncated,omitempty"`
	// Dropped counts displays that were left out because the request's
	// budget for them was spent; nil when none were.
	Dropped *Dropped `json:"dropped,omitempty"`
}

// Truncation describes one cell whose output was cut.
type Truncation struct {
	// Cell is the cell's index.
	Cell int `json:"cell"`
	// OutputID names the full text for Session.Output.
	OutputID string `json:"outputId"`
	// Bytes and Lines are the size of the cell's whole output.
	Bytes int64 `json:"bytes"`
	Lines int64 `json:"lines"`
	// OmittedBytes and OmittedLines are what the cut left out of Output.
	OmittedBytes int64 `json:"omittedBytes"`
	OmittedLines int64 `json:"omittedLines"`
	// Capped is true when the output was even longer than what the session
	// keeps: Session.Output then returns its first part only.
	Capped bool `json:"capped,omitempty"`
}

// Dropped counts displays left out of a Result.
type Dropped struct {
	Images       int `json:"images,omitempty"`
	JSONOutputs  int `json:"jsonOutputs,omitempty"`
	StatusEvents int `json:"statusEvents,omitempty"`
}

// buildContent makes Result.Content from the cells and images.
//
// One cell: its text alone. Several: each under a "[i/n] title" header,
// separated by blank lines. A cell's text is its output without trailing
// newlines, or "(no output)", or "(displayed N image(s); no text output)"
// when it only displayed images, or "(not run)" for a pending cell. When a
// cell failed or was cancelled, a last paragraph names it, single cells
// too: "Cell 2 (load config) failed", as the seed's eval tool says which
// cell to fix and resubmit.
func buildContent(cells []CellResult, imagesPerCell []int, images []Image) []Content {
	var b strings.Builder
	n := len(cells)
	for i, c := range cells {
		if n > 1 {
			if i > 0 {
				b.WriteString("\n\n")
			}
			fmt.Fprintf(&b, "[%d/%d] %s\n", i+1, n, oneLine(c.Title))
		}
		b.WriteString(cellText(c, imagesPerCell[i]))
	}
	if line := failureLine(cells); line != "" {
		b.WriteString("\n\n" + line)
	}
	content := make([]Content, 0, 1+len(images))
	content = append(content, Content{Type: "text", Text: b.String()})
	for _, im := range images {
		content = append(content, Content{Type: "image", Data: im.Data, MIMEType: im.MIMEType})
	}
	return content
}

func cellText(c CellResult, images int) string {
	if c.Status == StatusPending {
		return "(not run)"
	}
	if out := strings.TrimRight(c.Output, "\n"); strings.TrimSpace(out) != "" {
		return out
	}
	if images > 0 {
		return fmt.Sprintf("(displayed %d image(s); no text output)", images)
	}
	return "(no output)"
}

// failureLine names the cell that failed or was cancelled, counting from
// 1 as the headers do, with its title (the language tag when it has none);
// "" when every cell that ran completed.
func failureLine(cells []CellResult) string {
	for i, c := range cells {
		switch c.Status {
		case StatusError:
			return fmt.Sprintf("Cell %d (%s) failed", i+1, oneLine(c.Title))
		case StatusCancelled:
			return fmt.Sprintf("Cell %d (%s) was cancelled", i+1, oneLine(c.Title))
		}
	}
	return ""
}

// oneLine keeps a title on its header line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func intPtr(n int) *int { return &n }
