package translate_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/translate"
)

// FuzzDecoderMatchesDecodeEvent checks that a Decoder, which shares ids
// between events and allocates them in slabs, decodes every event of a
// stream exactly as DecodeEvent decodes it alone.
func FuzzDecoderMatchesDecodeEvent(f *testing.F) {
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"Hel"}`), []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"lo"}`))
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"a"}`), []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m2","delta":"b"}`))
	f.Add([]byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m\u0031","delta":"a"}`), []byte(`{"type":"REASONING_MESSAGE_CONTENT","messageId":"m1","delta":"\n"}`))
	f.Add([]byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":"{\"a\""}`), []byte(`{"type":"TOOL_CALL_ARGS","toolCallId":"c","delta":":1}","timestamp":5}`))
	f.Add([]byte(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`), []byte(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"","delta":"x"}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var d translate.Decoder
		for range 2 { // twice: the second round meets the ids of the first
			for _, data := range [][]byte{a, b} {
				want, wantErr := translate.DecodeEvent(data)
				got, err := d.Decode(data)
				require.Equal(t, wantErr, err)
				require.Equal(t, want, got)
			}
		}
	})
}
