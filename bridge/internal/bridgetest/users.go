package bridgetest

import (
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Token is a JWT naming the user sub for the audience aud, expiring after
// exp (before now for a negative exp), signed with key (HS256).
func Token(t *testing.T, key []byte, sub, aud string, exp time.Duration) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: key}, nil)
	require.NoError(t, err)
	tok, err := jwt.Signed(s).Claims(jwt.Claims{Subject: sub, Audience: jwt.Audience{aud}, Expiry: jwt.NewNumericDate(time.Now().Add(exp))}).Serialize()
	require.NoError(t, err)
	return tok
}

// NoUserLogged checks a log of requests, some of them answered 404: it
// holds none of ids (the users and their key).
func NoUserLogged(t *testing.T, log string, ids ...string) {
	t.Helper()
	require.Contains(t, log, `"status":404`, "the requests were logged")
	for _, s := range ids {
		assert.NotContains(t, log, s)
	}
}
