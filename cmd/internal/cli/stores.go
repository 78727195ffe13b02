package cli

// The programs keep every store: importing the drivers registers them, so
// that store.Open takes "sqlite:<path>" and "postgres://…" specs.
import (
	_ "github.com/aapagui/aapagui/store/postgres"
	_ "github.com/aapagui/aapagui/store/sqlite"
)
