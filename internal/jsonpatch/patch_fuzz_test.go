package jsonpatch_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	library "github.com/evanphx/json-patch/v5"

	"github.com/aapagui/aapagui/internal/jsonpatch"
)

// FuzzApplyLikeLibrary holds the package to what the library the bridge
// used before (evanphx/json-patch, default options) makes of the same
// document and patch: both apply it or both refuse it, and what they
// write is the same values with the keys in the same order. Left out are
// the two differences the package means to have (an empty reference
// token; copies past the limit) and what the library cannot read alike
// (keys given twice, a document not starting with its bracket).
func FuzzApplyLikeLibrary(f *testing.F) {
	for _, s := range [][2]string{
		{`{"count":1,"items":["a"],"user":{"name":"Ann"}}`, `[{"op":"replace","path":"/count","value":2},{"op":"add","path":"/items/-","value":"b"},{"op":"remove","path":"/user"}]`},
		{`{"count":2}`, `[{"op":"test","path":"/count","value":99},{"op":"replace","path":"/count","value":100}]`},
		{`{"a":{"b":[1,2,3]}}`, `[{"op":"move","from":"/a/b/0","path":"/a/b/-"},{"op":"copy","from":"/a","path":"/c"},{"op":"remove","path":"/a/b/-1"}]`},
		{`[1,{"x":null}]`, `[{"op":"test","path":"/1/x","value":null},{"op":"test","path":"/1/y","value":null},{"op":"add","path":"/0","value":{"k":"<&>"}}]`},
		{`{"s":"\u00e9"}`, `[{"op":"test","path":"/s","value":"é"},{"op":"replace","path":"","value":{"t":1.0}},{"op":"test","path":"/t","value":1}]`},
		{`{"a~b":{"c/d":1}}`, `[{"op":"add","path":"x/a~0b/c~1d","value":[]},{"op":"add","path":"/a~0b/c~1d/-2","value":0}]`},
		{`{}`, `[{"op":"add","path":"/a","value":1},{"op":"frob","path":"/a"}]`},
		{`{"a":1}`, `[{"op":"move","from":"/a","path":"/a/b"}]`},
		{`{"a":[]}`, `[{"op":"copy","from":"","path":"/a/0"},{"op":"test","path":"","value":{"a":[{"a":[]}]}}]`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, doc, patch []byte) {
		if !comparable(doc, patch) {
			return
		}
		want, werr, panicked := libraryApply(doc, patch)
		if panicked {
			return // (comparing arrays that hold null, say)
		}
		d, err := jsonpatch.Parse(doc, 1<<20)
		if err == nil {
			err = d.Apply(patch)
		}
		if err != nil && strings.Contains(err.Error(), "copies would add") {
			return
		}
		if (err == nil) != (werr == nil) {
			t.Fatalf("doc %s, patch %s: error %v; the library's %v", doc, patch, err, werr)
		}
		if err != nil {
			return
		}
		got := d.AppendJSON(nil)
		if g, w := tokens(t, got), tokens(t, want); !slices.Equal(g, w) {
			t.Fatalf("doc %s, patch %s:\n got %s\nwant %s", doc, patch, got, want)
		}
	})
}

// libraryApply is what the library makes of doc and patch, and whether
// it panicked.
func libraryApply(doc, patch []byte) (out []byte, err error, panicked bool) {
	defer func() {
		if recover() != nil {
			panicked = true
		}
	}()
	p, err := library.DecodePatch(patch)
	if err != nil {
		return nil, err, false
	}
	out, err = p.Apply(doc)
	return out, err, false
}

// comparable reports whether doc and patch are what both read alike: the
// document starts with its bracket, no object in either gives a key twice,
// and no path or from holds an empty reference token (nor is a move's or
// a copy's path or from "").
func comparable(doc, patch []byte) bool {
	if len(doc) == 0 || (doc[0] != '{' && doc[0] != '[') || !json.Valid(doc) || !json.Valid(patch) {
		return false
	}
	if duplicates(doc) || duplicates(patch) {
		return false
	}
	var ops []map[string]any
	if json.Unmarshal(patch, &ops) != nil {
		return true // not a patch: both refuse it
	}
	for _, op := range ops {
		path, _ := op["path"].(string)
		from, _ := op["from"].(string)
		if (path == "" || from == "") && (op["op"] == "move" || op["op"] == "copy") {
			return false
		}
		for _, k := range []string{"path", "from"} {
			if s, ok := op[k].(string); ok && s != "" && (strings.Contains(s, "//") || strings.HasSuffix(s, "/")) {
				return false
			}
		}
	}
	return true
}

// duplicates reports whether an object of the JSON value b gives a key
// twice.
func duplicates(b []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next token is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) || err != nil {
			return false
		}
		if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].key {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				k, _ := tok.(string)
				if stack[n-1].keys[k] {
					return true
				}
				stack[n-1].keys[k], stack[n-1].key = true, false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{keys: map[string]bool{}, object: true, key: true})
			continue
		case json.Delim('['):
			stack = append(stack, frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
		if n := len(stack); n > 0 && stack[n-1].object {
			stack[n-1].key = true
		}
	}
}

// tokens are the JSON tokens of b, numbers as written: the same values
// with the keys in the same order give the same tokens, whatever the
// escapes.
func tokens(t *testing.T, b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out []string
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		switch v := tok.(type) {
		case string:
			out = append(out, `s:`+v)
		default:
			out = append(out, strings.TrimSpace(strings.Trim(stringOf(v), "\x00")))
		}
	}
}

func stringOf(v any) string {
	b, _ := json.Marshal(v)
	if d, ok := v.(json.Delim); ok {
		return d.String()
	}
	return string(b)
}
