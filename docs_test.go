package aapagui_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// maxREADMELines is how long the front page may grow: what it is, the two
// commands, the two programs, a CopilotKit quick start and the links to
// the docs; the rest belongs in docs/.
const maxREADMELines = 300

// docFiles are the Markdown files whose links are checked: the front page,
// the docs and the project's own files. CHANGELOG.md is history: its old
// entries keep the links they were written with.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "SECURITY.md", "examples/copilotkit/README.md"}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found (%v)", err)
	}
	return append(files, docs...)
}

// TestDocLinks: every relative link and image of the README and the docs
// names a file of the repository, and every #anchor a heading of the file
// it points into, as GitHub renders it.
func TestDocLinks(t *testing.T) {
	for _, problem := range brokenLinks(t, os.DirFS("."), docFiles(t)) {
		t.Error(problem)
	}
}

// TestREADMELength: the README stays a front page.
func TestREADMELength(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n > maxREADMELines {
		t.Errorf("README.md has %d lines, more than %d: move the detail into docs/ and link to it", n, maxREADMELines)
	}
}

// TestDocsSayWhoFor: each doc opens, under its title, with the line that
// says who it is for, so that a reader arriving from a link knows at once
// whether to read on.
func TestDocsSayWhoFor(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs found (%v)", err)
	}
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		title, rest, _ := strings.Cut(string(data), "\n\n")
		if !strings.HasPrefix(title, "# ") || !strings.HasPrefix(rest, "For ") {
			t.Errorf("%s: want a title, then a paragraph beginning \"For …\" that says who the doc is for", doc)
		}
	}
}

// TestDocLinksFindBroken: the checker reports a missing file or image, a
// missing heading, a link out of the repository and an anchor into a file
// that is not Markdown; it takes GitHub's anchors (punctuation dropped,
// repeated headings numbered), folders and addresses as they are, and
// ignores what code spans and code blocks hold.
func TestDocLinksFindBroken(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md": {Data: []byte("# Top\n\n## Run it — now!\n\n## Run it — now!\n\n" +
			"[ok](docs/A.md) [ok](docs/A.md#the-users-flags) [ok](#run-it--now-1) [ok](https://example.com/x.md)\n\n" +
			"`[not a link](nowhere.md)`\n\n```md\n[not a link](nowhere.md)\n```\n\n" +
			"[gone](docs/B.md) [no heading](docs/A.md#nothing) [self](#run-it--now-2) [out](../x.md) [code](main.go#L1) [folder](docs)\n")},
		"docs/A.md": {Data: []byte("# The user's flags\n\n[back](../README.md#top) ![img](pic.png)\n")},
		"main.go":   {Data: []byte("package main\n")},
	}
	got := brokenLinks(t, fsys, []string{"README.md", "docs/A.md"})
	want := []string{
		`README.md: link "docs/B.md": no file docs/B.md`,
		`README.md: link "docs/A.md#nothing": no heading "nothing" in docs/A.md`,
		`README.md: link "#run-it--now-2": no heading "run-it--now-2" in README.md`,
		`README.md: link "../x.md": outside the repository`,
		`README.md: link "main.go#L1": an anchor into main.go, which is not Markdown`,
		`docs/A.md: link "pic.png": no file docs/pic.png`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("reported:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// brokenLinks checks the relative links of files (slash-separated paths
// from the root of fsys) and returns one line per broken link.
func brokenLinks(t *testing.T, fsys fs.FS, files []string) []string {
	t.Helper()
	md := goldmark.New(goldmark.WithExtensions(extension.GFM))
	parse := func(file string) (ast.Node, []byte, error) {
		src, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, nil, err
		}
		return md.Parser().Parse(text.NewReader(src)), src, nil
	}
	anchors := map[string][]string{} // by file, once read
	anchorsOf := func(file string) ([]string, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		doc, src, err := parse(file)
		if err != nil {
			return nil, err
		}
		anchors[file] = headingAnchors(doc, src)
		return anchors[file], nil
	}
	var problems []string
	for _, file := range files {
		doc, _, err := parse(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, dest := range linkDestinations(doc) {
			if p := checkLink(fsys, file, dest, anchorsOf); p != "" {
				problems = append(problems, fmt.Sprintf("%s: link %q: %s", file, dest, p))
			}
		}
	}
	return problems
}

// checkLink returns what is wrong with the link dest of file, or "" when
// it resolves (an address with a scheme is not checked).
func checkLink(fsys fs.FS, file, dest string, anchorsOf func(string) ([]string, error)) string {
	u, err := url.Parse(dest)
	if err != nil {
		return err.Error()
	}
	if u.Scheme != "" || u.Host != "" {
		return ""
	}
	target := file
	if u.Path != "" {
		target = path.Join(path.Dir(file), u.Path)
		if target == ".." || strings.HasPrefix(target, "../") || path.IsAbs(u.Path) {
			return "outside the repository"
		}
		if _, err := fs.Stat(fsys, target); err != nil {
			return "no file " + target
		}
	}
	if u.Fragment == "" {
		return ""
	}
	if path.Ext(target) != ".md" {
		return "an anchor into " + target + ", which is not Markdown"
	}
	a, err := anchorsOf(target)
	if err != nil {
		return err.Error()
	}
	if !slices.Contains(a, u.Fragment) {
		return fmt.Sprintf("no heading %q in %s", u.Fragment, target)
	}
	return ""
}

// linkDestinations are the destinations of the links and images of a
// parsed document, in order (code spans and code blocks hold none).
func linkDestinations(doc ast.Node) []string {
	var out []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch l := n.(type) {
		case *ast.Link:
			out = append(out, string(l.Destination))
		case *ast.Image:
			out = append(out, string(l.Destination))
		}
		return ast.WalkContinue, nil
	})
	return out
}

// headingAnchors are the anchors GitHub gives a document's headings: the
// heading's text in lower case, without punctuation, spaces as hyphens;
// a repeated one gets -1, -2, … (github-slugger's rule).
func headingAnchors(doc ast.Node, src []byte) []string {
	var out []string
	seen := map[string]int{}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		h, ok := n.(*ast.Heading)
		if !entering || !ok {
			return ast.WalkContinue, nil
		}
		slug := slugify(plainText(h, src))
		a := slug
		if k := seen[slug]; k > 0 {
			a = fmt.Sprintf("%s-%d", slug, k)
		}
		seen[slug]++
		out = append(out, a)
		return ast.WalkSkipChildren, nil
	})
	return out
}

// plainText is the text of n's inline content, as a reader sees it.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
			if t.SoftLineBreak() || t.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// slugify is github-slugger's anchor of a heading's text.
func slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
