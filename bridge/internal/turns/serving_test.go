package turns_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/turns"
)

// The bridges' public Serving types are turns.Serving field for field
// (their conversion to it compiles only then), and say the same of each
// field: the struct bodies, their docs with them, are written alike in
// both bridges.
func TestServingDocumentedAlike(t *testing.T) {
	a2g := servingBody(t, "../../aap2agui/config.go")
	g2a := servingBody(t, "../../agui2aap/config.go")
	assert.Equal(t, a2g, g2a, "aap2agui.Serving and agui2aap.Serving differ: keep their fields and docs the same")
}

// servingBody is the source of the struct type Serving in the file at
// path, from its opening brace to its closing one.
func servingBody(t *testing.T, path string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
	require.NoError(t, err)
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			if ts := s.(*ast.TypeSpec); ts.Name.Name == "Serving" {
				st, ok := ts.Type.(*ast.StructType)
				require.True(t, ok, "%s: Serving is not a struct type", path)
				return string(src[fset.Position(st.Fields.Opening).Offset : fset.Position(st.Fields.Closing).Offset+1])
			}
		}
	}
	t.Fatalf("%s: no type Serving", path)
	return ""
}

// Defaults are what SetDefaults gives the zero fields.
func TestDefaults(t *testing.T) {
	var s turns.Serving
	require.NoError(t, s.SetDefaults("test"))
	d := turns.Defaults()
	assert.Equal(t, d.HeaderTimeout, s.HeaderTimeout)
	assert.Equal(t, d.IdleTimeout, s.IdleTimeout)
	assert.Equal(t, d.StartTimeout, s.StartTimeout)
	assert.Equal(t, d.StallTimeout, s.StallTimeout)
	assert.Equal(t, d.OnClientGone, s.OnClientGone)
	assert.Equal(t, d.KeepAlive, s.KeepAlive)
	assert.Equal(t, d.LeaseTTL, s.LeaseTTL)
	assert.Equal(t, d.MaxSchedulingDelay, s.MaxSchedulingDelay)
	assert.Equal(t, d.MaxEventSize, s.MaxEventSize)
	assert.Equal(t, d.MaxMessageSize, s.MaxMessageSize)
	assert.Equal(t, d.BodyTimeout, s.BodyTimeout)
	assert.Zero(t, s.MaxTurnDuration)
	assert.Zero(t, s.MaxRenewalLag)
}
