package store_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/aapagui/aapagui/store"
	_ "github.com/aapagui/aapagui/store/postgres"
	_ "github.com/aapagui/aapagui/store/sqlite"
	"github.com/aapagui/aapagui/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return store.NewMemory() })
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		spec    string
		wantErr string
	}{
		{name: "memory", spec: "memory:"},
		{name: "sqlite file", spec: "sqlite:" + filepath.Join(t.TempDir(), "a.db")},
		{name: "sqlite without a path", spec: "sqlite:", wantErr: "needs a file path"},
		{name: "sqlite in memory", spec: "sqlite::memory:", wantErr: "not a file"},
		{name: "sqlite path with a query", spec: "sqlite:a.db?mode=ro", wantErr: "may not contain"},
		{name: "postgres without a URL", spec: "postgres:db", wantErr: "needs a URL"},
		{name: "unknown kind, password hidden", spec: "mysql://u:secret@h/db?password=secret&tls=true", wantErr: "mysql://u:***@h/db?password=***&tls=***"},
		{name: "key=value DSN, password hidden", spec: "host=db user=u password=secret", wantErr: `store "host=db user=u password=***": unknown kind`},
		{name: "no kind", spec: "", wantErr: "unknown kind"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := store.Open(tt.spec)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.NotContains(t, err.Error(), "secret", "the error shows no password")
				return
			}
			require.NoError(t, err)
			require.NoError(t, s.Ping(context.Background()))
			require.NoError(t, s.Close())
		})
	}
}
