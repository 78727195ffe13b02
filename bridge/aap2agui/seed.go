package aap2agui

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// checkSeed refuses seed history the agent could only misread: two tool
// calls with one id, a tool result or permission for a call no earlier
// assistant message made (or answered twice), and a data: image whose
// base64 does not decode.
func checkSeed(msgs []aap.Message) error {
	var calls translate.Calls
	answered := map[string]bool{} // id → answered, by a result or a permission
	for i, m := range msgs {
		var content aap.Content
		switch m := m.(type) {
		case *aap.UserMessage:
			content = m.Content
		case *aap.AssistantMessage:
			content = m.Content
			here := map[string]bool{}
			for _, b := range m.Content.Blocks {
				if tu, ok := b.(*aap.ToolUseBlock); ok {
					if _, made := calls.MadeAt(tu.ToolCallID); made || here[tu.ToolCallID] {
						return fmt.Errorf("messages[%d]: tool call id %q is used twice", i, tu.ToolCallID)
					}
					here[tu.ToolCallID] = true
				}
			}
		case *aap.ToolMessage:
			content = m.Content
		}
		if isAnswer(m) {
			answer := translate.AnsweredCall(m)
			if _, made := calls.MadeAt(answer); !made {
				return fmt.Errorf("messages[%d] answers tool call %q, which no earlier assistant message made", i, answer)
			}
			if answered[answer] {
				return fmt.Errorf("messages[%d] answers tool call %q a second time", i, answer)
			}
			answered[answer] = true
		}
		calls.Read(m)
		for j, b := range content.Blocks {
			if img, ok := b.(*aap.ImageBlock); ok {
				if err := checkDataURL(img.URL); err != nil {
					return fmt.Errorf("messages[%d].content[%d]: %w", i, j, err)
				}
			}
		}
	}
	return nil
}

func isAnswer(m aap.Message) bool {
	switch m.(type) {
	case *aap.ToolMessage, *aap.ToolPermissionMessage:
		return true
	}
	return false
}

// checkDataURL checks that a base64 data: URL decodes.
func checkDataURL(u string) error {
	rest, ok := strings.CutPrefix(u, "data:")
	if !ok {
		return nil
	}
	meta, data, ok := strings.Cut(rest, ",")
	if !ok {
		return fmt.Errorf("data: URL without a comma")
	}
	if !strings.HasSuffix(meta, ";base64") {
		return nil
	}
	if _, err := base64.StdEncoding.DecodeString(data); err != nil {
		return fmt.Errorf("data: image whose base64 does not decode: %v", err)
	}
	return nil
}
