package store

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A scheme of a driver the program did not import names the import; the
// store tests import both drivers, so the error is checked here, before
// the lookup.
func TestOpenWithoutTheDriver(t *testing.T) {
	tests := []struct {
		name, scheme, spec, want string
	}{
		{name: "sqlite", scheme: "sqlite", spec: "sqlite:a.db", want: `store "sqlite:a.db": no sqlite driver in this program (import _ "github.com/aapagui/aapagui/store/sqlite")`},
		{name: "postgres, password hidden", scheme: "postgres", spec: "postgres://u:secret@h/db",
			want: `store "postgres://u:***@h/db": no postgres driver in this program (import _ "github.com/aapagui/aapagui/store/postgres")`},
		{name: "postgresql", scheme: "postgresql", spec: "postgresql://h/db", want: `import _ "github.com/aapagui/aapagui/store/postgres"`},
		{name: "unknown kind", scheme: "mysql", spec: "mysql://h/db", want: "unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.ErrorContains(t, unregistered(tt.scheme, tt.spec), tt.want)
		})
	}
}

func TestRegisterTwicePanics(t *testing.T) {
	open := func(string) (Store, error) { return NewMemory(), nil }
	Register("test-twice", open)
	t.Cleanup(func() {
		driversMu.Lock()
		delete(drivers, "test-twice")
		driversMu.Unlock()
	})
	require.Panics(t, func() { Register("test-twice", open) })
	require.Panics(t, func() { Register("test-nil", nil) })
}
