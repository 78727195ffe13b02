package clitest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
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

	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// UserKeyFile starts the program with --user-jwt naming an identity
// provider's PEM public key with a comment line before it (as many
// providers publish theirs) and checks GET path (a route of a user's
// conversations): the provider's RS256 token is answered 200, and a token
// signed with HS256 over the file's public text is a 401. Then run
// refuses an HS256 secret file without its hs256: mark, saying how to
// mark it.
func UserKeyFile(t *testing.T, run func(args []string) error, path string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	require.NoError(t, err)
	text := "# signing key of the identity provider\n" + string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
	file := filepath.Join(t.TempDir(), "idp.pem")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))

	p := proctest.Start(t, nil, "--listen", "127.0.0.1:0", "--store", "memory:", "--user-jwt", file, "--user-jwt-audience", "aap")
	get := func(tok string) int {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, p.URL()+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	assert.Equal(t, http.StatusOK, get(signToken(t, jose.RS256, k)), "the identity provider's token")
	assert.Equal(t, http.StatusUnauthorized, get(signToken(t, jose.HS256, []byte(strings.TrimRight(text, "\n")))),
		"a token signed with the public key file's text as an HS256 secret")

	secret := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secret, []byte(strings.Repeat("s", 40)+"\n"), 0o600))
	msg := proctest.Refuses(t, run, "--user-jwt", secret, "--user-jwt-audience", "aap")
	assert.Contains(t, msg, secret)
	assert.Contains(t, msg, `start the file with "hs256:"`)
}

// signToken is a token naming victim for the audience aap, signed with key.
func signToken(t *testing.T, alg jose.SignatureAlgorithm, key any) string {
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, nil)
	require.NoError(t, err)
	tok, err := jwt.Signed(s).Claims(jwt.Claims{Subject: "victim", Audience: jwt.Audience{"aap"}, Expiry: jwt.NewNumericDate(time.Now().Add(time.Hour))}).Serialize()
	require.NoError(t, err)
	return tok
}
