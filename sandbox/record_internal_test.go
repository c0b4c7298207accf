package sandbox

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// TestFrozenResultCopiesAll: a recorded result is encoded after Eval
// returned it (when the tape's frame ends), from frozenResult's copy, so
// the copy must share nothing its caller could change. The known list
// below is every slice, map and pointer reachable in a Result; a field
// added to Result fails the test until frozenResult copies it too.
func TestFrozenResultCopiesAll(t *testing.T) {
	copied := []string{
		"Content", "Details.Cells", "Details.Cells[].ExitCode", "Details.Cells[].StatusEvents",
		"Details.Languages", "Details.JSONOutputs", "Details.JSONOutputs[]", "Details.Images",
		"Details.StatusEvents", "Details.Meta.Truncated", "Details.Meta.Dropped",
	}
	var found []string
	var walk func(typ reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		switch typ.Kind() {
		case reflect.Struct:
			for f := range typ.Fields() {
				if f.IsExported() {
					p := f.Name
					if path != "" {
						p = path + "." + f.Name
					}
					walk(f.Type, p)
				}
			}
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Array:
			found = append(found, path)
			if typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array {
				walk(typ.Elem(), path+"[]")
			}
			if typ.Kind() == reflect.Pointer {
				walk(typ.Elem(), path)
			}
		}
	}
	walk(reflect.TypeFor[Result](), "")
	for _, f := range found {
		if !slices.Contains(copied, f) {
			t.Errorf("Result's %s is a slice, map or pointer that frozenResult does not copy: copy it there and list it here", f)
		}
	}

	code := 1
	res := &Result{
		Content: []Content{{Type: "text", Text: "a"}},
		Details: Details{
			Cells:        []CellResult{{Output: "out", ExitCode: &code, StatusEvents: []StatusEvent{{Kind: "k"}}}},
			Languages:    []string{"py"},
			JSONOutputs:  []json.RawMessage{json.RawMessage(`1`)},
			Images:       []Image{{Data: "d"}},
			StatusEvents: []StatusEvent{{Kind: "k"}},
			Meta:         Meta{Truncated: []Truncation{{Cell: 1}}, Dropped: &Dropped{}},
		},
	}
	want, err := MarshalResult(res)
	if err != nil {
		t.Fatal(err)
	}
	cp := frozenResult(res)
	// What a caller might do with its result afterwards.
	res.Content[0].Text = "changed"
	res.Details.Cells[0].Output, *res.Details.Cells[0].ExitCode = "changed", 9
	res.Details.Cells[0].StatusEvents[0].Kind = "changed"
	res.Details.Languages[0] = "changed"
	res.Details.JSONOutputs[0] = json.RawMessage(`2`)
	res.Details.Images[0].Data = "changed"
	res.Details.StatusEvents[0].Kind = "changed"
	res.Details.Meta.Truncated[0].Cell = 9
	*res.Details.Meta.Dropped = Dropped{Images: 9}
	got, err := MarshalResult(cp)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the frozen copy changed with the result:\n got %s\nwant %s", got, want)
	}
	// Empty stays empty ([] in JSON) and nil stays nil (null).
	empty := &Result{Content: []Content{}, Details: Details{Cells: []CellResult{}, Languages: nil}}
	want, _ = MarshalResult(empty)
	if got, _ = MarshalResult(frozenResult(empty)); !bytes.Equal(got, want) {
		t.Errorf("an empty result, frozen:\n got %s\nwant %s", got, want)
	}
}
