package userid_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/userid"
)

var now = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(p, data, 0o600))
	return p
}

func sign(t *testing.T, alg jose.SignatureAlgorithm, k any, kid string, c jwt.Claims) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: k}, opts)
	require.NoError(t, err)
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	require.NoError(t, err)
	return tok
}

func claims(sub string, aud ...string) jwt.Claims {
	return jwt.Claims{Subject: sub, Audience: aud, Expiry: jwt.NewNumericDate(now.Add(time.Hour)), IssuedAt: jwt.NewNumericDate(now.Add(-time.Minute))}
}

func request(header, value string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://x/", nil)
	if value != "" {
		r.Header.Set(header, value)
	}
	return r
}

func TestHeader(t *testing.T) {
	u, err := userid.New(userid.Options{Header: "x-user-id"}, true)
	require.NoError(t, err)
	got, err := u.User(request("X-User-Id", "alice"))
	require.NoError(t, err)
	assert.Equal(t, "alice", got)
	_, err = u.User(request("X-User-Id", ""))
	assert.ErrorIs(t, err, userid.ErrMissing)
	for name, v := range map[string]string{"too long": strings.Repeat("a", userid.MaxUserID+1), "control": "al\x01ice", "not UTF-8": "al\xffice"} {
		_, err = u.User(request("X-User-Id", v))
		var inv *userid.InvalidError
		assert.ErrorAs(t, err, &inv, name)
		assert.NotContains(t, err.Error(), v, "the message never holds the value")
	}
	r := request("X-User-Id", "alice")
	r.Header.Add("X-User-Id", "bob")
	_, err = u.User(r)
	assert.ErrorContains(t, err, "more than once")

	var none *userid.Users
	got, err = none.User(request("X-User-Id", "alice"))
	require.NoError(t, err)
	assert.Empty(t, got, "no user scope: no user, whatever the request says")
}

func TestScope(t *testing.T) {
	assert.Equal(t, "k1", userid.Scope("k1", ""))
	a, b := userid.Scope("k1", "alice"), userid.Scope("k1", "bob")
	assert.NotEqual(t, a, b)
	assert.NotEqual(t, a, userid.Scope("k2", "alice"), "the same user under two keys is two owners")
	assert.Equal(t, a, userid.Scope("k1", "alice"))
	assert.NotContains(t, a, "alice", "the store never holds the user id")
}

func TestOptionsRefused(t *testing.T) {
	secret := writeFile(t, []byte("hs256:"+strings.Repeat("s", 40)))
	for name, tc := range map[string]struct {
		o    userid.Options
		keys bool
		want string
	}{
		"both":                {userid.Options{Header: "X-User", JWTKeyFile: secret, JWTAudience: "a"}, false, "not both"},
		"authorization":       {userid.Options{Header: "Authorization"}, false, "Authorization"},
		"bad header name":     {userid.Options{Header: "X User"}, false, "not a header name"},
		"token beside keys":   {userid.Options{JWTKeyFile: secret, JWTAudience: "a"}, true, "another header"},
		"no audience":         {userid.Options{JWTKeyFile: secret}, false, "audience"},
		"audience alone":      {userid.Options{JWTAudience: "a"}, false, "need a JWT key file"},
		"missing file":        {userid.Options{JWTKeyFile: filepath.Join(t.TempDir(), "none"), JWTAudience: "a"}, false, "no such file"},
		"short secret":        {userid.Options{JWTKeyFile: writeFile(t, []byte("hs256:short\n")), JWTAudience: "a"}, false, "at least 32 bytes"},
		"JWK with other algs": {userid.Options{JWTKeyFile: writeFile(t, []byte(`{"kty":"oct","k":"c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI","alg":"HS512"}`)), JWTAudience: "a"}, false, "HS512"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := userid.New(tc.o, tc.keys)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestJWT checks tokens of each algorithm against a key made here:
// valid, expired, not yet valid, for another audience, signed by another
// key, unsigned, and without a subject.
func TestJWT(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	otherEC, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	secret := []byte("a-test-secret-of-forty-bytes-0123456789")
	der, err := x509.MarshalPKIXPublicKey(&rsaKey.PublicKey)
	require.NoError(t, err)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &ecKey.PublicKey, KeyID: "ec1", Use: "sig"},
		{Key: &rsaKey.PublicKey, KeyID: "rsa1", Use: "sig"},
	}})
	require.NoError(t, err)
	files := map[string]string{
		"HS256 secret": writeFile(t, append([]byte("hs256:"+string(secret)), '\n')),
		"RS256 PEM":    writeFile(t, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		"JWKS":         writeFile(t, jwks),
	}
	valid := map[string]func(c jwt.Claims) string{
		"HS256 secret": func(c jwt.Claims) string { return sign(t, jose.HS256, secret, "", c) },
		"RS256 PEM":    func(c jwt.Claims) string { return sign(t, jose.RS256, rsaKey, "", c) },
		"JWKS":         func(c jwt.Claims) string { return sign(t, jose.ES256, ecKey, "ec1", c) },
	}
	for name, file := range files {
		t.Run(name, func(t *testing.T) {
			u, err := userid.New(userid.Options{JWTKeyFile: file, JWTHeader: "X-User-Token", JWTAudience: "bridge", Now: func() time.Time { return now }}, true)
			require.NoError(t, err)
			user := func(tok string) (string, error) { return u.User(request("X-User-Token", "Bearer "+tok)) }

			got, err := user(valid[name](claims("alice", "bridge")))
			require.NoError(t, err)
			assert.Equal(t, "alice", got)
			got, err = u.User(request("X-User-Token", valid[name](claims("bob", "other", "bridge"))))
			require.NoError(t, err, "a bare token in a header of its own")
			assert.Equal(t, "bob", got)

			expired := claims("alice", "bridge")
			expired.Expiry = jwt.NewNumericDate(now.Add(-time.Minute))
			early := claims("alice", "bridge")
			early.NotBefore = jwt.NewNumericDate(now.Add(time.Hour))
			noExp := claims("alice", "bridge")
			noExp.Expiry = nil
			for what, tc := range map[string]struct{ tok, want string }{
				"expired":        {valid[name](expired), "expired"},
				"not yet valid":  {valid[name](early), "not valid yet"},
				"wrong audience": {valid[name](claims("alice", "other")), "aud"},
				"no audience":    {valid[name](claims("alice")), "aud"},
				"no expiry":      {valid[name](noExp), "exp"},
				"no subject":     {valid[name](claims("", "bridge")), "sub"},
				"another key":    {sign(t, jose.ES256, otherEC, "ec1", claims("alice", "bridge")), ""},
				"another secret": {sign(t, jose.HS256, []byte("another-secret-of-forty-bytes-987654321"), "", claims("alice", "bridge")), ""},
				"unsigned":       {unsigned(claims("alice", "bridge")), "not a signed JWT"},
				"garbage":        {"not.a.token", "not a signed JWT"},
			} {
				_, err := user(tc.tok)
				var inv *userid.InvalidError
				require.True(t, errors.As(err, &inv), "%s: %v", what, err)
				assert.Contains(t, err.Error(), tc.want, what)
			}
			_, err = u.User(request("X-User-Token", ""))
			assert.ErrorIs(t, err, userid.ErrMissing)
		})
	}
}

