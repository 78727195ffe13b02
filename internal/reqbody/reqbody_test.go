package reqbody

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBody(t *testing.T) {
	req, err := http.NewRequest(http.MethodPost, "http://example.invalid/", nil)
	require.NoError(t, err)
	b := Set(req, []byte("hello"))
	assert.EqualValues(t, 5, req.ContentLength)

	got, err := io.ReadAll(req.Body)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))
	assert.Nil(t, req.Body.(*reader).data, "a reader read whole keeps nothing")

	again, err := req.GetBody()
	require.NoError(t, err, "before Release a retry can read the body again")
	got, err = io.ReadAll(again)
	require.NoError(t, err)
	assert.Equal(t, "hello", string(got))

	b.Release()
	_, err = req.GetBody()
	assert.ErrorIs(t, err, ErrReleased)
	assert.Nil(t, b.data)

	empty, err := http.NewRequest(http.MethodPost, "http://example.invalid/", nil)
	require.NoError(t, err)
	Set(empty, nil)
	assert.Equal(t, http.NoBody, empty.Body)
	assert.Zero(t, empty.ContentLength)
}

// The body goes over a real connection whole, with its length.
func TestBodyOverHTTP(t *testing.T) {
	var got []byte
	var length int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		length = r.ContentLength
		got, _ = io.ReadAll(r.Body)
	}))
	defer srv.Close()
	data := make([]byte, 100_000)
	for i := range data {
		data[i] = byte('a' + i%26)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL, nil)
	require.NoError(t, err)
	b := Set(req, data)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	b.Release()
	resp.Body.Close()
	assert.EqualValues(t, len(data), length)
	assert.Equal(t, data, got)
}
