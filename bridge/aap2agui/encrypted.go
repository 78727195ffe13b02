package aap2agui

import (
	"maps"

	"github.com/aapagui/aapagui/store"
	"github.com/aapagui/aapagui/translate"
)

// storedToolCallValues gives the encrypted values stored with the tool
// calls of the entries of each list (toolCallId → value).
func storedToolCallValues(lists ...[]store.Entry) map[string]string {
	out := map[string]string{}
	for _, entries := range lists {
		for _, e := range entries {
			if v := translate.ParseEncryptedValues(e.AGUI); v != nil {
				maps.Copy(out, v.ToolCalls)
			}
		}
	}
	return out
}
