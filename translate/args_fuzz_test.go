package translate_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/translate"
)

// argsJSONSpace is the JSON whitespace set.
const argsJSONSpace = " \t\n\r"

// argsCompactJSON is the standard library's compaction, the reference the
// package's own whitespace removal is checked against.
func argsCompactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Compact(&buf, b))
	return buf.String()
}

func FuzzArgumentsRoundTrip(f *testing.F) {
	for _, s := range []string{
		``, `null`, ` null `, `{}`, `{"a":1}`, "{ \"a\" : [ 1 , 2 ] }\n",
		`{"n":9007199254740993}`, `{"e":"\u00e9","r":"é","q":"\" \\"}`,
		`{"h":"<>&\u2028"}`, `[1]`, `"s"`, `1e400`, `true`, `{"a":`, `{} {}`,
		"{\"a\":\"\xff\"}", `{"a":{"b":{"c":[{},[],""]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, input []byte) {
		args, err := translate.ArgumentsFromInput(input)

		trimmed := bytes.Trim(input, argsJSONSpace)
		empty := len(trimmed) == 0 || string(trimmed) == "null"
		object := json.Valid(trimmed) && utf8.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{'
		if !empty && !object {
			var ae *translate.ArgumentsError
			require.ErrorAs(t, err, &ae, "input %q", input)
			return
		}
		require.NoError(t, err, "input %q", input)
		want := "{}"
		if object {
			want = argsCompactJSON(t, trimmed)
		}
		require.Equal(t, want, args)

		// Through the AG-UI wire: arguments travel as a JSON string.
		wire, err := json.Marshal(args)
		require.NoError(t, err)
		var back string
		require.NoError(t, json.Unmarshal(wire, &back))

		in, err := translate.InputFromArguments("call_1", back)
		require.NoError(t, err)
		require.Equal(t, want, string(in), "round trip must give back the compacted input byte for byte")
	})
}

func FuzzInputFromArguments(f *testing.F) {
	for _, s := range []string{
		``, "  \n", `{}`, `{"a" : 1}`, `{"a":`, `{"city":"Par`, `[]`, `null`, `"x"`, `-1.5e3`,
		`{"a":1}}`, `{"a":1} x`, "\u00a0{}", "{\"a\":\"\xc3\"}", `{"_raw_arguments":"x"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, args string) {
		in, err := translate.InputFromArguments("call_1", args)
		rec, ok := translate.RecoverInput(args)
		require.Equal(t, err == nil, ok, "RecoverInput succeeds exactly when InputFromArguments does")
		require.True(t, json.Valid(rec), "RecoverInput always returns valid JSON: %q", rec)
		require.Equal(t, byte('{'), rec[0])

		if err != nil {
			var ae *translate.ArgumentsError
			require.ErrorAs(t, err, &ae)
			require.Equal(t, "call_1", ae.ToolCallID)
			require.Contains(t, err.Error(), `"call_1"`)
			require.Nil(t, in)

			var m map[string]string
			require.NoError(t, json.Unmarshal(rec, &m))
			require.Len(t, m, 1)
			raw, found := m[translate.RawArgumentsKey]
			require.True(t, found)
			if utf8.ValidString(args) {
				require.Equal(t, args, raw, "the raw text is preserved exactly")
			}
			return
		}

		require.Equal(t, string(in), string(rec))
		trimmed := strings.Trim(args, argsJSONSpace)
		if trimmed == "" {
			require.Equal(t, `{}`, string(in))
			return
		}
		require.Equal(t, argsCompactJSON(t, []byte(trimmed)), string(in))

		// Idempotent: the result is already valid compact arguments.
		again, err := translate.ArgumentsFromInput(in)
		require.NoError(t, err)
		require.Equal(t, string(in), again)
	})
}

// argsModel is the reference the accumulator is checked against.
type argsModel struct {
	open    []*argsModelCall
	ended   map[string]bool
	chunked string // id of the chunked call, "" if none
}

type argsModelCall struct {
	id, name, parent string
	args             []byte
}

func (m *argsModel) find(id string) int {
	return slices.IndexFunc(m.open, func(c *argsModelCall) bool { return c.id == id })
}

func (m *argsModel) canStart(id, name string) bool {
	return id != "" && name != "" && m.find(id) < 0 && !m.ended[id]
}

func (m *argsModel) start(id, name, parent string) {
	m.open = append(m.open, &argsModelCall{id: id, name: name, parent: parent})
}

func (m *argsModel) end(id string) translate.CompletedCall {
	i := m.find(id)
	c := m.open[i]
	m.open = slices.Delete(m.open, i, i+1)
	m.ended[id] = true
	if m.chunked == id {
		m.chunked = ""
	}
	return translate.CompletedCall{ToolCallID: c.id, Name: c.name, ParentMessageID: c.parent, Arguments: string(c.args)}
}

func (m *argsModel) ids() []string {
	if len(m.open) == 0 {
		return nil
	}
	ids := make([]string, len(m.open))
	for i, c := range m.open {
		ids[i] = c.id
	}
	return ids
}

// argsFuzzReader hands out the fuzz input a byte or a slice at a time.
type argsFuzzReader struct{ data []byte }

func (r *argsFuzzReader) byte() byte {
	if len(r.data) == 0 {
		return 0
	}
	b := r.data[0]
	r.data = r.data[1:]
	return b
}

func (r *argsFuzzReader) bytes(n int) []byte {
	n = min(n, len(r.data))
	b := r.data[:n]
	r.data = r.data[n:]
	return b
}

func FuzzArgsAccumulator(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 3, '{', '}', '!', 2, 0})
	f.Add([]byte{0, 0, 0, 1, 1, 0, 2, 'a', 'b', 1, 1, 2, 'c', 'd', 2, 1, 2, 0})
	f.Add([]byte{3, 0xff, 2, '{', '}', 3, 0x01, 1, 'x', 4, 5, 6})
	f.Add([]byte{0, 3, 0, 4, 2, 3, 2, 0, 0, 6, 0, 0})
	ids := []string{"a", "b", "c", ""}
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc translate.ArgsAccumulator
		m := argsModel{ended: map[string]bool{}}
		completed := map[string]bool{} // ids completed since the last Reset
		complete := func(got, want translate.CompletedCall) {
			t.Helper()
			require.Equal(t, want, got, "completed call")
			require.False(t, completed[got.ToolCallID], "call %q completed twice", got.ToolCallID)
			completed[got.ToolCallID] = true
		}
		r := &argsFuzzReader{data: data}
		for step := 0; len(r.data) > 0; step++ {
			opc := r.byte()
			id := ids[int(opc>>4)%len(ids)]
			switch opc % 7 {
			case 0: // Start
				name := "f"
				if opc&8 != 0 {
					name = ""
				}
				want := m.canStart(id, name)
				err := acc.Start(id, name, "p")
				require.Equal(t, want, err == nil, "step %d Start(%q,%q): %v", step, id, name, err)
				if want {
					m.start(id, name, "p")
				}
			case 1: // Append
				delta := r.bytes(int(r.byte() % 16))
				i := m.find(id)
				err := acc.Append(id, string(delta))
				require.Equal(t, i >= 0, err == nil, "step %d Append(%q): %v", step, id, err)
				if i >= 0 {
					m.open[i].args = append(m.open[i].args, delta...)
				}
			case 2: // End
				got, err := acc.End(id)
				if m.find(id) < 0 {
					require.Error(t, err, "step %d End(%q)", step, id)
					break
				}
				require.NoError(t, err, "step %d End(%q)", step, id)
				complete(got, m.end(id))
			case 3: // Chunk
				flags := r.byte()
				var idp, namep, deltap *string
				if flags&1 != 0 {
					idp = &id
				}
				if flags&2 != 0 {
					name := "g"
					if flags&4 != 0 {
						name = ""
					}
					namep = &name
				}
				var delta []byte
				if flags&8 != 0 {
					delta = r.bytes(int(flags >> 4))
					s := string(delta)
					deltap = &s
				}
				ended, started, err := acc.Chunk(idp, namep, nil, deltap)

				var wantEnded []translate.CompletedCall
				if m.chunked != "" && idp != nil && *idp != m.chunked {
					wantEnded = append(wantEnded, m.end(m.chunked))
				}
				require.Len(t, ended, len(wantEnded), "step %d Chunk", step)
				for i := range ended {
					complete(ended[i], wantEnded[i])
				}
				wantStarted, wantErr := false, false
				if m.chunked == "" {
					if idp == nil || namep == nil || !m.canStart(*idp, *namep) {
						wantErr = true
					} else {
						m.start(*idp, *namep, "")
						m.chunked = *idp
						wantStarted = true
					}
				}
				require.Equal(t, wantErr, err != nil, "step %d Chunk: %v", step, err)
				require.Equal(t, wantStarted, started, "step %d Chunk", step)
				if !wantErr && deltap != nil {
					c := m.open[m.find(m.chunked)]
					c.args = append(c.args, delta...)
				}
			case 4: // EndChunked
				got, ok := acc.EndChunked()
				require.Equal(t, m.chunked != "", ok, "step %d EndChunked", step)
				if ok {
					complete(got, m.end(m.chunked))
				}
			case 5: // Open is checked after every step anyway.
			case 6: // Reset
				if opc&0x80 == 0 {
					break // keep resets rare enough for long sequences
				}
				acc.Reset()
				m = argsModel{ended: map[string]bool{}}
				clear(completed)
			}
			require.Equal(t, m.ids(), acc.Open(), "step %d Open()", step)
		}
	})
}
