package sqlite

import (
	"context"
	"database/sql"
	"slices"
)

// stmt returns query prepared on db (the read or the write pool), from a
// cache: preparing costs as much as running most of the store's
// statements. nil if it is not prepared (yet): the caller runs the query
// unprepared. Write statements are prepared by the writer between
// transactions (the write pool's one connection is busy during one).
func (s *Store) stmt(ctx context.Context, db *sql.DB, pool, query string) *sql.Stmt {
	key := pool + "\x00" + query
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[key]; ok {
		return st
	}
	if s.noStmts {
		return nil
	}
	if pool == "w" {
		if !slices.Contains(s.toPrepare, query) {
			s.toPrepare = append(s.toPrepare, query)
		}
		return nil
	}
	st, err := db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[key] = st
	return st
}

// prepareWrites prepares the write statements seen since the last call;
// the writer calls it between transactions.
func (s *Store) prepareWrites() {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if s.noStmts {
		return
	}
	for _, q := range s.toPrepare {
		st, err := s.w.PrepareContext(context.Background(), q)
		if err != nil {
			continue
		}
		if s.stmts == nil {
			s.stmts = map[string]*sql.Stmt{}
		}
		s.stmts["w\x00"+q] = st
	}
	s.toPrepare = nil
}

func (s *Store) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, s.r, "r", query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.r.QueryRowContext(ctx, query, args...)
}

func (s *Store) readRows(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmt(ctx, s.r, "r", query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.r.QueryContext(ctx, query, args...)
}

func (s *Store) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := s.stmt(ctx, s.w, "w", query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

func (s *Store) txRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, s.w, "w", query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}
