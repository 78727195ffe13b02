package redact_test

import (
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/redact"
)

// TestLocation: a redirect's place is shown by scheme, host and path
// only: no user information, query or fragment, no path parameters in
// any segment (a Java server's ;jsessionid=, a matrix parameter), and an
// opaque URL's opaque part masked. An escaped ';' (%3B) is part of its
// segment's name, not a parameter.
func TestLocation(t *testing.T) {
	for in, want := range map[string]string{
		"http://agent:8000/run":                                     "http://agent:8000/run",
		"https://agent/sink;jsessionid=S3SS10N":                     "https://agent/sink",
		"https://agent/a;v=S3SS10N/sink;jsessionid=S3SS10N;x=1/":    "https://agent/a/sink/",
		"https://user:pa55@agent/run;S3SS10N?token=S3SS10N#S3SS10N": "https://agent/run",
		"https://agent/;S3SS10N":                                    "https://agent/",
		"https://agent/a%3Bb/c%2Fd;S3SS10N":                         "https://agent/a%3Bb/c%2Fd",
		"https://agent/caf%C3%A9;S3SS10N/next":                      "https://agent/caf%C3%A9/next",
		"urn:S3SS10N":                                               "urn:***",
		"https://agent":                                             "https://agent",
	} {
		u, err := url.Parse(in)
		require.NoError(t, err, in)
		got := redact.Location(u)
		assert.Equal(t, want, got, in)
		assert.NotContains(t, got, "S3SS10N", in)
		assert.NotContains(t, got, "pa55", in)
	}
	assert.Empty(t, redact.Location(nil))
}
