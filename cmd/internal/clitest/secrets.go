package clitest

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/internal/testkit/pgtest"
	"github.com/aapagui/aapagui/internal/testkit/proctest"
)

// URLToken is the token the secret-hiding tests put in URLs' queries.
const URLToken = "tok-4c1d-NOT-FOR-LOGS"

// DeadURL is the base URL (http://127.0.0.1:port) of a loopback port
// that nothing listens on: a call to it is refused at once.
func DeadURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return "http://" + addr
}

// LogHides waits (10 s at most) for the program's log to hold want, then
// checks that it holds none of secrets.
func LogHides(t *testing.T, p *proctest.Proc, want string, secrets ...string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(p.Log(), want) }, 10*time.Second, 20*time.Millisecond, "log: %q", want)
	for _, s := range secrets {
		assert.NotContains(t, p.Log(), s)
	}
}

// StoreSecrets checks that the program (run with args, beside a loopback
// listen address) logs no password of its --store: a key=value DSN and a
// postgres:// URL it cannot reach, each with a password, stop the start
// with an error that shows neither password; and, where a test
// PostgreSQL is at hand, the start-up line (serving, its message) of the
// program running on it names the store without the DSN's password.
func StoreSecrets(t *testing.T, run func(args []string) error, serving string, args ...string) {
	const pw = "pw-93aa-NOT-FOR-LOGS"
	for _, dsn := range []string{
		"host=127.0.0.1 port=1 user=app password=" + pw + " dbname=aap",
		"postgres://app:" + pw + "@127.0.0.1:1/aap?password=" + pw + "&connect_timeout=1",
	} {
		msg := proctest.Refuses(t, run, append([]string{"--store", dsn}, args...)...)
		assert.NotContains(t, msg, pw)
	}

	dsn := pgtest.Schema(t)
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	secret, masked := pw, "password=***"
	if p, ok := u.User.Password(); ok {
		secret, masked = p, ":***@" // the test database's own password
	} else {
		dsn = pgtest.WithParam(dsn, "password", pw) // trusted: the server ignores it
	}
	p := proctest.Start(t, nil, append([]string{"--listen", "127.0.0.1:0", "--store", dsn}, args...)...)
	LogHides(t, p, serving, secret)
	assert.Contains(t, p.LogField("store"), masked)
}
