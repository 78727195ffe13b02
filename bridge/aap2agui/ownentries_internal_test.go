package aap2agui

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/store"
)

func TestMissingResults(t *testing.T) {
	hist := []store.Entry{
		{Message: &aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ToolUseBlock{ToolCallID: "c1", Name: "f", Input: json.RawMessage(`{}`)},
			&aap.ToolUseBlock{ToolCallID: "c2", Name: "f", Input: json.RawMessage(`{}`)},
		)}},
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("done")}},
	}
	results := []store.Entry{
		{Message: &aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent(grantedText)}},
		{Message: &aap.ToolMessage{ToolCallID: "c2", Content: aap.TextContent(grantedText)}},
		{Message: &aap.ToolMessage{ToolCallID: "gone", Content: aap.TextContent(grantedText)}},
	}
	assert.Equal(t, results[1:2], missingResults(hist, results))
	assert.Nil(t, missingResults(hist, nil))
}
