package aap_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/aap"
)

func TestHasExtension(t *testing.T) {
	tests := []struct {
		name   string
		values []string
		want   bool
	}{
		{"absent", nil, false},
		{"alone", []string{"agui/1"}, true},
		{"among others, spaced, any case", []string{"x/2 , AGUI/1"}, true},
		{"in a second header line", []string{"x/1", "agui/1"}, true},
		{"another version", []string{"agui/2"}, false},
		{"a prefix is not the token", []string{"agui/10"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tt.values {
				h.Add(aap.ExtensionsHeader, v)
			}
			assert.Equal(t, tt.want, aap.HasExtension(h, aap.ExtensionAGUI))
		})
	}
}

// A turn request's "agui" member is read byte for byte; one that is not
// what the extension says is refused naming the field.
func TestTurnRequestAGUIInput(t *testing.T) {
	var req aap.PostSessionTurnRequest
	require.NoError(t, json.Unmarshal([]byte(`{"messages":[{"role":"user","content":"hi"}],
		"agui":{"state":{"recipe":{"title":"Soup","n":1.50}},"context":[{"description":"page","value":"/recipes"}],"forwardedProps":{"x":[1]}}}`), &req))
	require.NotNil(t, req.AGUI)
	assert.JSONEq(t, `{"recipe":{"title":"Soup","n":1.50}}`, string(req.AGUI.State))
	assert.Contains(t, string(req.AGUI.State), `1.50`, "numbers as the page wrote them")
	assert.JSONEq(t, `[{"description":"page","value":"/recipes"}]`, string(req.AGUI.Context))
	assert.JSONEq(t, `{"x":[1]}`, string(req.AGUI.ForwardedProps))

	var none aap.PostSessionTurnRequest
	require.NoError(t, json.Unmarshal([]byte(`{"messages":[{"role":"user","content":"hi"}],"agui":null}`), &none))
	assert.Nil(t, none.AGUI)
	assert.True(t, none.AGUI.Empty())

	for name, body := range map[string]string{
		"not an object":        `"state"`,
		"context not an array": `{"context":{"a":1}}`,
		"context entry":        `{"context":[{"description":"d"}]}`,
		"context value type":   `{"context":[{"description":"d","value":3}]}`,
		"forwarded props":      `{"forwardedProps":[1]}`,
	} {
		t.Run(name, func(t *testing.T) {
			var r aap.PostSessionTurnRequest
			err := json.Unmarshal([]byte(`{"messages":[{"role":"user","content":"hi"}],"agui":`+body+`}`), &r)
			var de *aap.DecodeError
			require.ErrorAs(t, err, &de)
			assert.Contains(t, de.Field, "agui")
		})
	}

	var create aap.PostSessionsRequest
	require.NoError(t, json.Unmarshal([]byte(`{"agent":{"name":"a"},"agui":{"state":[1,2]}}`), &create))
	assert.JSONEq(t, `[1,2]`, string(create.AGUI.State))
}

// An agui event is the AG-UI event's JSON, decoded and written as it is.
func TestAGUIEventRoundTrip(t *testing.T) {
	data := `{"type":"STATE_DELTA","delta":[{"op":"add","path":"/a","value":1.0}]}`
	ev, err := aap.DecodeEvent("agui", []byte(data))
	require.NoError(t, err)
	require.IsType(t, &aap.AGUIEvent{}, ev)
	out, err := ev.AppendData(nil)
	require.NoError(t, err)
	assert.Equal(t, data, string(out))

	for _, bad := range []string{`[1]`, `{"delta":1}`, `{"type":""}`, `{"type":`} {
		_, err := aap.DecodeEvent("agui", []byte(bad))
		assert.Error(t, err, bad)
	}
}

// Meta reports the extensions the server granted in its answer's header.
func TestMetaGrants(t *testing.T) {
	grant := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if grant && aap.HasExtension(r.Header, aap.ExtensionAGUI) {
			w.Header().Set(aap.ExtensionsHeader, aap.ExtensionAGUI)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"version":3,"agents":[]}`))
	}))
	defer srv.Close()

	asking := aap.NewClient(srv.URL, aap.ClientOptions{Header: http.Header{aap.ExtensionsHeader: {aap.ExtensionAGUI}}})
	meta, err := asking.Meta(t.Context())
	require.NoError(t, err)
	assert.True(t, meta.Grants(aap.ExtensionAGUI))

	plain := aap.NewClient(srv.URL, aap.ClientOptions{})
	meta, err = plain.Meta(t.Context())
	require.NoError(t, err)
	assert.False(t, meta.Grants(aap.ExtensionAGUI), "not asked, not granted")

	grant = false
	meta, err = asking.Meta(t.Context())
	require.NoError(t, err)
	assert.False(t, meta.Grants(aap.ExtensionAGUI), "a server that does not know it")
}
