package aap2agui

import (
	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/aap"
	"github.com/aapagui/aapagui/translate"
)

// toolResultParts gives the tool message AppendMessageToAGUI made of m
// (msgs, the messages made of m) content parts, when the agent's ToolResultParts
// says the agent reads them and m's content needs them (it holds an image,
// or a part AAP could not hold).
func (a *agent) toolResultParts(msgs []types.Message, m aap.Message) {
	tm, ok := m.(*aap.ToolMessage)
	if !a.cfg.ToolResultParts || !ok || len(msgs) != 1 {
		return
	}
	if parts, ok := translate.ToolContentParts(tm.Content); ok {
		msgs[0].Content = parts
	}
}
