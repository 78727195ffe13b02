// Package header checks HTTP headers that come from configuration before
// any request carries them.
package header

import (
	"fmt"
	"net/http"

	"golang.org/x/net/http/httpguts"
)

// Check refuses a header no HTTP request can carry: a name that is not a
// token, or a value holding a control character (a CR LF would add a
// header). Values are never shown: they are often keys.
func Check(h http.Header) error {
	for name, values := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf("%q is not a header name", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("the value of %s holds a control character (the value is not shown)", name)
			}
		}
	}
	return nil
}
