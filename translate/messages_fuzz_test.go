package translate_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ag-ui-protocol/ag-ui/sdks/community/go/pkg/core/types"

	"github.com/aapagui/aapagui/agui"
	"github.com/aapagui/aapagui/translate"
)

// FuzzRunInputMessages decodes a RunAgentInput body as agui2aap does and
// translates its messages to AAP: a history AAP cannot hold is a
// *translate.MessageError, never a panic, and what it makes encodes.
// Every encryptedValue on a message (@ag-ui/core 1.0) is kept by
// SnapshotEncrypted with the AAP message it belongs to, one entry per AAP
// message: none is lost. Seeded with the messages of every golden file's
// requests and histories, the encrypted-reasoning ones included.
func FuzzRunInputMessages(f *testing.F) {
	for _, suffix := range []string{".agui.request.json", ".agent.input.json", "history.agui.json"} {
		for _, s := range goldenSections(f, suffix) {
			if !bytes.HasPrefix(bytes.TrimSpace(s), []byte("{")) {
				s = append(append([]byte(`{"threadId":"t","runId":"r","messages":`), s...), '}')
			}
			f.Add(s)
		}
	}
	f.Add([]byte(`{"messages":[{"id":"r","role":"reasoning","content":"","encryptedValue":"v1"},{"id":"a","role":"activity","activityType":"x","content":{}},` +
		`{"id":"r2","role":"reasoning","content":"hm","encryptedValue":"v2"},{"id":"u","role":"user","content":"x","encryptedValue":"v3"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := agui.DecodeRunAgentInput(data)
		if err != nil {
			return
		}
		msgs, err := translate.MessagesToAAP(in.Messages)
		if err != nil {
			var me *translate.MessageError
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *translate.MessageError", err, err)
			}
			return
		}
		if _, err := json.Marshal(msgs); err != nil {
			t.Fatalf("the AAP messages do not encode: %v", err)
		}
		enc := translate.SnapshotEncrypted(in.Messages, data)
		if len(enc) != len(msgs) {
			t.Fatalf("%d sets of encrypted values for %d AAP messages", len(enc), len(msgs))
		}
		var kept strings.Builder
		for _, raw := range enc {
			if v := translate.ParseEncryptedValues(raw); v != nil {
				b, _ := json.Marshal(v)
				kept.Write(b)
			}
		}
		for _, m := range in.Messages {
			if m.EncryptedValue == "" || m.Role == types.RoleActivity {
				continue
			}
			q, _ := json.Marshal(m.EncryptedValue)
			if !strings.Contains(kept.String(), `"encryptedValue":`+string(q)) {
				t.Fatalf("the encryptedValue of %s message %q is lost: %s", m.Role, m.ID, kept.String())
			}
		}
	})
}
