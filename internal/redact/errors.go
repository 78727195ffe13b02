package redact

import "net/url"

// Error returns err, an HTTP client's error (http.Client.Do returns a
// *url.Error, which quotes the request's URL), with its URL redacted as
// URL renders it; errors.Is, errors.As and Timeout see through it as
// before. Another error is returned as it is.
func Error(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return &url.Error{Op: ue.Op, URL: URL(ue.URL), Err: ue.Err}
	}
	return err
}
