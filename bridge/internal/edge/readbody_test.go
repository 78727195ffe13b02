package edge_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/bridge/internal/edge"
	"github.com/aapagui/aapagui/bridge/internal/fault"
)

// A body reads back whole whatever length it claims: none, its own, or
// one far past what it holds (the buffer made for it is then bounded).
func TestReadBody(t *testing.T) {
	body := strings.Repeat("x", 100_000)
	for name, length := range map[string]int64{"no length": -1, "its length": int64(len(body)), "a length it does not have": 1 << 40} {
		t.Run(name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
			r.ContentLength = length
			got, err := edge.ReadBody(r)
			require.NoError(t, err)
			assert.Equal(t, body, string(got))
		})
	}
}

// A body that ends before the length it claims is a cut request: an
// error (400), not what arrived taken for the whole.
func TestReadBodyCutShort(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"threadId":"t"`))
	r.ContentLength = 100
	_, err := edge.ReadBody(r)
	require.Error(t, err)
}

// A body nested as deep as JSON decoding reads (10,000 levels) reads back;
// one level deeper is refused as a 400 naming the limit, before any
// decoding; brackets inside strings are text, not nesting.
func TestReadBodyDepth(t *testing.T) {
	read := func(body string) ([]byte, error) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		return edge.ReadBody(r)
	}
	nested := func(n int) string { return strings.Repeat(`{"a":[`, n/2) + `"[[{{"` + strings.Repeat(`]}`, n/2) }
	got, err := read(nested(edge.MaxDepth))
	require.NoError(t, err)
	assert.Len(t, got, len(nested(edge.MaxDepth)))
	_, err = read(`[` + nested(edge.MaxDepth) + `]`)
	var f *fault.Failure
	require.ErrorAs(t, err, &f)
	assert.Equal(t, http.StatusBadRequest, f.Kind.Status())
	assert.Equal(t, "invalid_body", f.Code)
	assert.Contains(t, f.Message, "deeper than 10000 levels, the limit")
}
