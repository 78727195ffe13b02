package apikey

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// Keys checks bearer API keys. The zero value (no keys) lets every request
// in as the anonymous owner "".
type Keys struct {
	hashes [][32]byte
}

// New returns a checker for the given keys (empty strings are ignored).
func New(keys []string) Keys {
	var k Keys
	for _, key := range keys {
		if key != "" {
			k.hashes = append(k.hashes, sha256.Sum256([]byte(key)))
		}
	}
	return k
}

// Open reports whether no keys are configured.
func (k Keys) Open() bool { return len(k.hashes) == 0 }

// ErrUnauthorized reports a missing or wrong API key.
var ErrUnauthorized = errors.New("missing or invalid API key")

// Owner checks the request's "Authorization: Bearer <key>" and returns the
// owner id of the key: a hash, so that neither stores nor logs ever hold a
// key. Every configured key is compared, in constant time.
func (k Keys) Owner(r *http.Request) (string, error) {
	if k.Open() {
		return "", nil
	}
	auth := r.Header.Get("Authorization")
	scheme, key, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || key == "" {
		return "", ErrUnauthorized
	}
	sum := sha256.Sum256([]byte(strings.TrimSpace(key)))
	match := 0
	for _, h := range k.hashes {
		match |= subtle.ConstantTimeCompare(sum[:], h[:])
	}
	if match != 1 {
		return "", ErrUnauthorized
	}
	return hex.EncodeToString(sum[:16]), nil
}
