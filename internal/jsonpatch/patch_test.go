package jsonpatch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aapagui/aapagui/internal/jsonpatch"
)

// apply parses doc, applies each patch in turn and returns the document
// and the errors of the patches ("" for none).
func apply(t *testing.T, doc string, patches ...string) (string, []string) {
	t.Helper()
	d, err := jsonpatch.Parse([]byte(doc), 1<<20)
	if err != nil {
		t.Fatalf("Parse(%s): %v", doc, err)
	}
	errs := make([]string, len(patches))
	for i, p := range patches {
		if err := d.Apply([]byte(p)); err != nil {
			errs[i] = err.Error()
		}
	}
	return string(d.AppendJSON(nil)), errs
}

// TestApply: each operation as RFC 6902 and the library the bridge used
// before have it: keys keep their order and a new one goes last, "-"
// appends, negative indices count from the end, a patch that fails
// anywhere changes nothing, and strings are written as encoding/json
// writes them.
func TestApply(t *testing.T) {
	for _, c := range []struct {
		name, doc, patch, want, err string
	}{
		{"add keeps the order, a new key last", `{"b":1,"a":2}`, `[{"op":"add","path":"/a","value":3},{"op":"add","path":"/c","value":[1, 2]}]`, `{"b":1,"a":3,"c":[1,2]}`, ""},
		{"remove then add puts the key last", `{"a":1,"b":2}`, `[{"op":"remove","path":"/a"},{"op":"add","path":"/a","value":1}]`, `{"b":2,"a":1}`, ""},
		{"array: insert, append, negative", `{"x":[1,2,3]}`, `[{"op":"add","path":"/x/0","value":0},{"op":"add","path":"/x/-","value":4},{"op":"remove","path":"/x/-1"},{"op":"replace","path":"/x/-2","value":9}]`, `{"x":[0,1,9,3]}`, ""},
		{"an index past the end", `{"x":[1]}`, `[{"op":"add","path":"/x/2","value":0}]`, `{"x":[1]}`, "index 2 is past"},
		{"move and copy", `{"a":{"b":1},"c":[]}`, `[{"op":"copy","from":"/a","path":"/c/-"},{"op":"move","from":"/a/b","path":"/d"}]`, `{"a":{},"c":[{"b":1}],"d":1}`, ""},
		{"copy of the whole document", `{"a":1}`, `[{"op":"copy","from":"","path":"/self"}]`, `{"a":1,"self":{"a":1}}`, ""},
		{"the whole document replaced", `{"a":1}`, `[{"op":"replace","path":"","value":[true]}]`, `[true]`, ""},
		{"the whole document cannot be a scalar", `{"a":1}`, `[{"op":"replace","path":"","value":1}]`, `{"a":1}`, "object or an array"},
		{"a failed test changes nothing", `{"count":2}`, `[{"op":"replace","path":"/count","value":3},{"op":"test","path":"/count","value":99},{"op":"add","path":"/x","value":1}]`, `{"count":2}`, "not the one tested"},
		{"test: strings by their text, objects in any order", `{"s":"é","o":{"a":1,"b":[2]}}`, `[{"op":"test","path":"/s","value":"\u00e9"},{"op":"test","path":"/o","value":{"b":[2],"a":1}}]`, `{"s":"é","o":{"a":1,"b":[2]}}`, ""},
		{"test: a missing key is null", `{"n":null}`, `[{"op":"test","path":"/nope","value":null},{"op":"test","path":"/n"}]`, `{"n":null}`, ""},
		{"a missing parent", `{}`, `[{"op":"add","path":"/a/b","value":1}]`, `{}`, `no key "a"`},
		{"through a scalar", `{"a":1}`, `[{"op":"add","path":"/a/b","value":1}]`, `{"a":1}`, "neither an object nor an array"},
		{"escaped tokens", `{"a/b":{"~":1}}`, `[{"op":"replace","path":"/a~1b/~0","value":2}]`, `{"a/b":{"~":2}}`, ""},
		{"text before the first slash is ignored", `{"a":1}`, `[{"op":"replace","path":"x/a","value":2}]`, `{"a":2}`, ""},
		{"not a pointer", `{"a":1}`, `[{"op":"replace","path":"a","value":2}]`, `{"a":1}`, "not a JSON pointer"},
		{"HTML characters escaped, numbers as written", `{"h":"<b>&"}`, `[{"op":"add","path":"/n","value":1.50e+3}]`, `{"h":"\u003cb\u003e\u0026","n":1.50e+3}`, ""},
		{"an unknown operation", `{}`, `[{"op":"add","path":"/a","value":1},{"op":"frob","path":"/a"}]`, `{}`, "is not an operation"},
		{"add without a value", `{}`, `[{"op":"add","path":"/a"}]`, `{}`, "has no value"},
		{"not a patch", `{}`, `{"op":"add"}`, `{}`, "not an array of operations"},
	} {
		got, errs := apply(t, c.doc, c.patch)
		if got != c.want || (c.err == "") != (errs[0] == "") || !strings.Contains(errs[0], c.err) {
			t.Errorf("%s: %s, error %q; want %s, an error holding %q", c.name, got, errs[0], c.want, c.err)
		}
	}
}

