package redact

import (
	"net/url"
	"strings"
)

// Location renders u, a place an upstream pointed to (a redirect's
// Location), for a message that a client or a log may show: its scheme,
// host and path alone. What may carry a credential is left out: user
// information, the query, the fragment, and the parameters of each path
// segment (";jsessionid=…", where servers put a session id); an opaque
// URL's opaque part ("urn:…") is masked. A nil u is "".
func Location(u *url.URL) string {
	if u == nil {
		return ""
	}
	v := url.URL{Scheme: u.Scheme, Host: u.Host}
	if u.Opaque != "" {
		v.Opaque = Mask
		return v.String()
	}
	raw := withoutParams(u.EscapedPath())
	path, err := url.PathUnescape(raw)
	if err != nil {
		return notShown
	}
	v.Path, v.RawPath = path, raw
	return v.String()
}

// withoutParams is an escaped path without its segments' parameters:
// each segment cut at its first ';'.
func withoutParams(escaped string) string {
	if !strings.Contains(escaped, ";") {
		return escaped
	}
	segs := strings.Split(escaped, "/")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, ";")
	}
	return strings.Join(segs, "/")
}
