package aap_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/aap"
)

// MessageSize counts the bytes of a message's strings and its blocks.
func TestMessageSize(t *testing.T) {
	for _, c := range []struct {
		m            aap.Message
		size, blocks int
	}{
		{&aap.SystemMessage{Content: "be brief"}, 8, 0},
		{aap.UserText("hello"), 5, 0},
		{&aap.ToolPermissionMessage{ToolCallID: "c1", Reason: "no"}, 4, 0},
		{&aap.ToolMessage{ToolCallID: "c1", Content: aap.TextContent("ok")}, 4, 0},
		{&aap.AssistantMessage{Content: aap.BlockContent(
			&aap.ThinkingBlock{Thinking: "hmm"},
			&aap.TextBlock{Text: "hi"},
			&aap.ToolUseBlock{ToolCallID: "c1", Name: "f", Input: json.RawMessage(`{}`)},
			&aap.ImageBlock{URL: "u"},
		)}, 3 + 2 + 5 + 1, 4},
	} {
		size, blocks := aap.MessageSize(c.m)
		assert.Equal(t, c.size, size, "%#v", c.m)
		assert.Equal(t, c.blocks, blocks, "%#v", c.m)
	}
}
