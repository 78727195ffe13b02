package demo_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/demo"
	"github.com/aapagui/aapagui/translate"
)

// An AGUIAgent with SearchTool set presents its search under that name: it
// reads that tool's settings from forwardedProps, calls it (inline when
// trusted, behind an interrupt when not) and ignores web_search; the zero
// value is the web_search agent.
func TestAGUIAgentSearchToolName(t *testing.T) {
	docs := demo.AGUIAgent{SearchTool: "doc_search"}
	srv := httptest.NewServer(docs)
	t.Cleanup(srv.Close)
	plain := httptest.NewServer(demo.AGUIAgent{})
	t.Cleanup(plain.Close)
	input := func(refs ...aap.ServerToolRef) map[string]any {
		return map[string]any{"messages": []any{map[string]any{"id": "u1", "role": "user", "content": "search cats"}}, "tools": []any{},
			"forwardedProps": map[string]any{translate.ForwardedPropsKey: map[string]any{"agent": map[string]any{"tools": refs}}}}
	}
	result := demo.SearchResult("cats")

	says, _, interrupt := aguiRun(t, srv, input(aap.ServerToolRef{Name: "doc_search", Trust: true}))
	assert.Equal(t, transcript{`tool_call: doc_search {"query":"cats"}`, "tool_result: " + result, "text: " + demo.SearchAnswer(result)}, says)
	assert.Empty(t, interrupt)

	says, call, interrupt := aguiRun(t, srv, input(aap.ServerToolRef{Name: "doc_search"}))
	assert.Equal(t, transcript{`tool_call: doc_search {"query":"cats"}`}, says)
	assert.NotEmpty(t, call)
	assert.NotEmpty(t, interrupt, "an untrusted doc_search asks permission")

	// web_search is not this agent's tool, and doc_search not the plain
	// agent's.
	says, _, _ = aguiRun(t, srv, input(aap.ServerToolRef{Name: demo.SearchTool, Trust: true}))
	require.Len(t, says, 1)
	assert.Equal(t, "text: "+strings.Replace(demo.NoSearchTool, "web_search", "doc_search", 1), says[0])
	says, _, _ = aguiRun(t, plain, input(aap.ServerToolRef{Name: "doc_search", Trust: true}))
	assert.Equal(t, transcript{"text: " + demo.NoSearchTool}, says)
	says, _, _ = aguiRun(t, plain, input(aap.ServerToolRef{Name: demo.SearchTool, Trust: true}))
	assert.Equal(t, `tool_call: web_search {"query":"cats"}`, says[0])

	// SearchSpec declares the search under the agent's name.
	assert.Equal(t, demo.SearchToolSpec, demo.AGUIAgent{}.SearchSpec())
	spec := docs.SearchSpec()
	assert.Equal(t, "doc_search", spec.Name)
	assert.JSONEq(t, string(demo.SearchToolSpec.Parameters), string(spec.Parameters))
}
