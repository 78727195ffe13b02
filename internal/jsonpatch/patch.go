package jsonpatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Doc is a JSON document, an object or an array, that patches change in
// place.
type Doc struct {
	root *node
	// copied is what "copy" operations have added, which may not pass
	// copyLimit.
	copied, copyLimit int
	undo              []func()  // what undoes the patch being applied, last first
	holed             []*object // objects the patch removed members of
}

// Parse decodes doc, which must be a JSON object or array. copyLimit
// bounds the bytes that "copy" operations may add to it, over all the
// patches it is given (a patch that would pass it fails).
func Parse(doc []byte, copyLimit int) (*Doc, error) {
	if !json.Valid(doc) {
		return nil, errSyntax
	}
	root, err := parse(bytes.Clone(doc))
	if err != nil {
		return nil, err
	}
	if !root.container() {
		return nil, errors.New("jsonpatch: the document is neither an object nor an array")
	}
	return &Doc{root: root, copyLimit: copyLimit}, nil
}

// AppendJSON appends the document, compact, with <, > and & in its
// strings escaped as encoding/json escapes them.
func (d *Doc) AppendJSON(dst []byte) []byte {
	var out bytes.Buffer
	json.HTMLEscape(&out, d.root.appendJSON(nil))
	return append(dst, out.Bytes()...)
}

// operation is one operation of a patch, its fields as they came.
type operation struct {
	kind       string
	path, from string
	value      *node // nil: none given
	i          int   // its place in the patch
}

// description names op for errors: its place, kind and path. Made only
// for an error, not for every operation of every patch.
func (op *operation) description() string {
	return fmt.Sprintf("operation %d (%s %q)", op.i, op.kind, op.path)
}

// Apply applies the JSON Patch patch (a JSON array of operations) to the
// document: every operation, or none when one fails (the error names it).
func (d *Doc) Apply(patch []byte) error {
	ops, err := decodePatch(patch)
	if err != nil {
		return err
	}
	copied := d.copied
	for _, op := range ops {
		if err = d.apply(op); err != nil {
			break
		}
	}
	undo, holed := d.undo, d.holed
	d.undo, d.holed = d.undo[:0], d.holed[:0]
	if err != nil {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
		d.copied = copied
	} else {
		// Squeezed only now: the undo of a removal needs its member's
		// place.
		for _, o := range holed {
			o.compact()
		}
	}
	clear(undo) // what they hold is the caller's again
	clear(holed)
	if err != nil {
		return fmt.Errorf("jsonpatch: %w", err)
	}
	return nil
}

// decodePatch reads a patch: an array of objects, each with a known "op"
// and the fields it needs ("value" for add, replace and test; "from" for
// move and copy; "path" for all).
func decodePatch(patch []byte) ([]operation, error) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(patch, &raw); err != nil {
		return nil, fmt.Errorf("jsonpatch: the patch is not an array of operations: %w", err)
	}
	ops := make([]operation, len(raw))
	for i, m := range raw {
		op := &ops[i]
		if json.Unmarshal(m["op"], &op.kind) != nil {
			op.kind = "unknown"
		}
		var path *string
		if err := json.Unmarshal(m["path"], &path); err != nil || path == nil {
			return nil, fmt.Errorf("jsonpatch: operation %d (%s) has no path", i, op.kind)
		}
		op.path, op.i = *path, i
		switch op.kind {
		case "add", "replace", "test":
			if v, ok := m["value"]; ok {
				var err error
				if op.value, err = parse(v); err != nil {
					return nil, fmt.Errorf("jsonpatch: %s: its value: %w", op.description(), err)
				}
			} else if op.kind != "test" {
				return nil, fmt.Errorf("jsonpatch: %s has no value", op.description())
			}
		case "move", "copy":
			var from *string
			if err := json.Unmarshal(m["from"], &from); err != nil || from == nil {
				return nil, fmt.Errorf("jsonpatch: %s has no from", op.description())
			}
			op.from = *from
		case "remove":
		default:
			return nil, fmt.Errorf("jsonpatch: %s is not an operation", op.description())
		}
	}
	return ops, nil
}

func (d *Doc) apply(op operation) error {
	var err error
	switch op.kind {
	case "add":
		err = d.add(op.path, op.value)
	case "remove":
		_, err = d.remove(op.path)
	case "replace":
		err = d.replace(op.path, op.value)
	case "move":
		var v *node
		if op.from == "" {
			err = errors.New("the whole document cannot be moved")
		} else if v, err = d.remove(op.from); err == nil {
			err = d.add(op.path, v)
		}
	case "copy":
		err = d.copyTo(op.from, op.path)
	case "test":
		err = d.test(op.path, op.value)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", op.description(), err)
	}
	return nil
}

// rfc6901 undoes the escapes of a reference token.
var rfc6901 = strings.NewReplacer("~1", "/", "~0", "~")

// locate finds the container that holds what path names, and the key or
// index (its last token) it holds it under; root is set for "".
func (d *Doc) locate(path string) (parent *node, key string, root bool, err error) {
	if path == "" {
		return nil, "", true, nil
	}
	slash := strings.IndexByte(path, '/')
	if slash < 0 {
		return nil, "", false, fmt.Errorf("%q is not a JSON pointer", path)
	}
	tokens := strings.Split(path[slash+1:], "/")
	n := d.root
	for _, t := range tokens[:len(tokens)-1] {
		child, err := n.child(rfc6901.Replace(t))
		if err != nil {
			return nil, "", false, err
		}
		if !child.container() {
			return nil, "", false, fmt.Errorf("%q: %q holds neither an object nor an array", path, t)
		}
		n = child
	}
	return n, rfc6901.Replace(tokens[len(tokens)-1]), false, nil
}

