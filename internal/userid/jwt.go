package userid

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// leeway is the clock skew allowed on "exp" and "nbf".
const leeway = 30 * time.Second

// maxToken bounds the token a request may carry, in bytes.
const maxToken = 16 << 10

// verifier checks user tokens against the keys of a key file.
type verifier struct {
	header   string // where the token is
	keys     []key
	expected jwt.Expected
	now      func() time.Time
}

// key is one verification key and the one algorithm it verifies.
type key struct {
	id  string
	alg jose.SignatureAlgorithm
	key any
}

var algorithms = []jose.SignatureAlgorithm{jose.HS256, jose.RS256, jose.ES256}

func newVerifier(o Options, apiKeys bool) (*verifier, error) {
	header := o.JWTHeader
	if header == "" {
		header = "Authorization"
	}
	if err := checkHeaderName(header); err != nil {
		return nil, err
	}
	header = http.CanonicalHeaderKey(header)
	if apiKeys && header == "Authorization" {
		return nil, errors.New("user scope: API keys and user tokens would both be read from Authorization: name another header for the token")
	}
	if o.JWTAudience == "" {
		return nil, errors.New("user scope: a JWT key file needs the audience the tokens must be made for")
	}
	data, err := os.ReadFile(o.JWTKeyFile)
	if err != nil {
		return nil, fmt.Errorf("user scope: %w", err)
	}
	keys, err := parseKeys(data)
	if err != nil {
		return nil, fmt.Errorf("user scope: %s: %w", o.JWTKeyFile, err)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return &verifier{header: header, keys: keys, now: now,
		expected: jwt.Expected{AnyAudience: jwt.Audience{o.JWTAudience}, Issuer: o.JWTIssuer}}, nil
}

// HS256Prefix marks a key file that holds an HS256 secret: the file
// starts with it and the secret follows (a final line break is not part
// of the secret). A key file is read as a secret only when so marked.
const HS256Prefix = "hs256:"

// utf8BOM is the byte-order mark some editors put at the start of a file.
var utf8BOM = []byte("\xef\xbb\xbf")

// parseKeys reads a key file: an HS256 secret marked with HS256Prefix, a
// JWKS or a JWK (the whole file, a JSON object), or PEM public keys and
// certificates (text before and between the blocks is skipped, as in
// openssl's -text and pkcs12 output). A file is never taken for a secret
// by elimination: what holds a PEM or JWK marker but does not parse, and
// what is none of these, is an error.
func parseKeys(data []byte) ([]key, error) {
	data = bytes.TrimPrefix(data, utf8BOM)
	if secret, ok := bytes.CutPrefix(data, []byte(HS256Prefix)); ok {
		return parseSecret(bytes.TrimRight(secret, "\r\n"))
	}
	trimmed := bytes.TrimSpace(data)
	switch {
	case bytes.HasPrefix(trimmed, []byte("{")):
		keys, err := parseJWKs(trimmed)
		if err != nil {
			return nil, fmt.Errorf("it holds JSON (a JWK or JWKS?) that does not give a key: %w", err)
		}
		return keys, nil
	case bytes.Contains(data, pemMarker):
		keys, err := parsePEM(data)
		if err != nil {
			return nil, fmt.Errorf("it holds PEM (%s) that does not give a key: %w", pemMarker, err)
		}
		return keys, nil
	case bytes.Contains(data, []byte(`"kty"`)) || bytes.Contains(data, []byte("{")):
		return nil, errors.New(`it holds JSON ("kty" or "{") but not as a JWK or JWKS, which must be the whole file`)
	}
	return nil, fmt.Errorf("it is not a JWKS, a JWK or PEM; if it is an HS256 secret, mark it as one: start the file with %q, the secret right after it", HS256Prefix)
}

// pemMarker begins a PEM block.
var pemMarker = []byte("-----BEGIN")

// parseSecret takes an HS256 secret, refusing one that is a public key:
// anyone could sign tokens with it.
func parseSecret(secret []byte) ([]key, error) {
	if bytes.Contains(secret, pemMarker) || bytes.Contains(secret, []byte(`"kty"`)) {
		return nil, errors.New("the HS256 secret holds a PEM block or a JWK: a public key is no secret (leave out the " + HS256Prefix + " mark to read the key)")
	}
	if len(secret) < 32 {
		return nil, errors.New("an HS256 secret must be at least 32 bytes")
	}
	return []key{{alg: jose.HS256, key: secret}}, nil
}

// parseJWKs reads a JWKS or a single JWK. The file holds public keys
// only, as an identity provider publishes them: a private key (a JWK
// with "d") or a symmetric one (kty "oct") stops the start, like a PEM
// private key, and an HS256 secret comes only by the hs256: mark.
func parseJWKs(data []byte) ([]key, error) {
	raws, err := jwkObjects(data)
	if err != nil {
		return nil, err
	}
	var keys []key
	for _, raw := range raws {
		var peek struct {
			Kid string          `json:"kid"`
			D   json.RawMessage `json:"d"`
		}
		if err := json.Unmarshal(raw, &peek); err != nil {
			return nil, fmt.Errorf("not a JWK: %w", err)
		}
		if peek.D != nil {
			return nil, fmt.Errorf("key %q is a private key (it has \"d\"), which does not belong here: give its public JWK (without \"d\", \"p\", \"q\", \"dp\", \"dq\", \"qi\")", peek.Kid)
		}
		var k jose.JSONWebKey
		if err := json.Unmarshal(raw, &k); err != nil {
			return nil, fmt.Errorf("key %q is not a JWK: %w", peek.Kid, err)
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		alg, err := algorithmOf(k.Key, k.Algorithm)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k.KeyID, err)
		}
		if alg == jose.HS256 {
			return nil, fmt.Errorf("key %q is a symmetric JWK (kty \"oct\"), a secret: give an HS256 secret as a file of its own that starts with %q, the secret (32 bytes or more) right after it", k.KeyID, HS256Prefix)
		}
		keys = append(keys, key{id: k.KeyID, alg: alg, key: k.Key})
	}
	if len(keys) == 0 {
		return nil, errors.New("no signing key")
	}
	return keys, nil
}