// TestApplySequence: the patches of several STATE_DELTA events applied
// in turn, one of which fails and changes nothing while the others apply
// (the bridge's TestState, as one document).
func TestApplySequence(t *testing.T) {
	got, errs := apply(t, `{"count":1,"items":["a"],"user":{"name":"Ann"}}`,
		`[{"op":"replace","path":"/count","value":2},{"op":"add","path":"/items/-","value":"b"},{"op":"remove","path":"/user"}]`,
		`[{"op":"add","path":"/done","value":true}]`,
		`[{"op":"test","path":"/count","value":99},{"op":"replace","path":"/count","value":100}]`,
		`[{"op":"add","path":"/last","value":{}}]`)
	if want := `{"count":2,"items":["a","b"],"done":true,"last":{}}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if errs[0] != "" || errs[1] != "" || errs[2] == "" || errs[3] != "" {
		t.Errorf("errors %q: want only the third patch's", errs)
	}
}

// TestRemovedKeys: keys removed in numbers leave nothing behind, whether
// the patch that removed them applied or was undone.
func TestRemovedKeys(t *testing.T) {
	var adds, removes []string
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		adds = append(adds, `{"op":"add","path":"/`+k+`","value":1}`)
		removes = append(removes, `{"op":"remove","path":"/`+k+`"}`)
	}
	add, remove := "["+strings.Join(adds, ",")+"]", "["+strings.Join(removes, ",")+"]"
	failing := "[" + strings.Join(removes, ",") + `,{"op":"remove","path":"/nope"}]`
	got, errs := apply(t, `{"first":0}`, add, failing, remove, `[{"op":"add","path":"/last","value":2}]`)
	if want := `{"first":0,"last":2}`; got != want || errs[0] != "" || errs[1] == "" || errs[2] != "" || errs[3] != "" {
		t.Errorf("got %s, errors %q; want %s and only the second patch failing", got, errs, want)
	}
}

// TestCopyLimit: copies that double the document are refused once what
// they added would pass the limit, and the patch that would pass it
// changes nothing.
func TestCopyLimit(t *testing.T) {
	d, err := jsonpatch.Parse([]byte(`{"a":"0123456789"}`), 1000)
	if err != nil {
		t.Fatal(err)
	}
	var before []byte
	for n := range 20 {
		before = d.AppendJSON(nil)
		if err = d.Apply(fmt.Appendf(nil, `[{"op":"copy","from":"","path":"/k%d"}]`, n)); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "more than 1000 bytes") {
		t.Fatalf("20 doublings: %v, want a refusal naming the limit", err)
	}
	if after := d.AppendJSON(nil); string(after) != string(before) || len(after) > 1000 {
		t.Errorf("the refused copy changed the document (%d bytes, %d before)", len(after), len(before))
	}
}

// TestParse: a document must be valid JSON, an object or an array; a key
// given twice keeps its place and its last value.
func TestParse(t *testing.T) {
	for _, bad := range []string{``, `1`, `"s"`, `{"a":}`, `[1,]`, `{"a":1} x`} {
		if _, err := jsonpatch.Parse([]byte(bad), 0); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if got, _ := apply(t, ` {"a":1, "b":[ ], "a":2} `); got != `{"a":2,"b":[]}` {
		t.Errorf("got %s", got)
	}
}
