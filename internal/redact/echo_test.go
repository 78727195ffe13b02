package redact_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/aapagui/aapagui/internal/redact"
)

// TestEchoed: what an upstream echoes of a request's credentials, in any
// of the forms an echo server or a proxy writes them, is masked; the
// rest of the message stays.
func TestEchoed(t *testing.T) {
	const key = "sk-live/abc+def=="
	sent := http.Header{
		"Authorization":  {"Bearer " + key},
		"X-Tenant-Token": {"tenant-s3cr3t"},
		"X-Short":        {"ab"},
		"Content-Type":   {"application/json"},
	}
	jsonHeaders, _ := json.Marshal(map[string]any{"headers": sent})
	nested, _ := json.Marshal(map[string]string{"body": string(jsonHeaders)})
	php, _ := json.Marshal(map[string]string{"php": strings.ReplaceAll(string(jsonHeaders), "/", `\/`)})
	for _, body := range []string{
		"the key " + key + " is not valid",
		"Authorization: Bearer " + key + "\r\nHost: aap\r\n",
		"authorization=Bearer%20" + url.QueryEscape(key),
		string(jsonHeaders),
		string(nested),
		`{"auth":"Bearer sk-live\/abc+def=="}`,
		`{"key":"` + url.PathEscape(key) + `"}`,
		"map[Authorization:[Bearer " + key + "] X-Tenant-Token:[tenant-s3cr3t]]",
		string(php),
		`{"k":"sk-live\u002fabc\u002Bdef\u003d="}`,
		"Authorization=Bearer+" + url.QueryEscape(key),
	} {
		got := redact.Echoed(body, sent)
		for _, secret := range []string{"live", "abc", "tenant-s3cr3t"} {
			assert.NotContains(t, got, secret, "in %q", body)
		}
		assert.Contains(t, got, redact.Mask, body)
	}

	// Credentials the request did not send, named as credentials.
	for body, want := range map[string]string{
		"upstream says: Authorization: Bearer other-token-1\nbye": "upstream says: Authorization: ***\nbye",
		`{"Proxy-Authorization":"Basic dXNlcjpwYXNz","ok":1}`:     `{"Proxy-Authorization":"***","ok":1}`,
		`{"headers":{"X-Api-Key":["k-987654"]}}`:                  `{"headers":{"X-Api-Key":["***"]}}`,
		"got bearer abc.def-ghi, expected another":                "got bearer ***, expected another",
		"Cookie: session=abcdef; theme=dark":                      "Cookie: ***",
	} {
		assert.Equal(t, want, redact.Echoed(body, nil), body)
	}

	plain := `{"error":{"code":"overloaded","message":"try again in 2 s (ab)"},"type":"application/json"}`
	assert.Equal(t, plain, redact.Echoed(plain, sent), "no credential: the body as it is; short and plain values are left")
}