// jwkObjects is the keys of a JWKS, or the one JWK the file is.
func jwkObjects(data []byte) ([]json.RawMessage, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(data, &set); err != nil {
		return nil, fmt.Errorf("not a JWKS or a JWK: %w", err)
	}
	if len(set.Keys) == 0 {
		return []json.RawMessage{data}, nil
	}
	return set.Keys, nil
}

// parsePEM reads every PEM block of data, a public key or a certificate
// each; text around the blocks is skipped, but every block must parse
// (pem.Decode would pass over a damaged one).
func parsePEM(data []byte) ([]key, error) {
	var keys []key
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		pub, err := pemPublicKey(block)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d (%s): %w", len(keys)+1, block.Type, err)
		}
		alg, err := algorithmOf(pub, "")
		if err != nil {
			return nil, fmt.Errorf("PEM block %d (%s): %w", len(keys)+1, block.Type, err)
		}
		keys = append(keys, key{alg: alg, key: pub})
	}
	if n := bytes.Count(data, pemMarker); n != len(keys) {
		return nil, fmt.Errorf("%d of its %d PEM blocks are damaged (a BEGIN line without its END line, or base64 that does not decode)", n-len(keys), n)
	}
	return keys, nil
}

// pemPublicKey is the public key of a PEM block.
func pemPublicKey(block *pem.Block) (any, error) {
	switch {
	case block.Type == "CERTIFICATE":
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, err
		}
		return cert.PublicKey, nil
	case block.Type == "RSA PUBLIC KEY":
		return x509.ParsePKCS1PublicKey(block.Bytes)
	case block.Type == "PUBLIC KEY":
		return x509.ParsePKIXPublicKey(block.Bytes)
	case strings.HasSuffix(block.Type, "PRIVATE KEY"):
		return nil, errors.New("a private key does not belong here: give its public key or certificate")
	}
	return nil, errors.New("not a public key (PUBLIC KEY, RSA PUBLIC KEY) or a certificate (CERTIFICATE)")
}