// child is what container n holds under key (an index of an array,
// negative from its end).
func (n *node) child(key string) (*node, error) {
	if n.kind == '{' {
		if v := n.obj.get(key); v != nil {
			return v, nil
		}
		return nil, fmt.Errorf("no key %q", key)
	}
	i, err := index(key, len(n.arr))
	if err != nil {
		return nil, err
	}
	return n.arr[i], nil
}

// index is the array index key names in an array of n elements (a
// negative index counts from the end), which must be one of them.
func index(key string, n int) (int, error) {
	i, err := strconv.Atoi(key)
	if err != nil {
		return 0, fmt.Errorf("%q is not an array index", key)
	}
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return 0, fmt.Errorf("index %s is past the array's %d elements", key, n)
	}
	return i, nil
}

func (d *Doc) add(path string, v *node) error {
	parent, key, root, err := d.locate(path)
	switch {
	case err != nil:
		return err
	case root:
		return d.setRoot(v)
	case parent.kind == '{':
		d.set(parent.obj, key, v)
		return nil
	case key == "-":
		d.insert(parent, len(parent.arr), v)
		return nil
	}
	i, err := index(key, len(parent.arr)+1)
	if err != nil {
		return err
	}
	d.insert(parent, i, v)
	return nil
}

func (d *Doc) remove(path string) (*node, error) {
	parent, key, root, err := d.locate(path)
	switch {
	case err != nil:
		return nil, err
	case root:
		return nil, errors.New("the whole document cannot be removed")
	case parent.kind == '{':
		v := parent.obj.get(key)
		if v == nil {
			return nil, fmt.Errorf("no key %q to remove", key)
		}
		d.unset(parent.obj, key)
		return v, nil
	}
	i, err := index(key, len(parent.arr))
	if err != nil {
		return nil, err
	}
	return d.removeAt(parent, i), nil
}

func (d *Doc) replace(path string, v *node) error {
	parent, key, root, err := d.locate(path)
	switch {
	case err != nil:
		return err
	case root:
		return d.setRoot(v)
	}
	if _, err := parent.child(key); err != nil {
		return err
	}
	if parent.kind == '{' {
		d.set(parent.obj, key, v)
		return nil
	}
	i, _ := index(key, len(parent.arr))
	old := parent.arr[i]
	parent.arr[i] = v
	d.undo = append(d.undo, func() { parent.arr[i] = old })
	return nil
}

func (d *Doc) copyTo(from, path string) error {
	v := d.root
	if from != "" {
		parent, key, _, err := d.locate(from)
		if err != nil {
			return err
		}
		if v, err = parent.child(key); err != nil {
			return err
		}
	}
	if v = v.clone(&d.copied, d.copyLimit); v == nil {
		return fmt.Errorf("copies would add more than %d bytes to the document", d.copyLimit)
	}
	return d.add(path, v)
}

// test checks the value at path. As the library did, null (or no value)
// is what a missing key of an object holds.
func (d *Doc) test(path string, want *node) error {
	parent, key, root, err := d.locate(path)
	if err != nil {
		return err
	}
	got := d.root
	if !root {
		if got, err = parent.child(key); err != nil && parent.kind == '[' {
			return err
		}
	}
	if isNull(got) && isNull(want) {
		return nil
	}
	if isNull(got) || isNull(want) || !equal(got, want) {
		return errors.New("the value is not the one tested")
	}
	return nil
}

func isNull(n *node) bool { return n == nil || string(n.raw) == "null" }

// The changes, each with what undoes it.

func (d *Doc) setRoot(v *node) error {
	if !v.container() {
		return errors.New("the whole document must be an object or an array")
	}
	old := d.root
	d.root = v
	d.undo = append(d.undo, func() { d.root = old })
	return nil
}

func (d *Doc) set(o *object, key string, v *node) {
	if i, ok := o.index[key]; ok {
		old := o.members[i].val
		o.members[i].val = v
		d.undo = append(d.undo, func() { o.members[i].val = old })
		return
	}
	o.index[key] = len(o.members)
	o.members = append(o.members, member{key, v})
	d.undo = append(d.undo, func() {
		delete(o.index, key)
		o.members[len(o.members)-1] = member{}
		o.members = o.members[:len(o.members)-1]
	})
}

func (d *Doc) unset(o *object, key string) {
	i := o.index[key]
	old := o.members[i].val
	o.members[i].val = nil
	delete(o.index, key)
	if o.holes++; o.holes >= 8 && o.holes >= len(o.members)/2 {
		d.holed = append(d.holed, o)
	}
	d.undo = append(d.undo, func() {
		o.members[i].val = old
		o.index[key] = i
		o.holes--
	})
}

func (d *Doc) insert(a *node, i int, v *node) {
	a.arr = slices.Insert(a.arr, i, v)
	d.undo = append(d.undo, func() { a.arr = slices.Delete(a.arr, i, i+1) })
}

func (d *Doc) removeAt(a *node, i int) *node {
	old := a.arr[i]
	a.arr = slices.Delete(a.arr, i, i+1)
	d.undo = append(d.undo, func() { a.arr = slices.Insert(a.arr, i, old) })
	return old
}
