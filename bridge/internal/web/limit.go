package web

import (
	"fmt"

	"github.com/aapagui/aapagui/internal/limit"
)

// Allow takes one of owner's requests from k (nil: no limit). When the key
// has none left the error is the 429 too_many_requests naming the rate,
// with Retry-After the time until one is.
func Allow(k *limit.Keys, owner string) error {
	if ok, wait := k.Allow(owner); !ok {
		return Throttled("too_many_requests", fmt.Sprintf("this key is over its limit of %g requests a second", k.Rate()), wait)
	}
	return nil
}
