package userid_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/userid"
)

const bom = "\xef\xbb\xbf"

// idp is an identity provider's signing key, its public key as PEM and a
// self-signed certificate of it.
type idp struct {
	key        *rsa.PrivateKey
	pub, certs string // PEM
	cert       *x509.Certificate
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "idp"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour)}
	cder, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(cder)
	require.NoError(t, err)
	return &idp{key: k, cert: cert,
		pub:   string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})),
		certs: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cder}))}
}

// x509Text is the certificate as `openssl x509 -in c.pem -text` writes it
// (OpenSSL 3.0): its fields in words, then the PEM block.
func (p *idp) x509Text() string {
	var b strings.Builder
	b.WriteString("Certificate:\n    Data:\n        Version: 3 (0x2)\n        Serial Number: 1 (0x1)\n" +
		"        Signature Algorithm: sha256WithRSAEncryption\n        Issuer: CN = idp\n        Validity\n" +
		"            Not Before: Nov 26 11:00:00 2026 GMT\n            Not After : Nov 26 13:00:00 2026 GMT\n" +
		"        Subject: CN = idp\n        Subject Public Key Info:\n            Public Key Algorithm: rsaEncryption\n" +
		"                Public-Key: (2048 bit)\n                Modulus:\n")
	mod := append([]byte{0}, p.key.N.Bytes()...)
	for i := 0; i < len(mod); i += 15 {
		var hex []string
		for _, c := range mod[i:min(i+15, len(mod))] {
			hex = append(hex, fmt.Sprintf("%02x", c))
		}
		b.WriteString("                    " + strings.Join(hex, ":") + ":\n")
	}
	b.WriteString("                Exponent: 65537 (0x10001)\n    Signature Algorithm: sha256WithRSAEncryption\n" +
		"    Signature Value:\n        5d:1c:0a:8e:43:9f\n")
	return b.String() + p.certs
}

// pkcs12Text is the certificate as `openssl pkcs12 -in k.p12 -nokeys`
// writes it (OpenSSL 3.0): bag attributes, subject and issuer lines, then
// the PEM block.
func (p *idp) pkcs12Text() string {
	return "Bag Attributes\n    localKeyID: BE 7E 96 EF 34 B8 21 93 75 6C D0 95 6F 2A 87 40 2A 1C 16 0C \n" +
		"subject=CN = idp\nissuer=CN = idp\n" + p.certs
}

// forged is a token for alice that anyone holding the key file can make
// if the file is taken for an HS256 secret: signed with HS256 over the
// file's text (as the program once read it: trailing line breaks off).
func forged(t *testing.T, file string) string {
	return sign(t, jose.HS256, []byte(strings.TrimRight(file, "\r\n")), "", claims("alice", "bridge"))
}

// TestKeyFileForms: a PEM public key or certificate is read as what it is
// whatever text comes before it — a comment line, a UTF-8 BOM, openssl's
// x509 -text and pkcs12 output, CRLF line ends — and so is a JWKS after a
// BOM: the identity provider's RS256 token verifies, and a token signed
// with HS256 over the file's text (a public text) does not.
func TestKeyFileForms(t *testing.T) {
	p := newIDP(t)
	jwks, err := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Use: "sig"}}})
	require.NoError(t, err)
	for name, file := range map[string]string{
		"comment line":          "# the identity provider's signing key\n" + p.pub,
		"BOM":                   bom + p.pub,
		"BOM and comment":       bom + "# signing key\n" + p.pub,
		"CRLF":                  strings.ReplaceAll("# signing key\n"+p.pub, "\n", "\r\n"),
		"certificate":           "Signing certificate of idp\n" + p.certs,
		"openssl x509 -text":    p.x509Text(),
		"openssl pkcs12 output": p.pkcs12Text(),
		"JWKS after a BOM":      bom + string(jwks) + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			u, err := userid.New(userid.Options{JWTKeyFile: writeFile(t, []byte(file)), JWTAudience: "bridge", Now: func() time.Time { return now }}, false)
			require.NoError(t, err)
			got, err := u.User(request("Authorization", "Bearer "+sign(t, jose.RS256, p.key, "k1", claims("alice", "bridge"))))
			require.NoError(t, err, "the identity provider's token verifies")
			assert.Equal(t, "alice", got)
			_, err = u.User(request("Authorization", "Bearer "+forged(t, file)))
			var inv *userid.InvalidError
			require.ErrorAs(t, err, &inv, "a token signed over the public file is refused")
		})
	}
}

