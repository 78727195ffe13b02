package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"

	"github.com/aapagui/aapagui/internal/jsonenc"
)

// node is one JSON value: an object, an array, or a scalar kept as its
// JSON text (a string with its quotes and escapes, a number as written).
type node struct {
	kind byte    // '{' or '[' for a container, 0 for a scalar
	raw  []byte  // a scalar's text
	obj  *object // kind '{'
	arr  []*node // kind '['
}

// object is an object's members in their order. A member removed is left
// as a hole (val nil) and dropped from index, so that removing costs no
// shift; holes are squeezed out between patches (compact).
type object struct {
	members []member
	index   map[string]int // key → position in members
	holes   int
}

type member struct {
	key string
	val *node
}

func newObject() *object { return &object{index: map[string]int{}} }

// get is the value of key, nil if none.
func (o *object) get(key string) *node {
	if i, ok := o.index[key]; ok {
		return o.members[i].val
	}
	return nil
}

// compact squeezes the holes out once they are half the members.
func (o *object) compact() {
	if o.holes < 8 || o.holes < len(o.members)/2 {
		return
	}
	kept := o.members[:0]
	for _, m := range o.members {
		if m.val != nil {
			o.index[m.key] = len(kept)
			kept = append(kept, m)
		}
	}
	clear(o.members[len(kept):])
	o.members, o.holes = kept, 0
}

func (n *node) container() bool { return n.kind != 0 }

var errSyntax = errors.New("jsonpatch: not valid JSON")

// parse decodes the JSON value b (checked valid by the caller, with
// nothing around it but whitespace); scalars keep slices of b.
func parse(b []byte) (*node, error) {
	n, i := parseAt(b, jsonenc.SkipSpace(b, 0))
	if n == nil || jsonenc.SkipSpace(b, i) != len(b) {
		return nil, errSyntax
	}
	return n, nil
}

// parseAt decodes the value at b[i] and returns it with the index past
// it; nil when b is not as valid JSON is.
func parseAt(b []byte, i int) (*node, int) {
	if i >= len(b) {
		return nil, i
	}
	switch b[i] {
	case '{':
		return parseObject(b, i+1)
	case '[':
		n := &node{kind: '['}
		i = jsonenc.SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return n, i + 1
		}
		for {
			v, j := parseAt(b, i)
			if v == nil {
				return nil, j
			}
			n.arr = append(n.arr, v)
			var more bool
			if i, more = after(b, j, ']'); i < 0 {
				return nil, j
			} else if !more {
				return n, i
			}
		}
	}
	end, ok := jsonenc.SkipValue(b, i)
	if !ok {
		return nil, i
	}
	return &node{raw: b[i:end:end]}, end
}

func parseObject(b []byte, i int) (*node, int) {
	n := &node{kind: '{', obj: newObject()}
	i = jsonenc.SkipSpace(b, i)
	if i < len(b) && b[i] == '}' {
		return n, i + 1
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, i
		}
		end := jsonenc.SkipString(b, i+1)
		if end < 0 {
			return nil, i
		}
		key, ok := unquote(b[i : end+1])
		if i = jsonenc.SkipSpace(b, end+1); !ok || i >= len(b) || b[i] != ':' {
			return nil, i
		}
		v, j := parseAt(b, jsonenc.SkipSpace(b, i+1))
		if v == nil {
			return nil, j
		}
		// A key given twice keeps its first place and its last value.
		if k, seen := n.obj.index[key]; seen {
			n.obj.members[k].val = v
		} else {
			n.obj.index[key] = len(n.obj.members)
			n.obj.members = append(n.obj.members, member{key, v})
		}
		var more bool
		if i, more = after(b, j, '}'); i < 0 {
			return nil, j
		} else if !more {
			return n, i
		}
	}
}

// after reads what follows a member of a container at b[j]: a comma
// (more: i is the next member's start) or end, the container's close
// (i is past it); i is -1 for anything else.
func after(b []byte, j int, end byte) (i int, more bool) {
	switch j = jsonenc.SkipSpace(b, j); {
	case j >= len(b):
		return -1, false
	case b[j] == ',':
		return jsonenc.SkipSpace(b, j+1), true
	case b[j] == end:
		return j + 1, false
	}
	return -1, false
}

// unquote is the text of the JSON string s (with its quotes); invalid
// UTF-8 reads as U+FFFD, as encoding/json reads it.
func unquote(s []byte) (string, bool) {
	if bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s[1 : len(s)-1]), true
	}
	var out string
	return out, json.Unmarshal(s, &out) == nil
}

// appendJSON appends n's JSON, compact, HTML characters not escaped yet.
func (n *node) appendJSON(dst []byte) []byte {
	switch n.kind {
	case '{':
		dst = append(dst, '{')
		first := true
		for _, m := range n.obj.members {
			if m.val == nil {
				continue
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			dst = append(jsonenc.AppendString(dst, m.key), ':')
			dst = m.val.appendJSON(dst)
		}
		return append(dst, '}')
	case '[':
		dst = append(dst, '[')
		for i, v := range n.arr {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = v.appendJSON(dst)
		}
		return append(dst, ']')
	}
	return append(dst, n.raw...)
}

// clone is a deep copy of n (scalars' text shared: it never changes),
// adding to *size the bytes it holds, up to limit: past it, clone stops
// and returns nil.
func (n *node) clone(size *int, limit int) *node {
	if *size += 2; n.kind == 0 {
		*size += len(n.raw) - 2
	}
	if *size > limit {
		return nil
	}
	switch n.kind {
	case '{':
		c := &node{kind: '{', obj: &object{members: make([]member, 0, len(n.obj.index)), index: make(map[string]int, len(n.obj.index))}}
		for _, m := range n.obj.members {
			if m.val == nil {
				continue
			}
			*size += len(m.key) + 4
			v := m.val.clone(size, limit)
			if v == nil {
				return nil
			}
			c.obj.index[m.key] = len(c.obj.members)
			c.obj.members = append(c.obj.members, member{m.key, v})
		}
		return c
	case '[':
		c := &node{kind: '[', arr: make([]*node, len(n.arr))}
		for i, v := range n.arr {
			*size++
			if c.arr[i] = v.clone(size, limit); c.arr[i] == nil {
				return nil
			}
		}
		return c
	}
	return n
}

// equal reports whether a and b are the same JSON value, as a "test"
// compares them: objects by their members whatever their order, arrays
// element by element, strings by their text, other scalars by how they
// are written.
func equal(a, b *node) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case '{':
		if len(a.obj.index) != len(b.obj.index) {
			return false
		}
		for k, i := range a.obj.index {
			w := b.obj.get(k)
			if w == nil || !equal(a.obj.members[i].val, w) {
				return false
			}
		}
		return true
	case '[':
		if len(a.arr) != len(b.arr) {
			return false
		}
		for i := range a.arr {
			if !equal(a.arr[i], b.arr[i]) {
				return false
			}
		}
		return true
	}
	if a.raw[0] == '"' && b.raw[0] == '"' {
		s, ok1 := unquote(a.raw)
		t, ok2 := unquote(b.raw)
		return ok1 && ok2 && s == t
	}
	return bytes.Equal(a.raw, b.raw)
}
