package apikey_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/apikey"
)

func TestKeys(t *testing.T) {
	keys := apikey.New([]string{"key-one", "", "key-two"})
	req := func(auth string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		if auth != "" {
			r.Header.Set("Authorization", auth)
		}
		return r
	}
	one, err := keys.Owner(req("Bearer key-one"))
	require.NoError(t, err)
	two, err := keys.Owner(req("bearer key-two"))
	require.NoError(t, err)
	assert.NotEqual(t, one, two, "each key is its own owner")
	assert.NotContains(t, one, "key-one", "the owner id is a hash, never the key")
	again, err := keys.Owner(req("Bearer  key-one "))
	require.NoError(t, err)
	assert.Equal(t, one, again)

	for _, bad := range []string{"", "Bearer", "Bearer ", "Basic a2V5LW9uZQ==", "Bearer key-three", "key-one"} {
		_, err := keys.Owner(req(bad))
		assert.ErrorIs(t, err, apikey.ErrUnauthorized, "%q", bad)
	}

	open := apikey.New(nil)
	assert.True(t, open.Open())
	owner, err := open.Owner(req(""))
	require.NoError(t, err)
	assert.Equal(t, "", owner, "an open server has one anonymous owner")
}
