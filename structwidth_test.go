package aapagui_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxStructFields is the most fields a struct of the bridges may have:
// past it, a value holds several things that belong apart.
const maxStructFields = 20

// wideStructs are the structs of the bridges that are still wider than
// maxStructFields, while they are split (package path inside the module,
// then the type's name). An entry is removed as its struct is split; none
// is added.
var wideStructs = map[string]bool{}

// TestStructWidth checks that no struct type declared in bridge/ (its
// non-test files) has more than maxStructFields fields, each name of a
// field list counted and an embedded field as one, but for the option
// structs (the types named Config or Serving) and the ones wideStructs
// lists, which must still be wider: the list only shrinks.
func TestStructWidth(t *testing.T) {
	widths := structWidths(t, "bridge")
	if len(widths) == 0 {
		t.Fatal("no structs found")
	}
	for _, name := range slices.Sorted(maps.Keys(widths)) {
		n := widths[name]
		switch {
		case n > maxStructFields && !wideStructs[name]:
			t.Errorf("%s has %d fields, more than %d: group what belongs together", name, n, maxStructFields)
		case n <= maxStructFields && wideStructs[name]:
			t.Errorf("%s has %d fields now: take it out of wideStructs", name, n)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(wideStructs)) {
		if _, ok := widths[name]; !ok {
			t.Errorf("wideStructs lists %s, which is no struct of bridge/ now: take it out", name)
		}
	}
}

// structWidths maps each struct type declared in the non-test files under
// dir, but the option structs (Config, Serving), to its number of fields;
// a type is named by its package's path inside the module and its name.
func structWidths(t *testing.T, dir string) map[string]int {
	t.Helper()
	widths := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		ast.Inspect(f, func(n ast.Node) bool {
			spec, ok := n.(*ast.TypeSpec)
			if !ok {
				return true
			}
			st, ok := spec.Type.(*ast.StructType)
			if !ok || spec.Name.Name == "Config" || spec.Name.Name == "Serving" {
				return true
			}
			widths[pkg+"."+spec.Name.Name] = fieldCount(st)
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return widths
}

// fieldCount is how many fields st has: each name of a field list, and
// an embedded field as one.
func fieldCount(st *ast.StructType) int {
	n := 0
	for _, f := range st.Fields.List {
		n += max(len(f.Names), 1)
	}
	return n
}