// TestKeyFileRefused: a key file that holds a PEM or JWK marker but does
// not parse, or that is an HS256 secret without its mark (the form read
// as a secret before), stops the start with an error naming the file and
// what was found in it.
func TestKeyFileRefused(t *testing.T) {
	p := newIDP(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	ecDER, err := x509.MarshalECPrivateKey(ec)
	require.NoError(t, err)
	damaged := strings.Replace(p.pub, "MII", "M!I", 1)
	for name, tc := range map[string]struct{ file, want string }{
		"unmarked secret":       {strings.Repeat("s", 40) + "\n", `start the file with "hs256:"`},
		"damaged PEM":           {"# key\n" + damaged, "PEM"},
		"PEM without its END":   {"# key\n" + strings.Split(p.pub, "-----END")[0], "damaged"},
		"damaged beside a good": {damaged + p.certs, "1 of its 2 PEM blocks are damaged"},
		"private key":           {p.certs + string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: ecDER})), "private key"},
		"other PEM":             {string(pem.EncodeToMemory(&pem.Block{Type: "X509 CRL", Bytes: []byte{1}})), "not a public key"},
		"JWK after text":        {"# keys\n" + `{"keys":[]}`, "JWK"},
		"kty in text":           {`the key: "kty":"RSA","n":"abc"` + "\n", "JWK"},
		"broken JWKS":           {`{"keys":[{"kty":"RSA","n":"x"}]`, "JSON"},
		"marked public key":     {"hs256:" + p.pub, "a public key is no secret"},
		"marked short secret":   {"hs256:short\n", "at least 32 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			file := writeFile(t, []byte(tc.file))
			_, err := userid.New(userid.Options{JWTKeyFile: file, JWTAudience: "bridge"}, false)
			require.Error(t, err)
			assert.Contains(t, err.Error(), file, "the error names the file")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestMarkedSecret: a secret marked hs256: verifies its own tokens,
// after a BOM too, with or without a final line break, and the mark is
// not part of the secret.
func TestMarkedSecret(t *testing.T) {
	secret := "a-test-secret-of-forty-bytes-0123456789"
	for name, file := range map[string]string{"plain": "hs256:" + secret, "line break": "hs256:" + secret + "\r\n", "BOM": bom + "hs256:" + secret + "\n"} {
		t.Run(name, func(t *testing.T) {
			u, err := userid.New(userid.Options{JWTKeyFile: writeFile(t, []byte(file)), JWTAudience: "bridge", Now: func() time.Time { return now }}, false)
			require.NoError(t, err)
			got, err := u.User(request("Authorization", "Bearer "+sign(t, jose.HS256, []byte(secret), "", claims("alice", "bridge"))))
			require.NoError(t, err)
			assert.Equal(t, "alice", got)
			_, err = u.User(request("Authorization", "Bearer "+sign(t, jose.HS256, []byte("hs256:"+secret), "", claims("alice", "bridge"))))
			assert.Error(t, err, "the mark is not part of the secret")
		})
	}
}

// TestKeyFileSecretJWK: a JWK or JWKS file holds what an identity
// provider publishes, public keys. A symmetric JWK (kty "oct"), short or
// long, alone or in a set, is not taken for an HS256 secret (those come
// only marked hs256:, 32 bytes or more), and a private RSA or EC JWK —
// as a key generator exports it, or a provider's own signing set —
// stops the start as a PEM private key does, naming why.
func TestKeyFileSecretJWK(t *testing.T) {
	p := newIDP(t)
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	jwk := func(k jose.JSONWebKey) string {
		b, err := json.Marshal(k)
		require.NoError(t, err)
		return string(b)
	}
	rsaPriv := jwk(jose.JSONWebKey{Key: p.key, KeyID: "rsa-2026", Algorithm: "RS256", Use: "sig"})
	ecPriv := jwk(jose.JSONWebKey{Key: ec, KeyID: "ec-2026", Algorithm: "ES256", Use: "sig"})
	rsaPub := jwk(jose.JSONWebKey{Key: &p.key.PublicKey, KeyID: "rsa-2026", Algorithm: "RS256", Use: "sig"})
	// A private JWK that leaves out the optional CRT values: d alone.
	var dOnly map[string]any
	require.NoError(t, json.Unmarshal([]byte(rsaPriv), &dOnly))
	for _, f := range []string{"p", "q", "dp", "dq", "qi"} {
		delete(dOnly, f)
	}
	dOnlyJSON, err := json.Marshal(dOnly)
	require.NoError(t, err)
	long := `{"kty":"oct","kid":"hmac-1","use":"sig","alg":"HS256","k":"` + strings.Repeat("c2VjcmV0", 8) + `"}`
	for name, tc := range map[string]struct{ file, want string }{
		"short oct":              {`{"kty":"oct","k":"AA"}`, `kty "oct"`},
		"long oct":               {long + "\n", `starts with "hs256:"`},
		"oct in a set":           {`{"keys":[` + rsaPub + `,` + long + `]}`, `key "hmac-1" is a symmetric JWK`},
		"private RSA JWK":        {rsaPriv + "\n", `key "rsa-2026" is a private key`},
		"private EC JWK":         {ecPriv, `key "ec-2026" is a private key`},
		"provider's signing set": {`{"keys":[` + rsaPriv + `,` + ecPriv + `]}`, "private key"},
		"private, d alone":       {string(dOnlyJSON), "private key"},
		"private encryption key": {`{"keys":[` + rsaPub + `,` + strings.Replace(rsaPriv, `"use":"sig"`, `"use":"enc"`, 1) + `]}`, "private key"},
	} {
		t.Run(name, func(t *testing.T) {
			file := writeFile(t, []byte(tc.file))
			_, err := userid.New(userid.Options{JWTKeyFile: file, JWTAudience: "bridge"}, false)
			require.Error(t, err, "the start stops")
			assert.Contains(t, err.Error(), file, "the error names the file")
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}