// algorithmOf is the one algorithm a key verifies: HS256, RS256 or ES256
// (a JWK's own "alg" must be that one).
func algorithmOf(k any, declared string) (jose.SignatureAlgorithm, error) {
	var alg jose.SignatureAlgorithm
	switch k := k.(type) {
	case []byte:
		alg = jose.HS256
	case *rsa.PublicKey:
		if k.N.BitLen() < 2048 {
			return "", errors.New("an RSA key must have at least 2048 bits")
		}
		alg = jose.RS256
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return "", errors.New("an EC key must be on P-256 (ES256)")
		}
		alg = jose.ES256
	default:
		return "", fmt.Errorf("a %T key is not supported (HS256, RS256 and ES256 are)", k)
	}
	if declared != "" && declared != string(alg) {
		return "", fmt.Errorf("algorithm %s is not supported for this key (only %s is)", declared, alg)
	}
	return alg, nil
}

// user verifies the request's token and returns its subject.
func (v *verifier) user(r *http.Request) (string, error) {
	raw := strings.TrimSpace(r.Header.Get(v.header))
	if scheme, tok, ok := strings.Cut(raw, " "); ok && strings.EqualFold(scheme, "Bearer") {
		raw = strings.TrimSpace(tok)
	} else if v.header == "Authorization" {
		raw = ""
	}
	if raw == "" {
		return "", ErrMissing
	}
	if len(raw) > maxToken {
		return "", &InvalidError{Reason: "the user token is too long"}
	}
	sub, err := v.verify(raw)
	if err != nil {
		return "", &InvalidError{Reason: "the user token is not valid: " + err.Error()}
	}
	return sub, checkUser("token's subject", sub)
}

func (v *verifier) verify(raw string) (string, error) {
	tok, err := jwt.ParseSigned(raw, algorithms)
	if err != nil {
		return "", errors.New("it is not a signed JWT of HS256, RS256 or ES256")
	}
	if len(tok.Headers) != 1 {
		return "", errors.New("it must have one signature")
	}
	k, err := v.keyFor(tok.Headers[0])
	if err != nil {
		return "", err
	}
	var claims jwt.Claims
	if err := tok.Claims(k.key, &claims); err != nil {
		return "", errors.New("its signature does not verify")
	}
	if claims.Expiry == nil {
		return "", errors.New("it has no expiry (exp)")
	}
	if err := claims.ValidateWithLeeway(v.expected.WithTime(v.now()), leeway); err != nil {
		return "", claimError(err)
	}
	if claims.Subject == "" {
		return "", errors.New("it names no user (sub)")
	}
	return claims.Subject, nil
}

// keyFor picks the key of the token's "kid" (the file's only key, when it
// has one) whose algorithm is the token's.
func (v *verifier) keyFor(h jose.Header) (key, error) {
	for _, k := range v.keys {
		if (len(v.keys) == 1 || k.id == h.KeyID) && string(k.alg) == h.Algorithm {
			return k, nil
		}
	}
	return key{}, errors.New("no key of the key file verifies it (its kid and alg)")
}

func claimError(err error) error {
	switch {
	case errors.Is(err, jwt.ErrExpired):
		return errors.New("it has expired")
	case errors.Is(err, jwt.ErrNotValidYet), errors.Is(err, jwt.ErrIssuedInTheFuture):
		return errors.New("it is not valid yet")
	case errors.Is(err, jwt.ErrInvalidAudience):
		return errors.New("it is not made for this server (aud)")
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return errors.New("its issuer (iss) is not the one expected")
	}
	return err
}
