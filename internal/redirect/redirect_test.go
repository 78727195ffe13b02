package redirect_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/redirect"
)

// A client from Client stops at the first redirect: the place it points to
// gets nothing, and the error names the status and the place without its
// query.
func TestClientRefusesRedirects(t *testing.T) {
	var reached atomic.Int64
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached.Add(1) }))
	t.Cleanup(target.Close)
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://user:pw@"+target.Listener.Addr().String()+"/run?token=secret#frag", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(from.Close)

	for name, c := range map[string]*http.Client{
		"a client of its own": redirect.Client(&http.Client{}),
		"Refuse":              {CheckRedirect: redirect.Refuse},
	} {
		resp, err := c.Post(from.URL, "application/json", nil)
		if resp != nil {
			resp.Body.Close()
		}
		var re *redirect.Error
		require.True(t, errors.As(err, &re), "%s: %v", name, err)
		assert.Equal(t, http.StatusTemporaryRedirect, re.StatusCode, name)
		assert.Equal(t, "http://"+target.Listener.Addr().String()+"/run", re.Location, name)
		err = redirect.Strip(err)
		assert.Contains(t, err.Error(), "HTTP 307 Temporary Redirect to http://"+target.Listener.Addr().String()+"/run", name)
		assert.NotContains(t, err.Error(), "secret", name)
		assert.NotContains(t, err.Error(), "pw", name)
	}
	assert.Zero(t, reached.Load(), "the redirect's target got no request")
}

// Strip leaves other errors as they are.
func TestStripOther(t *testing.T) {
	other := errors.New("connection refused")
	assert.Same(t, other, redirect.Strip(other))
	assert.Nil(t, redirect.Strip(nil))
}

// A client whose owner chose a CheckRedirect keeps it; nil stays nil.
func TestClientKeepsAChosenPolicy(t *testing.T) {
	own := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	assert.Same(t, own, redirect.Client(own))
	assert.Nil(t, redirect.Client(nil))
	plain := &http.Client{}
	assert.NotSame(t, plain, redirect.Client(plain))
	assert.Nil(t, plain.CheckRedirect, "the caller's client is not changed")
}

// A redirect to a place with path parameters (a session id a Java server
// puts in the path, ;jsessionid=…) is named without them.
func TestRefusedRedirectHidesPathParameters(t *testing.T) {
	target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(target.Close)
	from := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/app;v=S3SS10N/sink;jsessionid=S3SS10N", http.StatusFound)
	}))
	t.Cleanup(from.Close)
	resp, err := redirect.Client(&http.Client{}).Get(from.URL)
	if resp != nil {
		resp.Body.Close()
	}
	var re *redirect.Error
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Equal(t, target.URL+"/app/sink", re.Location)
	assert.NotContains(t, redirect.Strip(err).Error(), "S3SS10N")
}
