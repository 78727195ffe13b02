package aapagui_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/aapagui/aapagui/"

// floorOf is the floor of a package of this module (its path inside the
// module), as CONTRIBUTING.md's map of the packages draws them; "" for a
// path that is on none.
func floorOf(pkg string) string {
	switch {
	case pkg == "internal/testkit" || strings.HasPrefix(pkg, "internal/testkit/"):
		return "testkit"
	case strings.HasPrefix(pkg, "internal/"):
		return "ground"
	case pkg == "aap" || pkg == "agui":
		return "wire"
	case pkg == "translate":
		return "translate"
	case pkg == "store" || strings.HasPrefix(pkg, "store/"):
		return "store"
	case strings.HasPrefix(pkg, "bridge/internal/"):
		return "plumbing"
	case pkg == "bridge/serving":
		return "options"
	case pkg == "bridge" || strings.HasPrefix(pkg, "bridge/"):
		return "bridge"
	case pkg == "demo":
		return "demo"
	case strings.HasPrefix(pkg, "cmd/"):
		return "cmd"
	}
	return ""
}

// mayImport is, for each floor, the floors its packages may import.
var mayImport = map[string][]string{
	"ground":    {"ground"},
	"testkit":   {"ground", "testkit"},
	"wire":      {"ground"},
	"translate": {"ground", "wire"},
	"store":     {"ground", "wire", "store"},
	"options":   {"ground"},
	"plumbing":  {"ground", "wire", "store", "options", "plumbing"},
	"bridge":    {"ground", "wire", "translate", "store", "options", "plumbing"},
	"demo":      {"ground", "wire", "translate"},
	"cmd":       {"ground", "wire", "translate", "store", "options", "plumbing", "bridge", "demo", "cmd"},
}

// testSupport reports whether a package of this module is there for tests
// only: the test helpers, and a floor's own test-support package (named
// …test, as store/storetest or bridge/internal/bridgetest).
func testSupport(pkg string) bool {
	return floorOf(pkg) == "testkit" || strings.HasSuffix(path.Base(pkg), "test")
}

// TestFloors checks the map of the packages in CONTRIBUTING.md against
// what the packages import (their non-test files): a package of the
// top-level internal/ imports nothing of the project outside internal/,
// no floor imports a higher one, the test helpers and the test-support
// packages are for tests only (a test-support package may use the test
// helpers), and neither bridge imports the other.
func TestFloors(t *testing.T) {
	imports := projectImports(t)
	if len(imports) == 0 {
		t.Fatal("no packages found")
	}
	for _, pkg := range slices.Sorted(maps.Keys(imports)) {
		floor := floorOf(pkg)
		if floor == "" {
			t.Errorf("%s is on no floor: place it in CONTRIBUTING.md's map and in floorOf", pkg)
			continue
		}
		for _, imp := range imports[pkg] {
			f := floorOf(imp)
			switch {
			case !slices.Contains(mayImport[floor], f) && (f != "testkit" || !testSupport(pkg)):
				t.Errorf("%s (floor %s) imports %s (floor %s)", pkg, floor, imp, f)
			case testSupport(imp) && !testSupport(pkg):
				t.Errorf("%s imports the test helper %s outside its tests", pkg, imp)
			case floor == "bridge" && f == "bridge" && pkg != imp:
				t.Errorf("%s imports %s: the two bridges stand beside each other", pkg, imp)
			}
		}
	}
}

// projectImports maps each package of the module (by its path inside the
// module) to the module's packages its non-test files import.
func projectImports(t *testing.T) map[string][]string {
	t.Helper()
	imports := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != "." && (name == "testdata" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if c.Text == "//go:build ignore" {
					return nil
				}
			}
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if _, ok := imports[pkg]; !ok {
			imports[pkg] = nil
		}
		for _, s := range f.Imports {
			p, _ := strconv.Unquote(s.Path.Value)
			if rel, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports[pkg], rel) {
				imports[pkg] = append(imports[pkg], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports
}
