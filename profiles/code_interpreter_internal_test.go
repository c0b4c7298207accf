package profiles

import "testing"

// TestJSValue checks that JavaScript results read back as JSON only when
// their inspected text is plain data.
func TestJSValue(t *testing.T) {
	for in, want := range map[string]string{
		"42": "42", "-1.5e+3": "-1.5e+3", "'it\\'s'": `"it's"`, `"a'b"`: `"a'b"`, "true": "true", "null": "null",
		"{ a: [ 1, 2 ] }": `{"a":[1,2]}`, "{}": "{}", "[]": "[]", "{ 'a-b': 1, c: 'x' }": `{"a-b":1,"c":"x"}`,
		"[ 1, 2, ... 98 more items ]": "", "Foo { a: 1 }": "", "{ a: [Object] }": "", "123n": "", "NaN": "", "[Function: f]": "",
		"{ a: undefined }": "", "2020-01-01T00:00:00.000Z": "",
		"[\n  1, 2, 3, 4, 5, 6,\n  7\n]": "[1,2,3,4,5,6,7]",
	} {
		got := string(jsValue(in))
		if got != want {
			t.Errorf("jsValue(%q) = %q, want %q", in, got, want)
		}
	}
}
