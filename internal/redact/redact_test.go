package redact_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/redact"
)

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://agent:8000/run":                                           "http://agent:8000/run",
		"https://agent/run?token=s3cr3t":                                  "https://agent/run?token=***",
		"https://agent/run?a=1&token=s3cr3t&sig=x%2By&empty=":             "https://agent/run?a=***&token=***&sig=***&empty=***",
		"https://agent/run?s3cr3t":                                        "https://agent/run?***",
		"https://user:pa55@agent/run":                                     "https://user:***@agent/run",
		"https://user@agent/run":                                          "https://user@agent/run",
		"https://agent/run#access_token=s3cr3t":                           "https://agent/run#***",
		"postgres://app:pa55@db:5432/aap?password=s3cr3t&sslmode=require": "postgres://app:***@db:5432/aap?password=***&sslmode=***",
		"http://[::1]:namedport":                                          "(not shown: it does not parse)",
	} {
		got := redact.URL(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "s3cr3t")
		assert.NotContains(t, got, "pa55")
	}
}

func TestDSN(t *testing.T) {
	for in, want := range map[string]string{
		"memory:":                "memory:",
		"sqlite:aap2agui.db":     "sqlite:aap2agui.db",
		"sqlite:/var/lib/aap.db": "sqlite:/var/lib/aap.db",
		"postgresql://app:pa55@db/aap?password=s3cr3t&sslmode=disable": "postgresql://app:***@db/aap?password=***&sslmode=***",
		"host=db user=app password=s3cr3t dbname=aap":                  "host=db user=app password=*** dbname=aap",
		"host=db password = 's3cr3t with spaces' sslmode=require":      "host=db password=*** sslmode=require",
		"host=db password='it\\'s s3cr3t' sslpassword=pa55":            "host=db password=*** sslpassword=***",
		"host=db PASSWORD=s3cr3t\tport=5432":                           "host=db PASSWORD=*** port=5432",
		"host=db password='s3cr3t":                                     "(not shown: it does not parse)",
		"host=db =s3cr3t":                                              "(not shown: it does not parse)",
		"host=db s3cr3t":                                               "(not shown: it does not parse)",
	} {
		got := redact.DSN(in)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "s3cr3t")
		assert.NotContains(t, got, "pa55")
	}
}

// TestError: the error of an HTTP call to a URL with a token in its
// query (a refused connection, here) quotes the URL without the token,
// and still tells what happened.
func TestError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "http://user:pa55@"+addr+"/run?token=s3cr3t", nil)
	require.NoError(t, err)
	_, err = http.DefaultClient.Do(req)
	require.Error(t, err)
	require.Contains(t, err.Error(), "s3cr3t", "the standard library's error quotes the query")

	red := redact.Error(err)
	assert.NotContains(t, red.Error(), "s3cr3t")
	assert.NotContains(t, red.Error(), "pa55")
	assert.Contains(t, red.Error(), addr+"/run?token=***")
	var opErr *net.OpError
	assert.True(t, errors.As(red, &opErr), "the cause is still there")
	var ue *url.Error
	require.True(t, errors.As(red, &ue))

	other := errors.New("not an HTTP error")
	assert.Equal(t, other, redact.Error(other))
	assert.NoError(t, redact.Error(nil))
	assert.False(t, strings.Contains(redact.Error(&url.Error{Op: "Get", URL: "http://a/?k=v", Err: context.DeadlineExceeded}).Error(), "=v"))
}