// unsigned is a token with "alg":"none".
func unsigned(c jwt.Claims) string {
	b, _ := json.Marshal(c)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(b) + "."
}

// TestJWTInAuthorization reads the token as a bearer in Authorization,
// where the server has no API keys.
func TestJWTInAuthorization(t *testing.T) {
	secret := []byte("a-test-secret-of-forty-bytes-0123456789")
	u, err := userid.New(userid.Options{JWTKeyFile: writeFile(t, []byte("hs256:"+string(secret))), JWTAudience: "bridge", Now: func() time.Time { return now }}, false)
	require.NoError(t, err)
	tok := sign(t, jose.HS256, secret, "", claims("carol", "bridge"))
	got, err := u.User(request("Authorization", "Bearer "+tok))
	require.NoError(t, err)
	assert.Equal(t, "carol", got)
	_, err = u.User(request("Authorization", tok))
	assert.ErrorIs(t, err, userid.ErrMissing, "Authorization needs the Bearer scheme")
	assert.Equal(t, "JWT in Authorization", u.Describe())
}

// TestUserReadsAsItShows: a user id, from the header or a token's sub,
// holding a character that shows as nothing or reorders the text
// (zero-width, bidi) or U+FFFD is refused, naming the code point and not
// the id: "al\u200bice" is never a second alice.
func TestUserReadsAsItShows(t *testing.T) {
	u, err := userid.New(userid.Options{Header: "X-User-Id"}, true)
	require.NoError(t, err)
	secret := []byte("a-test-secret-of-forty-bytes-0123456789")
	tokens, err := userid.New(userid.Options{JWTKeyFile: writeFile(t, []byte("hs256:"+string(secret))), JWTAudience: "bridge", Now: func() time.Time { return now }}, false)
	require.NoError(t, err)
	for user, want := range map[string]string{"al\u200bice": "U+200B", "\u202eecila": "U+202E", "alice\u2066": "U+2066", "alice\ufffd": "U+FFFD"} {
		for where, got := range map[string]func() (string, error){
			"header": func() (string, error) { return u.User(request("X-User-Id", user)) },
			"token": func() (string, error) {
				return tokens.User(request("Authorization", "Bearer "+sign(t, jose.HS256, secret, "", claims(user, "bridge"))))
			},
		} {
			_, err := got()
			var inv *userid.InvalidError
			require.ErrorAs(t, err, &inv, "%s %q", where, user)
			assert.Contains(t, err.Error(), want, where)
			assert.NotContains(t, err.Error(), "lice", where)
		}
	}
}
